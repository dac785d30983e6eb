package toolgen

import (
	"math"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Converting one inline schema, keyword group by keyword group.
//
// The groups run in a fixed order and each appends its keywords in a fixed
// order, which is the order of the keywords in the generated JSON (and in
// the golden files):
//
//	type · title description · format contentEncoding contentMediaType ·
//	const enum default examples · deprecated readOnly writeOnly ·
//	numeric bounds · string constraints · array keywords · object keywords ·
//	composition and conditionals · discriminator · contentSchema
//
// The order also matters beyond the output's key order: converting a
// subschema may name a definition (the first free "Name_2" goes to whichever
// reference is met first) and may warn, so subschemas must be converted in
// this same order for names and warnings to stay the same.

// schemaBuild is one inline schema being converted: the members written so
// far, and what its subschemas need (the state collecting definitions and
// the depth they sit at).
type schemaBuild struct {
	c     *converter
	st    *state
	depth int
	ms    members
}

// members converts an inline schema. hidden lists property names that an
// enclosing allOf leaves out, so that this schema does not require them.
func (c *converter) members(s *openapi3.Schema, st *state, depth int, hidden map[string]bool) members {
	if depth > maxSchemaDepth {
		c.warn(st.loc, "schema nested too deeply; the rest is accepted as any value")
		return members{}
	}
	b := &schemaBuild{c: c, st: st, depth: depth}
	types := schemaTypes(s)
	b.typeKeyword(types)
	b.texts(s)
	b.formatAndContent(s)
	b.values(s)
	b.flags(s)
	b.numberBounds(s)
	b.stringConstraints(s)
	b.arrayKeywords(s)
	hide := hiddenProperties(s, st.mode, hidden)
	b.objectKeywords(s, hide)
	b.composition(s, hide)
	if d := s.Discriminator; d != nil && d.PropertyName != "" {
		b.ms.add("discriminator", c.discriminator(d, st))
	}
	b.addSub("contentSchema", s.ContentSchema)

	if s.Nullable && len(types) == 0 {
		// OpenAPI 3.0 nullable with no type to extend: null or the rest.
		return nullableWrap(b.ms)
	}
	return b.ms
}

// lenient reports whether constraints are left out (output_schema:
// lenient): the groups below then write only the shape and the
// annotations.
func (b *schemaBuild) lenient() bool { return b.st.mode == modeLenient }

// sub converts a subschema, one level deeper.
func (b *schemaBuild) sub(ref *openapi3.SchemaRef) []byte {
	return b.c.convert(ref, b.st, b.depth+1)
}

// subs converts a list of subschemas into a JSON array.
func (b *schemaBuild) subs(refs openapi3.SchemaRefs) []byte {
	items := make([][]byte, len(refs))
	for i, r := range refs {
		items[i] = b.sub(r)
	}
	return jsonArray(items)
}

// addSub adds key with the converted subschema, if there is one.
func (b *schemaBuild) addSub(key string, ref *openapi3.SchemaRef) {
	if ref != nil {
		b.ms.add(key, b.sub(ref))
	}
}

// addSubs adds key with the converted subschemas, if there are any.
func (b *schemaBuild) addSubs(key string, refs openapi3.SchemaRefs) {
	if len(refs) > 0 {
		b.ms.add(key, b.subs(refs))
	}
}

// addSchemaMap adds key with an object of converted subschemas, sorted by
// name, if there are any.
func (b *schemaBuild) addSchemaMap(key string, m openapi3.Schemas) {
	if len(m) > 0 {
		b.ms.add(key, b.c.schemaMap(m, b.st, b.depth))
	}
}

// addBoolOrSchema adds a keyword that is either a schema or a boolean
// (additionalProperties, unevaluated*). A false is left out of output
// schemas when relaxFalse is set: the document's "nothing else" must not
// make a client reject a field the backend returns anyway.
func (b *schemaBuild) addBoolOrSchema(key string, v openapi3.BoolSchema, relaxFalse bool) {
	switch {
	case v.Schema != nil:
		b.ms.add(key, b.sub(v.Schema))
	case v.Has != nil && (*v.Has || (!relaxFalse && !b.lenient()) || b.st.mode == modeInput):
		b.ms.add(key, jsonBool(*v.Has))
	}
}

// schemaTypes is the schema's type list, with "null" added for OpenAPI
// 3.0's nullable: true (3.1 documents say "null" in the list themselves).
func schemaTypes(s *openapi3.Schema) []string {
	types := s.Type.Slice()
	if s.Nullable && len(types) > 0 && !slices.Contains(types, openapi3.TypeNull) {
		// Clip: the slice is the document's own; appending must copy.
		types = append(slices.Clip(types), openapi3.TypeNull)
	}
	return types
}

// typeKeyword writes "type": a string for one type, an array for several.
func (b *schemaBuild) typeKeyword(types []string) {
	switch len(types) {
	case 0:
	case 1:
		b.ms.add("type", jsonString(types[0]))
	default:
		b.ms.add("type", jsonStrings(types))
	}
}

// texts writes title and description. A format no validator knows (see
// knownFormat) is said in the description instead of as format.
func (b *schemaBuild) texts(s *openapi3.Schema) {
	b.ms.addString("title", plainText(s.Title))
	desc := plainText(s.Description)
	if s.Format != "" && !knownFormat(s.Format) {
		if desc != "" {
			desc = strings.TrimRight(desc, " \t\n") + "\n\n"
		}
		desc += "Format: " + s.Format + "."
	}
	b.ms.addString("description", desc)
}

// knownFormat reports whether format is one JSON Schema clients know: a
// JSON Schema 2020-12 format, or one of the OpenAPI Format Registry's
// basic formats, which OpenAPI documents use on most numbers and which the
// common validators (ajv-formats among them) know too. Clients log every
// other value (free text such as "repo.nwo" or "comma-separated list"), so
// it goes into the description.
func knownFormat(format string) bool {
	switch format {
	case "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
		"ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template",
		"json-pointer", "relative-json-pointer", "regex",
		"int32", "int64", "float", "double", "byte", "binary", "password":
		return true
	}
	return false
}

// formatAndContent writes format and how string content is encoded.
// Arguments are JSON, so binary data in an input schema travels as base64
// even where the document does not say so.
func (b *schemaBuild) formatAndContent(s *openapi3.Schema) {
	if knownFormat(s.Format) && !b.lenient() {
		b.ms.addString("format", s.Format)
	}
	contentEncoding := s.ContentEncoding
	if b.st.mode == modeInput && contentEncoding == "" && s.Type.Permits(openapi3.TypeString) &&
		(s.Format == "binary" || s.ContentMediaType != "") {
		contentEncoding = "base64"
	}
	b.ms.addString("contentEncoding", contentEncoding)
	b.ms.addString("contentMediaType", s.ContentMediaType)
}

// values writes the keywords holding document values: const, enum, default
// and examples. A 3.0 nullable enum gains null, which it would otherwise
// reject. A value encoding/json cannot represent is left out.
func (b *schemaBuild) values(s *openapi3.Schema) {
	if s.Const != nil && !b.lenient() {
		b.ms.addValue("const", s.Const)
	}
	if len(s.Enum) > 0 && !b.lenient() {
		enum := s.Enum
		if s.Nullable && !slices.Contains(enum, nil) {
			enum = append(slices.Clip(enum), nil)
		}
		b.ms.addValue("enum", enum)
	}
	if s.Default != nil {
		b.ms.addValue("default", s.Default)
	}
	if ex := examplesOf(s); len(ex) > 0 {
		b.ms.addValue("examples", ex)
	}
}

// flags writes the boolean annotations.
func (b *schemaBuild) flags(s *openapi3.Schema) {
	b.ms.addTrue("deprecated", s.Deprecated)
	b.ms.addTrue("readOnly", s.ReadOnly)
	b.ms.addTrue("writeOnly", s.WriteOnly)
}

// numberBounds writes minimum, maximum and multipleOf. A multipleOf that
// is not a positive finite number is invalid JSON Schema and is left out.
func (b *schemaBuild) numberBounds(s *openapi3.Schema) {
	if b.lenient() {
		return
	}
	b.bound("minimum", "exclusiveMinimum", s.Min, s.ExclusiveMin)
	b.bound("maximum", "exclusiveMaximum", s.Max, s.ExclusiveMax)
	if s.MultipleOf != nil && *s.MultipleOf > 0 && !math.IsInf(*s.MultipleOf, 0) {
		b.ms.add("multipleOf", jsonNumber(*s.MultipleOf))
	}
}

// bound writes one side's bound. OpenAPI 3.0 writes an exclusive bound as a
// boolean modifier of minimum/maximum (exclusiveMinimum: true), 2020-12 and
// OpenAPI 3.1 as the bound itself (exclusiveMinimum: 5); both come out in
// the 2020-12 form.
func (b *schemaBuild) bound(inclusiveKey, exclusiveKey string, v *float64, ex openapi3.ExclusiveBound) {
	switch {
	case ex.Value != nil: // 3.1: a number, beside any inclusive bound
		if v != nil {
			b.ms.add(inclusiveKey, jsonNumber(*v))
		}
		b.ms.add(exclusiveKey, jsonNumber(*ex.Value))
	case v != nil && ex.IsTrue(): // 3.0: the inclusive bound made exclusive
		b.ms.add(exclusiveKey, jsonNumber(*v))
	case v != nil:
		b.ms.add(inclusiveKey, jsonNumber(*v))
	}
}

// stringConstraints writes minLength, maxLength and pattern. kin-openapi
// reads an absent minLength as 0, which constrains nothing.
func (b *schemaBuild) stringConstraints(s *openapi3.Schema) {
	if b.lenient() {
		return
	}
	b.ms.addNonZeroUint("minLength", s.MinLength)
	b.ms.addUintPtr("maxLength", s.MaxLength)
	b.ms.addString("pattern", s.Pattern)
}

// arrayKeywords writes the array keywords.
func (b *schemaBuild) arrayKeywords(s *openapi3.Schema) {
	b.addSub("items", s.Items)
	b.addSubs("prefixItems", s.PrefixItems)
	if b.lenient() {
		return
	}
	b.addSub("contains", s.Contains)
	b.ms.addUintPtr("minContains", s.MinContains)
	b.ms.addUintPtr("maxContains", s.MaxContains)
	b.ms.addNonZeroUint("minItems", s.MinItems)
	b.ms.addUintPtr("maxItems", s.MaxItems)
	b.ms.addTrue("uniqueItems", s.UniqueItems)
}

// hiddenProperties is the set of property names left out in this direction:
// the schema's own readOnly (input) or writeOnly (output) properties, those
// an enclosing allOf hides, and those any of the schema's allOf members
// hides, since a property one member marks readOnly is not required by
// another either.
func hiddenProperties(s *openapi3.Schema, mode schemaMode, hidden map[string]bool) map[string]bool {
	hide := map[string]bool{}
	for name, p := range s.Properties {
		if hiddenIn(mode, p) {
			hide[name] = true
		}
	}
	for name := range hidden {
		hide[name] = true
	}
	for _, m := range s.AllOf {
		if m != nil && m.Value != nil {
			for name, p := range m.Value.Properties {
				if hiddenIn(mode, p) {
					hide[name] = true
				}
			}
		}
	}
	return hide
}

// objectKeywords writes the object keywords, leaving the hidden properties
// out of properties and required. "properties" is written even when every
// property is hidden, as {}.
func (b *schemaBuild) objectKeywords(s *openapi3.Schema, hide map[string]bool) {
	if len(s.Properties) > 0 {
		var props members
		for _, name := range sortedKeysOf(s.Properties) {
			if !hide[name] {
				props.add(name, b.sub(s.Properties[name]))
			}
		}
		b.ms.add("properties", props.json())
	}
	b.addSchemaMap("patternProperties", s.PatternProperties)
	b.addBoolOrSchema("additionalProperties", s.AdditionalProperties, true)
	if b.lenient() {
		b.addBoolOrSchema("unevaluatedProperties", s.UnevaluatedProperties, true)
		return
	}
	b.addSub("propertyNames", s.PropertyNames)
	b.required(s.Required, hide)
	if len(s.DependentRequired) > 0 {
		var dr members
		for _, k := range sortedKeysOf(s.DependentRequired) {
			dr.add(k, jsonStrings(s.DependentRequired[k]))
		}
		b.ms.add("dependentRequired", dr.json())
	}
	b.addSchemaMap("dependentSchemas", s.DependentSchemas)
	b.ms.addNonZeroUint("minProperties", s.MinProps)
	b.ms.addUintPtr("maxProperties", s.MaxProps)
	// Only the object keywords' false is relaxed in output schemas;
	// unevaluatedItems is written as declared in both directions.
	b.addBoolOrSchema("unevaluatedItems", s.UnevaluatedItems, false)
	b.addBoolOrSchema("unevaluatedProperties", s.UnevaluatedProperties, true)
}

// required writes the required names that are not hidden, each once, in
// the document's order; nothing when none is left.
func (b *schemaBuild) required(names []string, hide map[string]bool) {
	var req []string
	for _, name := range names {
		if !hide[name] && !slices.Contains(req, name) {
			req = append(req, name)
		}
	}
	if len(req) > 0 {
		b.ms.add("required", jsonStrings(req))
	}
}

// composition writes allOf, anyOf, oneOf, not and if/then/else.
func (b *schemaBuild) composition(s *openapi3.Schema, hide map[string]bool) {
	if len(s.AllOf) > 0 {
		b.ms.add("allOf", b.allOf(s.AllOf, hide))
	}
	b.addSubs("anyOf", s.AnyOf)
	if b.lenient() {
		// Without their constraints several branches may fit one value,
		// which oneOf would refuse. not and if/then/else only constrain.
		switch {
		case len(s.OneOf) == 0:
		case len(s.AnyOf) == 0:
			b.addSubs("anyOf", s.OneOf)
		case len(s.AllOf) == 0:
			// anyOf is taken: the oneOf's anyOf goes into an allOf.
			b.ms.add("allOf", jsonArray([][]byte{members{{"anyOf", b.subs(s.OneOf)}}.json()}))
		default:
			b.addSubs("oneOf", s.OneOf) // rare enough to keep as written
		}
		return
	}
	b.addSubs("oneOf", s.OneOf)
	b.addSub("not", s.Not)
	b.addSub("if", s.If)
	b.addSub("then", s.Then)
	b.addSub("else", s.Else)
}

// allOf converts allOf's members. An inline member is converted with the
// enclosing schema's hidden properties, so that it does not require a
// property the whole leaves out; a $ref member is a shared definition and
// cannot be, so it is converted as it is.
func (b *schemaBuild) allOf(refs openapi3.SchemaRefs, hide map[string]bool) []byte {
	items := make([][]byte, len(refs))
	for i, m := range refs {
		if m != nil && m.Ref == "" && m.Value != nil && m.Value.Always == nil {
			items[i] = b.c.members(m.Value, b.st, b.depth+1, hide).json()
		} else {
			items[i] = b.sub(m)
		}
	}
	return jsonArray(items)
}

// annotationKeys stay outside the anyOf that nullableWrap adds.
var annotationKeys = []string{"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"}

// nullableWrap makes a 3.0 nullable schema with no type accept null too:
// the annotations stay outside, every constraint goes into
// anyOf [constraints, {"type": "null"}].
func nullableWrap(ms members) members {
	var outer, inner members
	for _, m := range ms {
		if slices.Contains(annotationKeys, m.key) {
			outer = append(outer, m)
		} else {
			inner = append(inner, m)
		}
	}
	if len(inner) == 0 {
		return ms // accepts anything, null included
	}
	if enum := inner.get("enum"); enum != nil && len(inner) == 1 {
		return ms // the enum already lists null
	}
	outer.add("anyOf", jsonArray([][]byte{inner.json(), []byte(`{"type":"null"}`)}))
	return outer
}

// examplesOf merges 3.1's examples and 3.0's example into one list for the
// 2020-12 examples keyword, leaving out example when examples already has
// it.
func examplesOf(s *openapi3.Schema) []any {
	ex := slices.Clone(s.Examples)
	if s.Example != nil {
		dup := false
		if b := jsonValue(s.Example); b != nil {
			for _, e := range ex {
				if string(jsonValue(e)) == string(b) {
					dup = true
					break
				}
			}
		}
		if !dup {
			ex = append(ex, s.Example)
		}
	}
	return ex
}
