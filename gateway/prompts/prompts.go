package prompts

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"text/template"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// Argument is one argument of a prompt.
type Argument struct {
	Name, Description string
	// Required makes prompts/get without the argument an error. A missing
	// optional argument renders as "".
	Required bool
	// Values are the argument's completion candidates, in the order they
	// are offered; nil means none.
	Values []string
	// ValuesFrom, instead of Values, takes the candidates from a tool's
	// live result: the Field of each item it returns (cached briefly per
	// caller and arguments).
	ValuesFrom *ValuesFrom
}

// ValuesFrom names a tool whose result lists an argument's candidates.
// The tool is called with the arguments already chosen that it takes
// (completion's context.arguments).
type ValuesFrom struct {
	Operation, Field string
}

// Operation is a tool called when the prompt is got: its live result is
// embedded (its structuredContent as JSON text, else its content blocks).
type Operation struct {
	Name string
	// Arguments are the tool's, each value a text/template over the
	// prompt's arguments, sent as the type the tool's parameter takes; one
	// that renders empty (a missing optional argument) is left out.
	Arguments map[string]string
}

// Media is an image or audio clip; it is sent base64-encoded.
type Media struct {
	Data     []byte
	MIMEType string
}

// Message is one message of a prompt: exactly one of Text, ResourceURI,
// Image, Audio and Operation is set.
type Message struct {
	// Role is "user" or "assistant".
	Role string
	// Text is a Go text/template over the arguments ({{.arg1}}). It may
	// name only declared arguments; a missing optional one renders as "".
	Text *string
	// ResourceURI is a resource URI, itself a text/template over the
	// arguments, read when the prompt is got (Deps.ReadResource) and
	// embedded as a resource content block: one message per content the
	// read returns.
	ResourceURI string
	Image       *Media
	Audio       *Media
	Operation   *Operation
}

// Declared is one prompt the operator declares.
type Declared struct {
	Name, Title, Description string
	Arguments                []Argument
	Messages                 []Message
}

// Config is the feature's configuration. Zero values take the defaults
// noted on each field.
type Config struct {
	// PageSize is the number of prompts per prompts/list page. Zero means
	// 100.
	PageSize int
	// Declared are the prompts served, listed in this order; none means
	// an empty list.
	Declared []Declared
}

// Deps are the parts the feature uses.
type Deps struct {
	// ReadResource reads a resource for a ResourceURI message; its error
	// is the prompts/get answer as is (an *mcp.Error chooses the code).
	// Nil means such messages fail with an internal error.
	ReadResource func(r *mcp.Request, uri string) ([]mcp.ResourceContents, error)
	// CallTool runs a tool for an Operation message or a ValuesFrom source
	// as r's caller (admitted as tools/call), with text arguments sent as
	// the types the tool takes. Its error is the answer as is.
	CallTool func(r *mcp.Request, name string, args map[string]string) (*mcp.CallToolResult, error)
	// Permits reports whether r's caller may use the tool name: a prompt
	// that calls one it may not is neither listed nor got. Nil permits all.
	Permits func(r *mcp.Request, name string) bool
}

// Feature serves prompts/list and prompts/get.
type Feature struct {
	pageSize int
	read     func(r *mcp.Request, uri string) ([]mcp.ResourceContents, error)
	callTool func(r *mcp.Request, name string, args map[string]string) (*mcp.CallToolResult, error)
	permits  func(r *mcp.Request, name string) bool
	values   valuesCache
	// set is what is served: SetDeclared replaces it while serving.
	set atomic.Pointer[promptSet]
}

// promptSet is one generation of the declared prompts.
type promptSet struct {
	listed []listedPrompt // what prompts/list sends, in declared order
	byName map[string]*prompt
	tag    string // fingerprint of the prompt names, bound into cursors
}

// prompt is a declared prompt made ready to render.
type prompt struct {
	// tools are the tools it calls (operation messages, values sources).
	tools             []string
	name, description string
	args              []Argument
	argIndex          map[string]int
	messages          []message
}

