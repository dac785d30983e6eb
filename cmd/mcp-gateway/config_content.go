package main

// The declared resources and prompts: YAML-only lists of objects, whose
// file sources are read when the file is read, so a missing file stops
// the gateway at once with the entry's key path.

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/gateway"
)

// resourceSetting is one resources entry.
type resourceSetting struct {
	URI, URITemplate, Name, Title, Description, MIMEType string
	Text, Blob, File                                     string
	hasText                                              bool
	Values                                               map[string][]string
	Operation                                            string
	Arguments                                            map[string]any
}

var resourceFields = []listField[resourceSetting]{
	{key: "uri", usage: "the resource's URI (or uri_template)", set: str(func(o *resourceSetting) *string { return &o.URI })},
	{key: "uri_template", usage: "an RFC 6570 template; {name} matches one path segment, {+name} more",
		set: str(func(o *resourceSetting) *string { return &o.URITemplate })},
	{key: "name", required: true, usage: "the resource's name", set: str(func(o *resourceSetting) *string { return &o.Name })},
	{key: "title", usage: "display title", set: str(func(o *resourceSetting) *string { return &o.Title })},
	{key: "description", usage: "what it holds", set: str(func(o *resourceSetting) *string { return &o.Description })},
	{key: "mime_type", usage: "its media type (default text/plain for text, application/octet-stream for bytes)",
		set: str(func(o *resourceSetting) *string { return &o.MIMEType })},
	{key: "text", usage: "the content: a Go text/template over the template's variables ({{.id}})",
		set: func(o *resourceSetting, raw any) error {
			o.hasText = true
			return str(func(o *resourceSetting) *string { return &o.Text })(o, raw)
		}},
	{key: "blob", usage: "the content as base64 bytes", set: str(func(o *resourceSetting) *string { return &o.Blob })},
	{key: "file", usage: "the content from a file, read at start (text when mime_type is text/*, JSON or absent and the bytes are UTF-8)",
		set: str(func(o *resourceSetting) *string { return &o.File })},
	{key: "values", usage: "completion candidates per template variable: {id: [a, b]}", set: listMap(func(o *resourceSetting) *map[string][]string { return &o.Values })},
	{key: "operation", usage: "the content is this tool's live result (template variables become its arguments); subscribers are told when it changes",
		set: str(func(o *resourceSetting) *string { return &o.Operation })},
	{key: "arguments", usage: "fixed arguments of the operation: {name: value}", set: anyMap(func(o *resourceSetting) *map[string]any { return &o.Arguments })},
}

// declared turns the setting into the gateway's form, reading its file.
func (r resourceSetting) declared(at string) (gateway.DeclaredResource, error) {
	d := gateway.DeclaredResource{URI: r.URI, URITemplate: r.URITemplate, Name: r.Name, Title: r.Title,
		Description: r.Description, MIMEType: r.MIMEType, Values: r.Values, Operation: r.Operation, Arguments: r.Arguments}
	if len(r.Arguments) > 0 && r.Operation == "" {
		return d, &pathError{path: at + ".arguments", reason: "are the operation's: give operation too"}
	}
	sources := 0
	if r.Operation != "" {
		sources++
	}
	if r.hasText {
		sources++
		text := r.Text
		d.Text = &text
	}
	if r.Blob != "" {
		sources++
		b, err := base64.StdEncoding.DecodeString(r.Blob)
		if err != nil {
			return d, &pathError{path: at + ".blob", reason: "must be base64"}
		}
		d.Blob = b
	}
	if r.File != "" {
		sources++
		b, err := os.ReadFile(r.File)
		if err != nil {
			return d, &pathError{path: at + ".file", reason: "cannot read: " + err.Error()}
		}
		if isTextual(r.MIMEType, b) {
			text := string(b)
			d.Text = &text
		} else {
			d.Blob = b
		}
	}
	if sources != 1 {
		return d, &pathError{path: at, reason: "needs exactly one of text, blob, file or operation"}
	}
	return d, nil
}

func isTextual(mime string, b []byte) bool {
	switch {
	case mime == "":
		return utf8.Valid(b)
	case strings.HasPrefix(mime, "text/"), strings.Contains(mime, "json"), strings.Contains(mime, "xml"), strings.Contains(mime, "yaml"):
		return utf8.Valid(b)
	}
	return false
}

// promptSetting is one prompts entry.
type promptSetting struct {
	Name, Title, Description string
	Arguments                []promptArgSetting
	Messages                 []promptMessageSetting
}

type promptArgSetting struct {
	Name, Description string
	Required          bool
	Values            []string
	ValuesFrom        *valuesFromSetting
}

