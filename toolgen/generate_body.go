package toolgen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// mediaRank orders the request media types an operation offers; the lowest
// rank is the one the tool sends. See the package documentation.
func mediaRank(mt string) int {
	base := MediaBase(mt)
	switch {
	case base == "application/json":
		return 0
	case openapi.IsJSONMediaType(base):
		return 1
	case base == "application/x-www-form-urlencoded":
		return 2
	case base == "multipart/form-data":
		return 3
	case base == "text/plain":
		return 4
	case openapi.IsTextMediaType(base):
		return 5
	case base == "application/octet-stream":
		return 6
	case openapi.ClassifyMediaType(base) == openapi.MediaBinary:
		return 7
	case strings.Contains(base, "*"):
		return 8
	}
	return 9 // unknown: sent as its schema suggests
}

func chooseMediaType(content openapi3.Content) string {
	keys := sortedKeysOf(content)
	slices.SortStableFunc(keys, func(a, b string) int { return mediaRank(a) - mediaRank(b) })
	return keys[0]
}

// body binds the request body: flattened into top-level arguments when it
// can be, else one argument. It adds the body's properties and required
// names to the input schema.
func (g *generator) body(op openapi.Operation, rb *openapi3.RequestBody, taken map[string]bool, st *state, props *members, required *[]string) *BodyBinding {
	loc := op.Location()
	if len(rb.Content) == 0 {
		g.warn(loc, "the request body declares no media type; the tool sends no body")
		return nil
	}
	mt := chooseMediaType(rb.Content)
	var schema *openapi3.SchemaRef
	if media := rb.Content[mt]; media != nil {
		schema = media.Schema
	}
	kind, contentType := BodyEncoding(mt, schema)
	if openapi.ClassifyMediaType(mt) == openapi.MediaUnsupported {
		g.warn(loc+".requestBody", unsupportedBodyWarning(mt, kind, contentType))
	}
	bb := &BodyBinding{MediaType: mt, Required: rb.Required, Schema: schema}

	if flat, ok := flattenable(kind, schema, rb.Required, taken); ok {
		bb.Flattened, bb.Props = true, flat
		s := schema.Value
		byProp := make(map[string]string, len(flat))
		for _, arg := range sortedKeysOf(flat) {
			prop := flat[arg]
			byProp[prop] = arg
			props.add(arg, g.conv.convert(s.Properties[prop], st, 1))
		}
		if rb.Required {
			for _, name := range s.Required {
				if arg, ok := byProp[name]; ok && !slices.Contains(*required, arg) {
					*required = append(*required, arg)
				}
			}
		}
		return bb
	}

	bb.Arg = bodyArgName(taken)
	props.add(bb.Arg, g.bodySchema(kind, mt, schema, strings.TrimSpace(rb.Description), st))
	if rb.Required {
		*required = append(*required, bb.Arg)
	}
	return bb
}

// bodyArgName is "body", or the first of body_, requestBody, body_2, ...
// that no parameter argument uses.
func bodyArgName(taken map[string]bool) string {
	for _, name := range []string{"body", "body_", "requestBody"} {
		if !taken[name] {
			return name
		}
	}
	for i := 2; ; i++ {
		if name := "body_" + strconv.Itoa(i); !taken[name] {
			return name
		}
	}
}