// message is a Message made ready: exactly one of text, uri and media.
type message struct {
	role  string
	text  *template.Template
	uri   *template.Template
	media *mediaContent // base64 encoded once
	// op and opArgs: an Operation message.
	op     string
	opArgs map[string]*template.Template
}

// New validates cfg and returns the feature. An error names the prompt
// and, when it is about one, the message.
func New(cfg Config, deps Deps) (*Feature, error) {
	f := &Feature{pageSize: cfg.PageSize, read: deps.ReadResource, callTool: deps.CallTool, permits: deps.Permits}
	if f.pageSize <= 0 {
		f.pageSize = 100
	}
	if err := f.SetDeclared(cfg.Declared); err != nil {
		return nil, err
	}
	return f, nil
}

// SetDeclared serves decl instead of the prompts served now, atomically;
// an error (named as New names it) leaves them as they are.
func (f *Feature) SetDeclared(decl []Declared) error {
	set, err := compileSet(decl)
	if err != nil {
		return err
	}
	f.set.Store(set)
	return nil
}

// Check reports what would make SetDeclared(decl) fail, serving nothing.
func Check(decl []Declared) error {
	_, err := compileSet(decl)
	return err
}

// Len is how many prompts are served.
func (f *Feature) Len() int { return len(f.set.Load().listed) }

func compileSet(decl []Declared) (*promptSet, error) {
	set := &promptSet{byName: make(map[string]*prompt, len(decl))}
	h := fnv.New64a()
	for i, d := range decl {
		if d.Name == "" {
			return nil, fmt.Errorf("prompts[%d]: needs a name", i)
		}
		if _, dup := set.byName[d.Name]; dup {
			return nil, fmt.Errorf("prompt %q: declared twice", d.Name)
		}
		p, err := compile(d)
		if err != nil {
			return nil, fmt.Errorf("prompt %q: %w", d.Name, err)
		}
		set.byName[d.Name] = p
		set.listed = append(set.listed, listing(d))
		h.Write([]byte(d.Name))
		h.Write([]byte{0})
	}
	set.tag = strconv.FormatUint(h.Sum64(), 36)
	return set, nil
}

func compile(d Declared) (*prompt, error) {
	p := &prompt{name: d.Name, description: d.Description, argIndex: make(map[string]int, len(d.Arguments))}
	for i, a := range d.Arguments {
		if a.Name == "" {
			return nil, fmt.Errorf("arguments[%d]: needs a name", i)
		}
		if _, dup := p.argIndex[a.Name]; dup {
			return nil, fmt.Errorf("argument %q: declared twice", a.Name)
		}
		p.argIndex[a.Name] = i
		if a.ValuesFrom != nil && (len(a.Values) > 0 || a.ValuesFrom.Operation == "" || a.ValuesFrom.Field == "") {
			return nil, fmt.Errorf("argument %q: values come from a list or from {operation, field}, both named", a.Name)
		}
		a.Values = slices.Clone(a.Values)
		if a.ValuesFrom != nil && !slices.Contains(p.tools, a.ValuesFrom.Operation) {
			p.tools = append(p.tools, a.ValuesFrom.Operation)
		}
		p.args = append(p.args, a)
	}
	if len(d.Messages) == 0 {
		return nil, errors.New("needs at least one message")
	}
	for i, m := range d.Messages {
		cm, err := p.compileMessage(m)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		p.messages = append(p.messages, cm)
	}
	return p, nil
}

func (p *prompt) compileMessage(m Message) (message, error) {
	cm := message{role: m.Role}
	if m.Role != "user" && m.Role != "assistant" {
		return cm, fmt.Errorf(`role must be "user" or "assistant", not %q`, m.Role)
	}
	n := 0
	for _, set := range []bool{m.Text != nil, m.ResourceURI != "", m.Image != nil, m.Audio != nil, m.Operation != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return cm, errors.New("needs exactly one of text, resource, image, audio and operation")
	}
	var err error
	switch {
	case m.Operation != nil:
		if m.Operation.Name == "" {
			return cm, errors.New("operation needs a name")
		}
		cm.op = m.Operation.Name
		if !slices.Contains(p.tools, cm.op) {
			p.tools = append(p.tools, cm.op)
		}
		cm.opArgs = make(map[string]*template.Template, len(m.Operation.Arguments))
		for k, v := range m.Operation.Arguments {
			if cm.opArgs[k], err = p.parse("operation.arguments."+k, v); err != nil {
				return cm, err
			}
		}
	case m.Text != nil:
		cm.text, err = p.parse("text", *m.Text)
	case m.ResourceURI != "":
		cm.uri, err = p.parse("resource", m.ResourceURI)
	case m.Image != nil:
		cm.media, err = newMedia("image", m.Image)
	default:
		cm.media, err = newMedia("audio", m.Audio)
	}
	return cm, err
}

