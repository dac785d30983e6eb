package call

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// callPlan is everything about calling one binding that does not depend on
// the arguments. It is built on first use and cached by the Caller.
type callPlan struct {
	method  string
	timeout time.Duration
	accept  string
	path    []pathPiece
	params  []paramPlan
	body    *bodyPlan // nil when the operation has no request body
	args    map[string]argSlot
	// template is the operation's path template, base path included,
	// boxed once for the requests' contexts (Config.PathTemplates).
	template any
	// argNames are the accepted argument names, sorted, for messages.
	argNames []string
	// route is what openapi3filter validates against: the operation with
	// only the parameters it can decode from the wire and no security
	// requirement (credentials are added after validation).
	route *routers.Route
	// visitOpts validate argument values that are checked as JSON.
	visitOpts []openapi3.SchemaValidationOption
	// wireOpts are the options openapi3filter validates parameters with.
	wireOpts []openapi3.SchemaValidationOption
	// fastArgs: every parameter reaches the wire under a key of its own,
	// so wireArgsValid may accept (see ownWireKeys).
	fastArgs bool
	creds    credentialSet
	// hasOutput, wrapped and outputOff mirror binding.HasOutputSchema,
	// binding.OutputIsWrapped and binding.OutputOff.
	hasOutput, wrapped, outputOff bool
	// output checks structuredContent against the declared outputSchema
	// (output.go); nil when there is none.
	output *outputCheck
	// async is binding.Async: how a 202 names its status URL (async.go).
	async *toolgen.AsyncSpec
}

// pathPiece is a literal run of the path template or one parameter.
type pathPiece struct {
	literal, rawLiteral string
	param               int // index into callPlan.params; -1 for a literal
}

// paramPlan is one parameter and how its argument is serialized.
type paramPlan struct {
	arg       string
	name      string
	in        string
	required  bool
	style     string
	explode   bool
	reserved  bool   // allowReserved
	headerKey string // canonical header name
	// jsonContent: the parameter is described by content with a JSON media
	// type, so its value is sent as JSON text.
	jsonContent bool
	// onWire: openapi3filter can decode the serialized value, so it validates
	// it; otherwise the argument's JSON value is validated against schema.
	onWire bool
	// primitive is the schema's one type when it is string, integer, number
	// or boolean and the value goes through openapi3filter: such values
	// can be accepted without a wire round trip (see wireArgsValid).
	primitive string
	schema    *openapi3.SchemaRef
	// dropped parameters are accepted but never sent: header parameters
	// named Accept, Content-Type or Authorization (OpenAPI says to ignore
	// them) or managed by the HTTP client, and parameters a configured
	// credential occupies.
	dropped bool
	param   *openapi3.Parameter
}

type argKind uint8

const (
	argParam     argKind = iota // callPlan.params[index]
	argBodyProp                 // callPlan.body.props[index]
	argBodyWhole                // the whole request body
)

type argSlot struct {
	kind  argKind
	index int
	name  string // the key in callPlan.args, shared so lookups don't copy it
}

// planEntry caches the outcome of building a plan, errors included, so that
// a broken operation is diagnosed once.
type planEntry struct {
	plan *callPlan
	err  error
}

func (c *Caller) plan(b *toolgen.Binding) (*callPlan, error) {
	if v, ok := c.plans.Load(b); ok {
		e := v.(*planEntry)
		return e.plan, e.err
	}
	p, err := c.newPlan(b)
	v, _ := c.plans.LoadOrStore(b, &planEntry{plan: p, err: err})
	e := v.(*planEntry)
	return e.plan, e.err
}

