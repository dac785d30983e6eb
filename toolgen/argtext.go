package toolgen

import (
	"encoding/json"
	"math"
	"strconv"
)

// ArgFromText is the JSON value of argument arg given as text (a URI
// template variable, a prompt argument): the number, integer or boolean
// the parameter carrying it takes when the text is one, else the text as
// a JSON string (the call path's validation then says what is wrong).
func (t *Tool) ArgFromText(arg, text string) json.RawMessage {
	str, _ := json.Marshal(text) // a string: cannot fail
	if t == nil || t.Binding == nil {
		return str
	}
	for _, p := range t.Binding.Params {
		if p.Arg != arg || p.Param == nil || p.Param.Schema == nil || p.Param.Schema.Value == nil {
			continue
		}
		types := p.Param.Schema.Value.Type
		if types == nil || types.Permits("string") {
			return str
		}
		switch {
		case types.Permits("integer"):
			if _, err := strconv.ParseInt(text, 10, 64); err == nil {
				return json.RawMessage(text)
			}
		case types.Permits("number"):
			if f, err := strconv.ParseFloat(text, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && json.Valid([]byte(text)) {
				return json.RawMessage(text)
			}
		case types.Permits("boolean"):
			if text == "true" || text == "false" {
				return json.RawMessage(text)
			}
		}
		return str
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
