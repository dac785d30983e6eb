package toolgen

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
)

// ArgFromText is the JSON value of argument arg given as text (a URI
// template variable, a prompt argument): the number, integer or boolean
// the parameter or flattened body property carrying it takes when the
// text is one, else the text as a JSON string (the call path's validation
// then says what is wrong).
func (t *Tool) ArgFromText(arg, text string) json.RawMessage {
	str, _ := json.Marshal(text) // a string: cannot fail
	if t == nil || t.Binding == nil {
		return str
	}
	for _, p := range t.Binding.Params {
		if p.Arg != arg || p.Param == nil {
			continue
		}
		return typedText(p.Param.Schema, text, str)
	}
	if b := t.Binding.Body; b != nil && b.Flattened && b.Schema != nil && b.Schema.Value != nil {
		if prop, ok := b.Props[arg]; ok {
			return typedText(b.Schema.Value.Properties[prop], text, str)
		}
	}
	return str
}

// typedText is text as the JSON value schema takes, else str. Each type
// the schema permits is tried in turn (["integer", "number"] takes 1.5),
// and only text that is already JSON is sent as it is: "+7" or "007"
// parse as integers but are no JSON numbers.
func typedText(schema *openapi3.SchemaRef, text string, str json.RawMessage) json.RawMessage {
	if schema == nil || schema.Value == nil {
		return str
	}
	types := schema.Value.Type
	if types == nil || types.Permits("string") || !json.Valid([]byte(text)) {
		return str
	}
	if types.Permits("integer") {
		if _, err := strconv.ParseInt(text, 10, 64); err == nil {
			return json.RawMessage(text)
		}
	}
	if types.Permits("number") {
		if f, err := strconv.ParseFloat(text, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return json.RawMessage(text)
		}
	}
	if types.Permits("boolean") && (text == "true" || text == "false") {
		return json.RawMessage(text)
	}
	return str
}

// TakesArg reports whether the tool has an argument named arg.
func (t *Tool) TakesArg(arg string) bool {
	if t == nil || t.Binding == nil {
		return false
	}
	for _, p := range t.Binding.Params {
		if p.Arg == arg {
			return true
		}
	}
	if b := t.Binding.Body; b != nil {
		if b.Flattened {
			_, ok := b.Props[arg]
			return ok
		}
		return b.Arg == arg
	}
	return false
}