func (c *Caller) newPlan(b *toolgen.Binding) (*callPlan, error) {
	if b.Operation == nil {
		return nil, errors.New("the operation is missing")
	}
	p := &callPlan{
		method:    strings.ToUpper(b.Method),
		template:  c.base.Path + b.Path,
		args:      make(map[string]argSlot),
		hasOutput: b.HasOutputSchema,
		wrapped:   b.OutputIsWrapped,
		outputOff: b.OutputOff,
		async:     b.Async,
	}
	if b.HasOutputSchema {
		p.output = compileOutput(b.OutputSchema)
	}
	if p.method == "" || strings.ContainsFunc(p.method, func(r rune) bool { return !isTokenChar(r) }) {
		return nil, fmt.Errorf("invalid HTTP method %q", b.Method)
	}
	var err error
	if p.timeout, err = operationTimeout(b.Operation, c.timeout); err != nil {
		return nil, fmt.Errorf("%s: %w", timeoutExtension, err)
	}
	p.accept = acceptFor(b.Operation)
	p.creds = c.credentialsFor(b.Security)
	if c.doc.T.IsOpenAPI31OrLater() {
		p.visitOpts = []openapi3.SchemaValidationOption{openapi3.EnableJSONSchema2020()}
	}
	p.wireOpts = append(slices.Clip(c.validation.SchemaValidationOptions), p.visitOpts...)

	addArg := func(name string, slot argSlot) error {
		if name == "" {
			return errors.New("an argument has no name")
		}
		if _, dup := p.args[name]; dup {
			return fmt.Errorf("argument %q is bound twice", name)
		}
		slot.name = name
		p.args[name] = slot
		p.argNames = append(p.argNames, name)
		return nil
	}
	for _, pb := range b.Params {
		if pb.Param == nil {
			return nil, fmt.Errorf("argument %q has no parameter", pb.Arg)
		}
		pp, err := newParamPlan(pb, p.creds)
		if err != nil {
			return nil, err
		}
		if err := addArg(pb.Arg, argSlot{kind: argParam, index: len(p.params)}); err != nil {
			return nil, err
		}
		p.params = append(p.params, pp)
	}
	if p.path, err = parsePathTemplate(b.Path, p.params); err != nil {
		return nil, err
	}
	p.fastArgs = ownWireKeys(p.params)
	if b.Body != nil {
		var rb *openapi3.RequestBody
		if b.Operation.RequestBody != nil {
			rb = b.Operation.RequestBody.Value
		}
		if p.body, err = newBodyPlan(b.Body, rb); err != nil {
			return nil, err
		}
		if b.Body.Flattened {
			for i, bp := range p.body.props {
				if err := addArg(bp.arg, argSlot{kind: argBodyProp, index: i}); err != nil {
					return nil, err
				}
			}
		} else if err := addArg(b.Body.Arg, argSlot{kind: argBodyWhole}); err != nil {
			return nil, err
		}
	}
	sort.Strings(p.argNames)
	p.route = p.validationRoute(c.doc.T, b)
	return p, nil
}

// validationRoute is the route openapi3filter validates against. It is a
// shallow copy of the operation: parameters it cannot decode from the wire
// (validated as JSON instead) and dropped ones are left out, the body is left
// out when it is validated as JSON, and security is empty because the Caller
// adds credentials itself after validation. The path item's own parameters
// are already merged into binding.Params, so the route's path item is empty.
func (p *callPlan) validationRoute(doc *openapi3.T, b *toolgen.Binding) *routers.Route {
	op := *b.Operation
	op.Parameters = make(openapi3.Parameters, 0, len(p.params))
	for i := range p.params {
		pp := &p.params[i]
		if pp.onWire && !pp.dropped {
			op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: pp.param})
		}
	}
	if p.body == nil || !p.body.onWire {
		op.RequestBody = nil
	}
	op.Security = &openapi3.SecurityRequirements{}
	return &routers.Route{
		Spec:      doc,
		Path:      b.Path,
		PathItem:  &openapi3.PathItem{},
		Method:    p.method,
		Operation: &op,
	}
}

// validStyles are the styles OpenAPI 3 defines for each parameter location.
var validStyles = map[string][]string{
	openapi3.ParameterInPath:   {openapi3.SerializationSimple, openapi3.SerializationLabel, openapi3.SerializationMatrix},
	openapi3.ParameterInQuery:  {openapi3.SerializationForm, openapi3.SerializationSpaceDelimited, openapi3.SerializationPipeDelimited, openapi3.SerializationDeepObject},
	openapi3.ParameterInHeader: {openapi3.SerializationSimple},
	openapi3.ParameterInCookie: {openapi3.SerializationForm},
}