// parse parses a template over the prompt's arguments.
func (p *prompt) parse(name, text string) (*template.Template, error) {
	// The data holds every declared argument (a missing one as ""), and
	// undeclaredField rejects other names where it can see them; for the
	// rest, missingkey=zero renders "" rather than "<no value>".
	t, err := template.New(name).Option("missingkey=zero").Parse(text)
	if err != nil {
		return nil, err
	}
	if bad := undeclaredField(t, p.argIndex); bad != "" {
		return nil, fmt.Errorf("template names %q, which is not an argument", bad)
	}
	return t, nil
}

func newMedia(kind string, m *Media) (*mediaContent, error) {
	if m.MIMEType == "" {
		return nil, fmt.Errorf("%s needs a MIME type", kind)
	}
	if len(m.Data) == 0 {
		return nil, fmt.Errorf("%s has no data", kind)
	}
	return &mediaContent{Type: kind, Data: base64.StdEncoding.EncodeToString(m.Data), MIMEType: m.MIMEType}, nil
}

// Register adds the feature's methods to the server's table.
func (f *Feature) Register(r mcp.Router) {
	r.Handle("prompts/list", mcp.EraBoth, f.list)
	r.Handle("prompts/get", mcp.EraBoth, f.get)
}

// Fingerprint is a short hash of the prompts r's caller sees now (what it
// may use depends on the tools' scopes, which a document reload changes).
func (f *Feature) Fingerprint(r *mcp.Request) string {
	h := fnv.New64a()
	for _, l := range f.visible(r, f.set.Load()) {
		h.Write([]byte(l.Name))
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// visible are the listed prompts r's caller may use: all, unless some call
// tools it may not.
func (f *Feature) visible(r *mcp.Request, set *promptSet) []listedPrompt {
	if f.permits == nil {
		return set.listed
	}
	var out []listedPrompt
	for i, l := range set.listed {
		if !f.permitted(r, set.byName[l.Name]) {
			if out == nil {
				out = append(make([]listedPrompt, 0, len(set.listed)), set.listed[:i]...)
			}
			continue
		}
		if out != nil {
			out = append(out, l)
		}
	}
	if out == nil {
		return set.listed
	}
	return out
}

func (f *Feature) permitted(r *mcp.Request, p *prompt) bool {
	if f.permits == nil {
		return true
	}
	for _, t := range p.tools {
		if !f.permits(r, t) {
			return false
		}
	}
	return true
}

// ArgumentValues are the completion candidates of a prompt's argument for
// r's caller; ok is false for an unknown prompt or argument. chosen are
// the arguments already chosen (completion's context.arguments): a
// ValuesFrom tool is called with them. The caller must not modify values.
func (f *Feature) ArgumentValues(r *mcp.Request, prompt, arg string, chosen map[string]string) (values []string, ok bool, err error) {
	p, ok := f.set.Load().byName[prompt]
	if !ok || !f.permitted(r, p) {
		return nil, false, nil
	}
	i, ok := p.argIndex[arg]
	if !ok {
		return nil, false, nil
	}
	a := p.args[i]
	if a.ValuesFrom == nil {
		return a.Values, true, nil
	}
	values, err = f.valuesFrom(r, a.ValuesFrom, chosen)
	return values, true, err
}

type listedPrompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []listedArgument `json:"arguments,omitempty"`
}

type listedArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required"`
}

