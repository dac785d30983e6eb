package call

// Validation of a built request and the translation of kin-openapi's errors
// into messages that name the argument and the reason, never a schema dump.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

// validate checks the request against the operation before it is sent.
func (c *Caller) validate(ctx context.Context, p *callPlan, req *http.Request, parts *requestParts, in map[string]json.RawMessage) *argError {
	if !p.wireArgsValid(in) {
		input := &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: parts.pathParams,
			Route:      p.route,
			Options:    &c.validation,
		}
		if err := openapi3filter.ValidateRequest(ctx, input); err != nil {
			return p.explain(err)
		}
	}
	for _, check := range parts.asJSON {
		if check.schema == nil || check.schema.Value == nil {
			continue
		}
		opts := append([]openapi3.SchemaValidationOption{openapi3.VisitAsRequest()}, p.visitOpts...)
		if err := check.schema.Value.VisitJSON(check.value, opts...); err != nil {
			ptr, reason, required := p.schemaProblem(err)
			return check.explain(ptr, reason, required)
		}
	}
	return nil
}

// wireArgsValid is the fast way to accept a request: it reports whether every
// argument openapi3filter would validate is a JSON value of the one primitive
// type its schema names and satisfies that schema. Such a value is
// serialized to text that openapi3filter decodes back into the same value
// and checks against the same schema with the same options, so it would
// accept the request; checking the value directly skips parsing the URL,
// headers and cookies back. Anything else returns false, and the request
// goes through openapi3filter, whose errors name the problem: this path
// only ever accepts.
func (p *callPlan) wireArgsValid(in map[string]json.RawMessage) bool {
	if !p.fastArgs || (p.body != nil && p.body.onWire) {
		return false
	}
	for i := range p.params {
		pp := &p.params[i]
		if !pp.onWire || pp.dropped {
			continue
		}
		raw, ok := in[pp.arg]
		if !ok || isJSONNull(raw) {
			if pp.required {
				return false
			}
			continue
		}
		if pp.primitive == "" {
			return false
		}
		v, ok := primitiveValue(pp.primitive, raw)
		if !ok {
			return false
		}
		if pp.schema.Value.VisitJSON(v, p.wireOpts...) != nil {
			return false
		}
	}
	return true
}