// flattenable decides whether a body's properties become top-level
// arguments, and maps argument names to property names when they do.
func flattenable(kind BodyKind, schema *openapi3.SchemaRef, bodyRequired bool, taken map[string]bool) (map[string]string, bool) {
	if kind != BodyJSON && kind != BodyForm && kind != BodyMultipart {
		return nil, false
	}
	if schema == nil || schema.Value == nil || schema.Value.Always != nil {
		return nil, false
	}
	s := schema.Value
	switch {
	case !(s.Type.Is(openapi3.TypeObject) || s.Type.IsEmpty() && len(s.Properties) > 0),
		s.Nullable,
		len(s.AllOf) > 0, len(s.AnyOf) > 0, len(s.OneOf) > 0, s.Not != nil, s.If != nil, s.Discriminator != nil,
		// Extra members or whole-object constraints cannot be said of
		// top-level arguments.
		s.AdditionalProperties.Schema != nil, s.AdditionalProperties.Has != nil && *s.AdditionalProperties.Has,
		len(s.PatternProperties) > 0, s.PropertyNames != nil, len(s.DependentRequired) > 0, len(s.DependentSchemas) > 0,
		s.MinProps > 0, s.MaxProps != nil, s.UnevaluatedProperties.Schema != nil:
		return nil, false
	}
	flat := make(map[string]string, len(s.Properties))
	for name, p := range s.Properties {
		if hiddenIn(modeInput, p) {
			continue
		}
		arg := sanitizeArg(name)
		if arg == "" || taken[arg] {
			return nil, false
		}
		if _, dup := flat[arg]; dup {
			return nil, false
		}
		flat[arg] = name
	}
	if len(flat) == 0 {
		return nil, false
	}
	for _, name := range s.Required {
		p, ok := s.Properties[name]
		if !ok {
			return nil, false // required but undescribed: no argument could carry it
		}
		if hiddenIn(modeInput, p) {
			continue
		}
		if !bodyRequired {
			// An optional body with required members: flattened, the
			// members could not be both optional and required.
			return nil, false
		}
	}
	return flat, true
}

// bodySchema is the schema of the one argument that holds the whole body.
func (g *generator) bodySchema(kind BodyKind, mt string, schema *openapi3.SchemaRef, desc string, st *state) []byte {
	var ms members
	concrete := !strings.Contains(mt, "*")
	switch kind {
	case BodyText:
		if schema != nil && schema.Value != nil && schema.Value.Type.Is(openapi3.TypeString) {
			ms, _ = g.conv.schemaMembers(schema, st)
		} else {
			ms = members{{"type", jsonString("string")}}
		}
		if desc == "" {
			desc = "The request body, as " + MediaBase(mt) + " text."
		}
	case BodyBinary:
		ms = members{{"type", jsonString("string")}, {"contentEncoding", jsonString("base64")}}
		if concrete {
			ms.add("contentMediaType", jsonString(MediaBase(mt)))
		}
		if desc == "" {
			desc = "The request body, base64-encoded."
		}
	default:
		var raw []byte
		ms, raw = g.conv.schemaMembers(schema, st)
		if raw != nil {
			return raw
		}
	}
	if desc != "" {
		ms.setDescription(jsonString(desc))
	}
	return ms.json()
}

// output builds the outputSchema from the success response: 200, else 201,
// else the lowest other 2xx, else 2XX. There is none unless that response
// has a JSON schema and every other 2xx response has the same one: a tool
// with an outputSchema must return matching structured content, which a
// 204 or a differently shaped 202 would break.
func (g *generator) output(op openapi.Operation, b *Binding) json.RawMessage {
	mode := g.outputMode(op)
	if mode == OutputOff {
		b.OutputOff = true
		return nil
	}
	resps := op.Operation.Responses
	if resps == nil {
		return nil
	}
	m := resps.Map()
	var codes []string
	for code, r := range m {
		if r != nil && (len(code) == 3 && code[0] == '2' || strings.EqualFold(code, "2XX")) {
			codes = append(codes, code)
		}
	}
	if len(codes) == 0 {
		return nil
	}
	slices.SortFunc(codes, func(a, b string) int { return successRank(a) - successRank(b) })
	schema := jsonSchemaOf(m[codes[0]].Value)
	if schema == nil || schema.Value == nil {
		return nil
	}
	for _, code := range codes[1:] {
		other := jsonSchemaOf(m[code].Value)
		if other == nil || other.Value != schema.Value {
			return nil
		}
	}

	smode := modeOutput
	if mode == OutputLenient {
		smode = modeLenient
	}
	st := newState(smode, op.Location())
	var ms members
	if isObjectSchema(schema.Value, 0) {
		ms = g.conv.members(schema.Value, st, 0, nil)
		if !ms.has("type") {
			ms = append(members{{"type", jsonString("object")}}, ms...)
		}
	} else {
		ms = members{
			{"type", jsonString("object")},
			{"properties", members{{"result", g.conv.convert(schema, st, 1)}}.json()},
			{"required", jsonStrings([]string{"result"})},
		}
		b.OutputIsWrapped = true
	}
	if defs := g.conv.defsJSON(st.deps, smode, st.loc); defs != nil {
		ms.set("$defs", defs)
	}
	b.HasOutputSchema = true
	return ms.json()
}

