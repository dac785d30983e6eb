package call

// The gateway declares an outputSchema and must never send a
// structuredContent that breaks it: strict clients (the TypeScript SDK, the
// Inspector) reject such a result whole, and the model gets nothing. Every
// JSON result is therefore checked against the tool's declared schema,
// compiled once per tool; a body that does not fit (the backend drifted
// from its own document) becomes a result every validating client accepts
// and that still hands the model the data: isError true, no
// structuredContent, the body as text, and one sentence saying where the
// body left the schema.
//
// The validator is santhosh-tekuri/jsonschema (2020-12, the dialect the
// gateway writes). Patterns are ECMA-262 in OpenAPI; one Go's regexp cannot
// compile matches everything rather than disable the whole check.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// outputCheck is one tool's compiled outputSchema.
type outputCheck struct {
	schema *jsonschema.Schema
	fast   *shape // nil when the schema asserts more than a shape (shape.go)
}

var printer = message.NewPrinter(language.English)

// compileOutput compiles a declared outputSchema; nil when it does not
// compile (generation's tests hold every generated schema to compiling,
// so this only skips the check for a document that defeats the compiler).
func compileOutput(raw json.RawMessage) *outputCheck {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseRegexpEngine(lenientRegexp)
	// Clients assert formats (the TypeScript SDK's ajv-formats does), so a
	// strict schema's format must hold here too.
	c.AssertFormat()
	if err := c.AddResource("mcp-gateway:output", doc); err != nil {
		return nil
	}
	s, err := c.Compile("mcp-gateway:output")
	if err != nil {
		return nil
	}
	return &outputCheck{schema: s, fast: compileShape(doc)}
}

// fitsObject reports whether body is valid JSON, an object, and fits the
// fast check (false: not sure). It is the whole check for the common
// case, a JSON object response: no other scan of the body is needed.
func (o *outputCheck) fitsObject(body []byte, wrapped bool) bool {
	return o.fast != nil && !wrapped && firstNonSpace(body) == '{' && o.fast.fits(body)
}

// check returns where structured leaves the schema, or "" when it fits.
// wrapped: structured is {"result": body}, and places are told in the body.
func (o *outputCheck) check(structured []byte, wrapped bool) string {
	if o.fast != nil && o.fast.fits(structured) {
		return ""
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(structured))
	if err != nil {
		return "it is not valid JSON"
	}
	err = o.schema.Validate(v)
	if err == nil {
		return ""
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return "it does not fit"
	}
	// The first leaf is the most specific reason.
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	loc := ve.InstanceLocation
	if wrapped && len(loc) > 0 {
		loc = loc[1:]
	}
	at := "/" + strings.Join(loc, "/")
	return fmt.Sprintf("at %s: %s", at, ve.ErrorKind.LocalizedString(printer))
}

// driftResult is the answer to a body that left the declared schema.
func driftResult(status, where string, body []byte) *mcp.CallToolResult {
	msg := fmt.Sprintf("The backend answered %s, but its response does not match the response schema its own API document declares (%s); the response follows as text.\n\n", status, where)
	return mcp.ErrorResult(msg + toUTF8(body, ""))
}

// lenientRegexp compiles with Go's regexp; a pattern it cannot read (an
// ECMA-262 lookaround, say) matches everything.
func lenientRegexp(s string) (jsonschema.Regexp, error) {
	re, err := regexp.Compile(s)
	if err != nil {
		return matchAll(s), nil
	}
	return re, nil
}

type matchAll string

func (m matchAll) MatchString(string) bool { return true }
func (m matchAll) String() string          { return string(m) }