type valuesFromSetting struct{ Operation, Field string }

type promptMessageSetting struct {
	Role, Text, Resource string
	hasText              bool
	Image, Audio         *mediaSetting
	Operation            *promptOperationSetting
}

type promptOperationSetting struct {
	Name      string
	Arguments map[string]any
}

var valuesFromFields = []listField[valuesFromSetting]{
	{key: "operation", required: true, usage: "the tool whose result lists the candidates", set: str(func(o *valuesFromSetting) *string { return &o.Operation })},
	{key: "field", required: true, usage: "the field of each item that is a candidate", set: str(func(o *valuesFromSetting) *string { return &o.Field })},
}

var promptOperationFields = []listField[promptOperationSetting]{
	{key: "name", required: true, usage: "the tool", set: str(func(o *promptOperationSetting) *string { return &o.Name })},
	{key: "arguments", usage: "its arguments: {name: text/template over the prompt's arguments}", set: anyMap(func(o *promptOperationSetting) *map[string]any { return &o.Arguments })},
}

type mediaSetting struct{ Data, File, MIMEType string }

var promptArgFields = []listField[promptArgSetting]{
	{key: "name", required: true, usage: "the argument's name", set: str(func(o *promptArgSetting) *string { return &o.Name })},
	{key: "description", usage: "what it is", set: str(func(o *promptArgSetting) *string { return &o.Description })},
	{key: "required", usage: "prompts/get without it is an error", set: boolean(func(o *promptArgSetting) *bool { return &o.Required })},
	{key: "values", usage: "completion candidates: a list, or {operation, field} to take them from a tool's live result",
		set: func(o *promptArgSetting, raw any) error {
			if _, ok := raw.(map[string]any); ok {
				return object(valuesFromFields, func(o *promptArgSetting) **valuesFromSetting { return &o.ValuesFrom })(o, raw)
			}
			return list(func(o *promptArgSetting) *[]string { return &o.Values })(o, raw)
		}},
}

var mediaFields = []listField[mediaSetting]{
	{key: "data", usage: "base64 bytes", set: str(func(o *mediaSetting) *string { return &o.Data })},
	{key: "file", usage: "a file, read at start", set: str(func(o *mediaSetting) *string { return &o.File })},
	{key: "mime_type", required: true, usage: "its media type", set: str(func(o *mediaSetting) *string { return &o.MIMEType })},
}

var promptMessageFields = []listField[promptMessageSetting]{
	{key: "role", required: true, usage: "user or assistant", set: oneOf([]string{"user", "assistant"}, func(o *promptMessageSetting) *string { return &o.Role })},
	{key: "text", usage: "a Go text/template over the arguments ({{.name}})",
		set: func(o *promptMessageSetting, raw any) error {
			o.hasText = true
			return str(func(o *promptMessageSetting) *string { return &o.Text })(o, raw)
		}},
	{key: "resource", usage: "a resource URI (itself a template over the arguments), embedded as read at render time",
		set: str(func(o *promptMessageSetting) *string { return &o.Resource })},
	{key: "image", usage: "{data | file, mime_type}", set: object(mediaFields, func(o *promptMessageSetting) **mediaSetting { return &o.Image })},
	{key: "audio", usage: "{data | file, mime_type}", set: object(mediaFields, func(o *promptMessageSetting) **mediaSetting { return &o.Audio })},
	{key: "operation", usage: "{name, arguments}: a tool whose live result is embedded", set: object(promptOperationFields, func(o *promptMessageSetting) **promptOperationSetting { return &o.Operation })},
}

var promptFields = []listField[promptSetting]{
	{key: "name", required: true, usage: "the prompt's name", set: str(func(o *promptSetting) *string { return &o.Name })},
	{key: "title", usage: "display title", set: str(func(o *promptSetting) *string { return &o.Title })},
	{key: "description", usage: "what it is for", set: str(func(o *promptSetting) *string { return &o.Description })},
	{key: "arguments", usage: "[{name, description, required, values}]",
		set: func(o *promptSetting, raw any) error {
			items, err := decodeList("arguments", raw, promptArgFields)
			o.Arguments = items
			return err
		}},
	{key: "messages", required: true, usage: "[{role, text | resource | image | audio | operation}]",
		set: func(o *promptSetting, raw any) error {
			items, err := decodeList("messages", raw, promptMessageFields)
			o.Messages = items
			return err
		}},
}