// primitiveValue decodes raw when it is a JSON value of type typ in the
// form openapi3filter would decode its serialization into: a non-empty
// string, a boolean, or a number short and plain enough that float64 holds
// it exactly (integers without a fraction).
func primitiveValue(typ string, raw []byte) (any, bool) {
	switch typ {
	case openapi3.TypeString:
		s, ok := jsonlex.String(raw)
		return s, ok && s != ""
	case openapi3.TypeBoolean:
		switch string(raw) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
		return nil, false
	case openapi3.TypeInteger, openapi3.TypeNumber:
		if len(raw) > 15 {
			return nil, false
		}
		for i, c := range raw {
			switch {
			case c >= '0' && c <= '9':
			case c == '-' && i == 0:
			case c == '.' && typ == openapi3.TypeNumber:
			default:
				return nil, false
			}
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		return f, err == nil
	}
	return nil, false
}

// explain turns an openapi3filter error into an argument error.
func (p *callPlan) explain(err error) *argError {
	var re *openapi3filter.RequestError
	if !errors.As(err, &re) {
		return &argError{msg: "the request does not match the operation"}
	}
	switch {
	case re.Parameter != nil:
		arg := re.Parameter.Name
		for i := range p.params {
			if p.params[i].param == re.Parameter {
				arg = p.params[i].arg
				break
			}
		}
		return p.explainCause(re, func(ptr []string, reason string, required bool) *argError {
			return schemaArgError(arg, ptr, reason, required)
		})
	case re.RequestBody != nil && p.body != nil:
		if errors.Is(re.Err, openapi3filter.ErrInvalidRequired) {
			if p.body.flattened {
				return &argError{msg: "the request body is required"}
			}
			return &argError{arg: p.body.arg, msg: "a value is required: it is the request body"}
		}
		return p.explainCause(re, p.body.explain)
	}
	return &argError{msg: "the request does not match the operation: " + clip(re.Error(), 300)}
}

func (p *callPlan) explainCause(re *openapi3filter.RequestError, explain func(ptr []string, reason string, required bool) *argError) *argError {
	var se *openapi3.SchemaError
	var pe *openapi3filter.ParseError
	switch {
	case errors.Is(re.Err, openapi3filter.ErrInvalidRequired):
		return explain(nil, "a value is required", false)
	case errors.Is(re.Err, openapi3filter.ErrInvalidEmptyValue):
		return explain(nil, "must not be empty", false)
	case errors.As(re.Err, &se):
		ptr, reason, required := p.schemaProblem(se)
		return explain(ptr, reason, required)
	case errors.As(re.Err, &pe):
		return explain(parsePointer(pe), parseReason(pe), false)
	}
	reason := re.Reason
	if re.Err != nil {
		reason = re.Err.Error()
	}
	return explain(nil, clip(reason, 300), false)
}

// schemaProblem extracts where a schema error is and why. required reports
// a missing required property whose name ends ptr.
func (p *callPlan) schemaProblem(err error) (ptr []string, reason string, required bool) {
	var se *openapi3.SchemaError
	if !errors.As(err, &se) {
		return nil, "does not match its schema", false
	}
	ptr = se.JSONPointer()
	reason = cleanSchemaReason(se.Reason)
	if reason == "" {
		reason = fmt.Sprintf("does not match the schema's %q rule", se.SchemaField)
	}
	if se.SchemaField == "required" {
		// OpenAPI 3.0 errors end the pointer with the missing property;
		// the JSON Schema 2020-12 validator (3.1) names it in the reason.
		if prop, ok := strings.CutPrefix(reason, "missing property '"); ok && strings.HasSuffix(prop, "'") {
			ptr = append(ptr, strings.TrimSuffix(prop, "'"))
		}
		required = len(ptr) > 0
	}
	return ptr, reason, required
}

// schemaArgError words a schema problem of one argument. ptr is the place
// inside the argument's value.
func schemaArgError(arg string, ptr []string, reason string, required bool) *argError {
	if required {
		if len(ptr) == 0 {
			return &argError{arg: arg, msg: "a value is required"}
		}
		missing := ptr[len(ptr)-1]
		if len(ptr) == 1 {
			return &argError{arg: arg, msg: fmt.Sprintf("property %q is required", missing)}
		}
		return &argError{arg: arg, msg: fmt.Sprintf("property %q is required%s", missing, atPointer(ptr[:len(ptr)-1]))}
	}
	return &argError{arg: arg, msg: reason + atPointer(ptr)}
}

func atPointer(ptr []string) string {
	if len(ptr) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(" (at ")
	for _, p := range ptr {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1"))
	}
	b.WriteByte(')')
	return b.String()
}

// cleanSchemaReason drops the preamble the JSON Schema 2020-12 validator
// puts before its reasons ("jsonschema validation failed with '...'" and
// "- at '/x': "); the place is reported from the error's pointer instead.
func cleanSchemaReason(reason string) string {
	if !strings.HasPrefix(reason, "jsonschema validation failed") {
		return reason
	}
	var out []string
	for _, line := range strings.Split(reason, "\n")[1:] {
		line = strings.TrimSpace(line)
		line = strings.TrimPrefix(line, "- ")
		if rest, ok := strings.CutPrefix(line, "at '"); ok {
			if end := strings.Index(rest, "': "); end >= 0 {
				line = rest[end+3:]
			}
		}
		if line != "" {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		return "does not match its schema"
	}
	return strings.Join(out, "; ")
}

// parseReason words a value that could not be read as its schema's type,
// e.g. `"abc" is not a valid integer`.
func parseReason(pe *openapi3filter.ParseError) string {
	inner := pe
	for {
		next, ok := inner.Cause.(*openapi3filter.ParseError)
		if !ok {
			break
		}
		inner = next
	}
	reason := inner.Reason
	if rest, ok := strings.CutPrefix(reason, "an invalid "); ok {
		reason = "is not a valid " + rest
	}
	switch v := inner.Value.(type) {
	case nil:
	case string:
		return fmt.Sprintf("%q %s", v, reason)
	default:
		if b, err := json.Marshal(v); err == nil {
			return fmt.Sprintf("%s %s", b, reason)
		}
	}
	if reason == "" {
		return "could not be read as its schema's type"
	}
	return reason
}

func parsePointer(pe *openapi3filter.ParseError) []string {
	var ptr []string
	for _, p := range pe.Path() {
		ptr = append(ptr, fmt.Sprint(p))
	}
	return ptr
}

// clip shortens s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