func listing(d Declared) listedPrompt {
	l := listedPrompt{Name: d.Name, Title: d.Title, Description: d.Description}
	for _, a := range d.Arguments {
		l.Arguments = append(l.Arguments, listedArgument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	return l
}

type listResult struct {
	Prompts    []listedPrompt `json:"prompts"`
	NextCursor string         `json:"nextCursor,omitempty"`
	mcp.ResultMeta
}

func (f *Feature) list(r *mcp.Request) (any, error) {
	var p mcp.ListParams
	if err := mcp.DecodeParams(r, &p); err != nil {
		return nil, err
	}
	set := f.set.Load()
	start := 0
	if p.Cursor != nil {
		var err error
		if start, err = mcp.DecodeCursor(*p.Cursor, set.tag, len(set.listed)); err != nil {
			return nil, err
		}
	}
	all := f.visible(r, set)
	if start > len(all) {
		start = len(all)
	}
	end := min(start+f.pageSize, len(all))
	res := &listResult{Prompts: all[start:end:end], ResultMeta: r.StampResult(true)}
	if res.CacheScope != "" && f.permits != nil {
		// When what a caller sees depends on its scopes (an anonymous
		// caller would see less), no cache may share the list.
		nobody := &mcp.Request{Ctx: r.Ctx, Era: r.Era, Version: r.Version, Stamp: r.Stamp}
		if slices.ContainsFunc(set.listed, func(l listedPrompt) bool { return !f.permitted(nobody, set.byName[l.Name]) }) {
			res.CacheScope = "private"
		}
	}
	if res.Prompts == nil {
		res.Prompts = []listedPrompt{}
	}
	if end < len(all) {
		res.NextCursor = mcp.EncodeCursor(set.tag, end)
	}
	return res, nil
}

type getResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []promptMessage `json:"messages"`
	mcp.ResultMeta
}

type promptMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // *textContent, *mediaContent or *resourceContent
}

// The content blocks are the package's own rather than mcp.Content: a
// text block's text and an embedded text resource's text are required
// members even when empty.

type textContent struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

type mediaContent struct {
	Type     string `json:"type"` // "image" or "audio"
	Data     string `json:"data"`
	MIMEType string `json:"mimeType"`
}

type resourceContent struct {
	Type     string           `json:"type"` // "resource"
	Resource embeddedResource `json:"resource"`
}

type embeddedResource struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

func embed(c mcp.ResourceContents) *resourceContent {
	e := embeddedResource{URI: c.URI, MIMEType: c.MimeType}
	if c.Blob != "" {
		e.Blob = &c.Blob
	} else {
		e.Text = &c.Text
	}
	return &resourceContent{Type: "resource", Resource: e}
}

func (f *Feature) get(r *mcp.Request) (any, error) {
	name, rawArgs, err := r.NamedCall()
	if err != nil {
		return nil, err
	}
	if name == nil {
		return nil, mcp.InvalidParams("Invalid params for prompts/get: name is required")
	}
	var args map[string]string
	if len(rawArgs) > 0 {
		if err := json.Unmarshal(rawArgs, &args); err != nil {
			return nil, mcp.InvalidParams("Invalid params for prompts/get: arguments must be an object of strings")
		}
	}
	p, ok := f.set.Load().byName[*name]
	if !ok || !f.permitted(r, p) {
		return nil, mcp.InvalidParams("Unknown prompt: %q", *name)
	}
	data, err := p.bind(args)
	if err != nil {
		return nil, err
	}
	res := &getResult{Description: p.description, Messages: make([]promptMessage, 0, len(p.messages)), ResultMeta: r.StampResult(false)}
	for i, m := range p.messages {
		switch {
		case m.text != nil:
			text, err := render(m.text, data)
			if err != nil {
				return nil, fmt.Errorf("prompt %q: messages[%d]: %w", p.name, i, err)
			}
			res.Messages = append(res.Messages, promptMessage{Role: m.role, Content: &textContent{Type: "text", Text: text}})
		case m.uri != nil:
			contents, err := f.readResource(r, p, i, m.uri, data)
			if err != nil {
				return nil, err
			}
			for _, c := range contents {
				res.Messages = append(res.Messages, promptMessage{Role: m.role, Content: embed(c)})
			}
		case m.op != "":
			contents, err := f.runOperation(r, p, i, m, data)
			if err != nil {
				return nil, err
			}
			for _, c := range contents {
				res.Messages = append(res.Messages, promptMessage{Role: m.role, Content: c})
			}
		default:
			res.Messages = append(res.Messages, promptMessage{Role: m.role, Content: m.media})
		}
	}
	return res, nil
}