// declared turns the setting into the gateway's form, reading its files.
func (p promptSetting) declared(at string) (gateway.DeclaredPrompt, error) {
	d := gateway.DeclaredPrompt{Name: p.Name, Title: p.Title, Description: p.Description}
	for _, a := range p.Arguments {
		arg := gateway.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required, Values: a.Values}
		if a.ValuesFrom != nil {
			arg.ValuesFrom = &gateway.PromptValuesFrom{Operation: a.ValuesFrom.Operation, Field: a.ValuesFrom.Field}
		}
		d.Arguments = append(d.Arguments, arg)
	}
	for i, m := range p.Messages {
		mat := fmt.Sprintf("%s.messages[%d]", at, i)
		msg := gateway.PromptMessage{Role: m.Role, ResourceURI: m.Resource}
		if m.hasText {
			text := m.Text
			msg.Text = &text
		}
		var err error
		if msg.Image, err = m.Image.media(mat + ".image"); err != nil {
			return d, err
		}
		if msg.Audio, err = m.Audio.media(mat + ".audio"); err != nil {
			return d, err
		}
		if m.Operation != nil {
			op := &gateway.PromptOperation{Name: m.Operation.Name, Arguments: map[string]string{}}
			for k, v := range m.Operation.Arguments {
				text, err := scalar(v)
				if err != nil {
					return d, &pathError{path: mat + ".operation.arguments." + k, reason: err.Error()}
				}
				op.Arguments[k] = text
			}
			msg.Operation = op
		}
		d.Messages = append(d.Messages, msg)
	}
	return d, nil
}

func (m *mediaSetting) media(at string) (*gateway.PromptMedia, error) {
	if m == nil {
		return nil, nil
	}
	switch {
	case (m.Data == "") == (m.File == ""):
		return nil, &pathError{path: at, reason: "needs exactly one of data or file"}
	case m.File != "":
		b, err := os.ReadFile(m.File)
		if err != nil {
			return nil, &pathError{path: at + ".file", reason: "cannot read: " + err.Error()}
		}
		return &gateway.PromptMedia{Data: b, MIMEType: m.MIMEType}, nil
	}
	b, err := base64.StdEncoding.DecodeString(m.Data)
	if err != nil {
		return nil, &pathError{path: at + ".data", reason: "must be base64"}
	}
	return &gateway.PromptMedia{Data: b, MIMEType: m.MIMEType}, nil
}

var contentListOptions = []listOption{
	{key: "resources", usage: "declared resources: [{uri | uri_template, name, title, description, mime_type, text | blob | file | operation (+ arguments), values}]",
		set: func(c *config, raw any) error {
			items, err := decodeList("resources", raw, resourceFields)
			if err != nil {
				return err
			}
			c.Resources = nil
			for i, it := range items {
				d, err := it.declared(fmt.Sprintf("resources[%d]", i))
				if err != nil {
					return err
				}
				c.Resources = append(c.Resources, d)
			}
			return nil
		}},
	{key: "prompts", usage: "declared prompts: [{name, title, description, arguments, messages}]",
		set: func(c *config, raw any) error {
			items, err := decodeList("prompts", raw, promptFields)
			if err != nil {
				return err
			}
			c.Prompts = nil
			for i, it := range items {
				d, err := it.declared(fmt.Sprintf("prompts[%d]", i))
				if err != nil {
					return err
				}
				c.Prompts = append(c.Prompts, d)
			}
			return nil
		}},
}

func init() { listOptions = append(listOptions, contentListOptions...) }

// object parses a YAML object field into a struct by its field table.
func object[C, T any](fields []listField[T], field func(*C) **T) func(*C, any) error {
	return func(c *C, raw any) error {
		items, err := decodeList("", []any{raw}, fields)
		if err != nil {
			// decodeList names the item "[0]"; the caller adds the path.
			msg := err.Error()
			if rest, ok := strings.CutPrefix(msg, "[0]."); ok {
				msg = rest
			}
			return fmt.Errorf("%s", strings.TrimPrefix(msg, "[0]"))
		}
		v := items[0]
		*field(c) = &v
		return nil
	}
}

// anyMap parses a YAML map of JSON values.
func anyMap[C any](field func(*C) *map[string]any) func(*C, any) error {
	return func(c *C, raw any) error {
		m, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("must be a map")
		}
		*field(c) = m
		return nil
	}
}

// listMap parses a YAML map of lists of strings.
func listMap[C any](field func(*C) *map[string][]string) func(*C, any) error {
	return func(c *C, raw any) error {
		m, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("must be a map of lists")
		}
		out := make(map[string][]string, len(m))
		for k, v := range m {
			var vals []string
			if err := list(func(p *[]string) *[]string { return p })(&vals, v); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			out[k] = vals
		}
		*field(c) = out
		return nil
	}
}