func newParamPlan(pb toolgen.ParamBinding, creds credentialSet) (paramPlan, error) {
	prm := pb.Param
	pp := paramPlan{
		arg:      pb.Arg,
		name:     prm.Name,
		in:       prm.In,
		required: prm.Required || prm.In == openapi3.ParameterInPath,
		reserved: prm.AllowReserved,
		schema:   prm.Schema,
		param:    prm,
	}
	sm, err := prm.SerializationMethod()
	if err != nil {
		return pp, fmt.Errorf("parameter %q: %w", prm.Name, err)
	}
	pp.style, pp.explode = sm.Style, sm.Explode
	if !slices.Contains(validStyles[prm.In], pp.style) {
		return pp, fmt.Errorf("parameter %q: style %q is not defined for %s parameters", prm.Name, pp.style, prm.In)
	}
	if prm.In == openapi3.ParameterInHeader {
		pp.headerKey = http.CanonicalHeaderKey(prm.Name)
		switch pp.headerKey {
		case "Accept", "Content-Type", "Authorization",
			// Headers the HTTP client manages or that would change how the
			// response is framed or decoded; cookies come from cookie
			// parameters.
			"Accept-Encoding", "Host", "Content-Length", "Transfer-Encoding",
			"Connection", "Te", "Trailer", "Upgrade", "Cookie", "Proxy-Authorization",
			// The answers to a backend's input requests (input.go): an
			// argument must not forge them.
			headerInputResponses, headerRequestState:
			pp.dropped = true
		}
	}
	if creds.occupies(prm.In, prm.Name) {
		pp.dropped = true
	}

	if len(prm.Content) > 0 {
		// A parameter described by content has exactly one media type.
		for mt, media := range prm.Content {
			pp.jsonContent = openapi.IsJSONMediaType(toolgen.MediaBase(mt))
			if media != nil {
				pp.schema = media.Schema
			}
		}
		// openapi3filter decodes content parameters as application/json only.
		pp.onWire = len(prm.Content) == 1 && prm.Content["application/json"] != nil
		return pp, nil
	}
	pp.onWire = wireDecodable(prm.In, pp.style, pp.explode, pp.schema)
	// Cookies are left out: their serialization may change a value.
	if pp.onWire && pp.in != openapi3.ParameterInCookie && pp.schema != nil && pp.schema.Value != nil {
		if isPrimitiveSchema(pp.schema) {
			pp.primitive = (*pp.schema.Value.Type)[0]
		}
	}
	return pp, nil
}

// ownWireKeys reports whether every sent parameter has a wire key no other
// parameter can write: openapi3filter reads the first value under a
// parameter's name (query) or canonical name (header), so two parameters
// sharing one would have it judge another's value. Query parameters that are
// not a single primitive type expand to keys of their own choosing (exploded
// form objects write their properties' names, deepObject writes name[prop]),
// so any of them turns the fast path off too.
func ownWireKeys(params []paramPlan) bool {
	seen := make(map[string]bool, len(params))
	for i := range params {
		pp := &params[i]
		if pp.dropped {
			continue
		}
		key := pp.in + ":" + pp.name
		switch pp.in {
		case openapi3.ParameterInHeader:
			key = pp.in + ":" + http.CanonicalHeaderKey(pp.name)
		case openapi3.ParameterInQuery:
			if !isPrimitiveSchema(pp.schema) {
				return false
			}
		}
		if seen[key] {
			return false
		}
		seen[key] = true
	}
	return true
}

// isPrimitiveSchema: the schema names exactly one type, and not object or array.
func isPrimitiveSchema(s *openapi3.SchemaRef) bool {
	if s == nil || s.Value == nil || s.Value.Type == nil || len(*s.Value.Type) != 1 {
		return false
	}
	switch (*s.Value.Type)[0] {
	case openapi3.TypeString, openapi3.TypeInteger, openapi3.TypeNumber, openapi3.TypeBoolean:
		return true
	}
	return false
}

// wireDecodable reports whether openapi3filter can decode a parameter
// serialized this way back into a value. It cannot for a few combinations
// that OpenAPI leaves undefined or that its decoders reject, for exploded
// form objects, which it rebuilds from every query parameter of the request
// (so an unrelated parameter would fail additionalProperties: false), and
// for schemas built with oneOf, anyOf, allOf or not. It decodes the text
// of a oneOf/anyOf with every alternative and keeps the last (oneOf) or
// first (anyOf) that decodes, whatever the argument was: "example" for
// GitHub's `has` (oneOf: string, or array of enum [patch]) came back as
// ["example"] and was refused, while `true` for oneOf [integer, string] came
// back as the string "true" and was sent. It decodes an allOf with each
// member in turn and keeps the last, which is nothing for a member without
// a type ({description: ...}), so every value was "empty"; and it does not
// decode not at all.
func wireDecodable(in, style string, explode bool, schema *openapi3.SchemaRef) bool {
	if schema != nil && schema.Value != nil {
		if s := schema.Value; len(s.OneOf) > 0 || len(s.AnyOf) > 0 || len(s.AllOf) > 0 || s.Not != nil {
			return false
		}
	}
	kind := schemaKind(schema)
	switch in {
	case openapi3.ParameterInQuery:
		switch kind {
		case "array":
			return style != openapi3.SerializationDeepObject
		case "object":
			return style == openapi3.SerializationDeepObject || !explode
		default:
			return style == openapi3.SerializationForm
		}
	case openapi3.ParameterInCookie:
		return kind == "" || !explode
	}
	return true
}

// schemaKind is "array" or "object" when the schema has exactly that type,
// else "" (primitives, several types, no type).
func schemaKind(ref *openapi3.SchemaRef) string {
	if ref == nil || ref.Value == nil {
		return ""
	}
	switch t := ref.Value.Type; {
	case t.Is(openapi3.TypeArray):
		return "array"
	case t.Is(openapi3.TypeObject):
		return "object"
	}
	return ""
}