// runOperation calls an Operation message's tool and returns its result as
// content blocks: structuredContent as JSON text, else each block. A tool
// error is the prompts/get error, with the tool's (sanitized) text.
func (f *Feature) runOperation(r *mcp.Request, p *prompt, i int, m message, data map[string]string) ([]any, error) {
	args := make(map[string]string, len(m.opArgs))
	for k, t := range m.opArgs {
		v, err := render(t, data)
		if err != nil {
			return nil, fmt.Errorf("prompt %q: messages[%d]: operation argument %s: %w", p.name, i, k, err)
		}
		if v != "" {
			// A missing optional argument leaves the tool's out, rather
			// than sending "" for a number.
			args[k] = v
		}
	}
	if f.callTool == nil {
		return nil, fmt.Errorf("prompt %q: messages[%d] calls a tool, but the gateway has no tool caller", p.name, i)
	}
	res, err := f.callTool(r, m.op, args)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, mcp.NewError(mcp.CodeInternalError, "Getting prompt %q failed: its operation %s answered: %s", p.name, m.op,
			mcp.Verbatim(mcp.TruncateTo(res.FirstText(), 500, "…"))).WithData(map[string]any{"kind": "tool_error"})
	}
	if len(res.StructuredContent) > 0 {
		return []any{&textContent{Type: "text", Text: string(res.StructuredContent)}}, nil
	}
	out := make([]any, 0, len(res.Content))
	for _, c := range res.Content {
		switch {
		case c.Type == "text":
			out = append(out, &textContent{Type: "text", Text: c.Text})
		case c.Resource != nil:
			out = append(out, embed(*c.Resource))
		case c.Type == "image" || c.Type == "audio":
			out = append(out, &mediaContent{Type: c.Type, Data: c.Data, MIMEType: c.MimeType})
		}
	}
	if len(out) == 0 {
		out = append(out, &textContent{Type: "text", Text: ""})
	}
	return out, nil
}

// bind checks the client's arguments against the prompt's and returns the
// templates' data: every declared argument, "" for a missing optional one.
func (p *prompt) bind(args map[string]string) (map[string]string, error) {
	var unknown []string
	for k := range args {
		if _, ok := p.argIndex[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown) // the same answer every time
		return nil, mcp.InvalidParams("Invalid params for prompts/get: prompt %q has no argument %q", p.name, unknown[0])
	}
	data := make(map[string]string, len(p.args))
	for _, a := range p.args {
		v, ok := args[a.Name]
		if !ok && a.Required {
			return nil, mcp.InvalidParams("Invalid params for prompts/get: prompt %q requires argument %q", p.name, a.Name)
		}
		data[a.Name] = v
	}
	return data, nil
}

// readResource reads the resource a message embeds. The reader's error is
// the answer as is: it is the resources feature's own, in the era's shape.
func (f *Feature) readResource(r *mcp.Request, p *prompt, i int, uri *template.Template, data map[string]string) ([]mcp.ResourceContents, error) {
	u, err := render(uri, data)
	if err != nil {
		return nil, fmt.Errorf("prompt %q: messages[%d]: resource URI: %w", p.name, i, err)
	}
	if f.read == nil {
		return nil, fmt.Errorf("prompt %q: messages[%d] embeds a resource, but the gateway has no resource reader", p.name, i)
	}
	contents, err := f.read(r, u)
	if err != nil {
		return nil, err
	}
	if len(contents) == 0 {
		return nil, fmt.Errorf("prompt %q: messages[%d]: resource %q has no contents", p.name, i, u)
	}
	return contents, nil
}

func render(t *template.Template, data map[string]string) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}