// outputMode is the operation's x-mcp-output-schema, else Options.OutputSchema.
func (g *generator) outputMode(op openapi.Operation) string {
	if v := g.extString(op.Operation.Extensions, extMCPOutputSchema, op.Location()); v != "" {
		if ValidOutputSchema(v) {
			return v
		}
		g.warn(op.Location(), fmt.Sprintf("%s must be lenient, strict or off, not %q; using %s", extMCPOutputSchema, v, g.opts.OutputSchema))
	}
	return g.opts.OutputSchema
}

// successRank: 200, 201, then the other codes in numeric order, 2XX last.
func successRank(code string) int {
	switch code {
	case "200":
		return 0
	case "201":
		return 1
	}
	if n, err := strconv.Atoi(code); err == nil {
		return n
	}
	return 1000
}

// jsonSchemaOf is the schema of a response's JSON content: application/json,
// else the first other JSON media type.
func jsonSchemaOf(r *openapi3.Response) *openapi3.SchemaRef {
	if r == nil {
		return nil
	}
	var best string
	for _, mt := range sortedKeysOf(r.Content) {
		base := MediaBase(mt)
		if base == "application/json" {
			best = mt
			break
		}
		if best == "" && openapi.IsJSONMediaType(base) {
			best = mt
		}
	}
	if best == "" || r.Content[best] == nil {
		return nil
	}
	return r.Content[best].Schema
}

// isObjectSchema reports a schema every valid value of which is an object.
func isObjectSchema(s *openapi3.Schema, depth int) bool {
	if s == nil || s.Always != nil || depth > 8 {
		return false
	}
	if !s.Type.IsEmpty() {
		return s.Type.Is(openapi3.TypeObject) && !s.Nullable
	}
	if s.Nullable {
		return false
	}
	if len(s.Properties) > 0 || s.AdditionalProperties.Schema != nil || s.AdditionalProperties.Has != nil || len(s.PatternProperties) > 0 {
		return true
	}
	for _, m := range s.AllOf {
		if m != nil && isObjectSchema(m.Value, depth+1) {
			return true
		}
	}
	alts := slices.Concat(s.OneOf, s.AnyOf)
	if len(alts) == 0 {
		return false
	}
	for _, m := range alts {
		if m == nil || !isObjectSchema(m.Value, depth+1) {
			return false
		}
	}
	return true
}

// unsupportedBodyWarning says exactly what the tool sends for a request
// media type the gateway cannot encode: the one warning of its kind (the
// loader leaves this case to generation).
func unsupportedBodyWarning(mt string, kind BodyKind, contentType string) string {
	switch kind {
	case BodyJSON:
		return fmt.Sprintf("request media type %s is not one the gateway can encode: the body argument is sent as JSON with Content-Type %s, which the backend may reject", mt, contentType)
	case BodyText:
		return fmt.Sprintf("request media type %s is not one the gateway knows: the body argument is sent as text with Content-Type %s", mt, contentType)
	default:
		return fmt.Sprintf("request media type %s is not one the gateway knows: the body argument is sent as base64-decoded bytes with Content-Type %s", mt, contentType)
	}
}