// parsePathTemplate splits a path template into literal runs and parameters.
// Literal runs are escaped as a path (their slashes stay separators).
func parsePathTemplate(tmpl string, params []paramPlan) ([]pathPiece, error) {
	var pieces []pathPiece
	for rest := tmpl; rest != ""; {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			pieces = append(pieces, literalPiece(rest))
			break
		}
		if open > 0 {
			pieces = append(pieces, literalPiece(rest[:open]))
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("path template %q has an unclosed {", tmpl)
		}
		name := rest[open+1 : open+end]
		idx := slices.IndexFunc(params, func(pp paramPlan) bool {
			return pp.in == openapi3.ParameterInPath && pp.name == name
		})
		if idx < 0 {
			return nil, fmt.Errorf("path template %q uses {%s}, which is not a path parameter", tmpl, name)
		}
		pieces = append(pieces, pathPiece{param: idx})
		rest = rest[open+end+1:]
	}
	return pieces, nil
}

func literalPiece(s string) pathPiece {
	return pathPiece{literal: s, rawLiteral: escapeLiteralPath(s), param: -1}
}

// defaultAccept is sent when the operation declares no success media type.
const defaultAccept = "application/json, */*;q=0.5"

// acceptFor lists the media types of the operation's 2xx responses. A
// low-priority */* is added so a backend that negotiates strictly can still
// send its error format instead of a 406.
func acceptFor(op *openapi3.Operation) string {
	if op.Responses == nil {
		return defaultAccept
	}
	var types []string
	codes := op.Responses.Keys()
	sort.Strings(codes)
	wildcard := false
	for _, code := range codes {
		if !strings.HasPrefix(code, "2") {
			continue
		}
		r := op.Responses.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		keys := make([]string, 0, len(r.Value.Content))
		for mt := range r.Value.Content {
			keys = append(keys, mt)
		}
		sort.Strings(keys)
		for _, mt := range keys {
			if !slices.Contains(types, mt) {
				types = append(types, mt)
				wildcard = wildcard || mt == "*/*"
			}
		}
	}
	if len(types) == 0 {
		return defaultAccept
	}
	if !wildcard {
		types = append(types, "*/*;q=0.1")
	}
	return strings.Join(types, ", ")
}

// decodeArgs checks that args is a JSON object (empty or null means {}) whose
// names the tool declares.
func (p *callPlan) decodeArgs(args json.RawMessage) (map[string]json.RawMessage, *argError) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, nil
	}
	if trimmed[0] != '{' {
		return nil, &argError{msg: "arguments must be a JSON object, got " + jsonKindName(trimmed[0])}
	}
	in := make(map[string]json.RawMessage, len(p.args))
	var unknown []string
	err := jsonlex.ScanObject(trimmed, func(key, value []byte) error {
		slot, ok := p.args[string(key)]
		if !ok {
			unknown = append(unknown, string(key))
			return nil
		}
		in[slot.name] = value
		return nil
	})
	if err != nil {
		return nil, &argError{msg: "arguments are not valid JSON"}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		unknown = slices.Compact(unknown)
		return nil, &argError{msg: unknownArgsMessage(unknown, p.argNames)}
	}
	return in, nil
}

func unknownArgsMessage(unknown, accepted []string) string {
	var b strings.Builder
	if len(unknown) == 1 {
		fmt.Fprintf(&b, "unknown argument %q", mcp.Truncate(unknown[0]))
	} else {
		b.WriteString("unknown arguments ")
		for i, u := range unknown {
			if i == 8 {
				fmt.Fprintf(&b, " and %d more", len(unknown)-i)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", mcp.Truncate(u))
		}
	}
	if len(accepted) == 0 {
		b.WriteString("; this tool takes no arguments")
	} else {
		b.WriteString("; this tool accepts: ")
		b.WriteString(strings.Join(accepted, ", "))
	}
	return b.String()
}

func jsonKindName(first byte) string {
	switch first {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// argError is a problem with the arguments that the model can fix.
type argError struct {
	arg string // empty when the problem is not about one argument
	msg string
}

// maxArgMessage bounds an argument error's reason: validators quote the
// value they refused, and a client's 3 MB value must not come back whole.
const maxArgMessage = 512

func (e *argError) Error() string {
	msg := mcp.TruncateTo(e.msg, maxArgMessage, "…")
	if e.arg == "" {
		return "invalid arguments: " + msg
	}
	return fmt.Sprintf("invalid argument %q: %s", mcp.Truncate(e.arg), msg)
}

func (e *argError) result() *mcp.CallToolResult { return mcp.ErrorResult(e.Error()) }

func isTokenChar(r rune) bool {
	return r < 0x7f && r > 0x20 && !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
}
