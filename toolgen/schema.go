package toolgen

import (
	"encoding/json"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// OpenAPI schemas → JSON Schema 2020-12.
//
// Every schema $ref becomes {"$ref": "#/$defs/Name"} and the referenced
// schema is converted once, into that tool's $defs; nothing referenced is
// ever inlined, so circular schemas stay finite. Each tool's schema carries
// only the definitions reachable from it. Definitions are converted once per
// Set and per direction (input or output) and reused by every tool.
//
// The direction matters: input schemas leave out readOnly properties (the
// server sets them), output schemas leave out writeOnly ones and relax
// additionalProperties: false, so that a backend returning a field its
// document forgot does not make the client reject the result.

type schemaMode uint8

const (
	modeInput schemaMode = iota
	modeOutput
)

// maxSchemaDepth bounds the nesting of inline (not referenced) schemas.
const maxSchemaDepth = 64

// def is one entry of $defs.
type def struct {
	name string
	src  *openapi3.Schema
	json []byte // the converted schema, once converted
	deps []*def // definitions it refers to directly
}

type converter struct {
	doc  *openapi3.T
	is31 bool
	// compName names the root document's component schemas by their value,
	// so every $ref to one (however written) is the same definition.
	compName map[*openapi3.Schema]string
	names    map[string]string // definition id → name in $defs
	taken    map[string]bool   // names in use
	defs     [2]map[string]*def
	warn     func(loc, msg string)
}

func newConverter(doc *openapi3.T, warn func(loc, msg string)) *converter {
	c := &converter{
		doc:      doc,
		is31:     doc.IsOpenAPI31OrLater(),
		compName: map[*openapi3.Schema]string{},
		names:    map[string]string{},
		taken:    map[string]bool{},
		defs:     [2]map[string]*def{{}, {}},
		warn:     warn,
	}
	if doc.Components != nil {
		// Component names are reserved first, in sorted order, so a
		// component's name in $defs never depends on which tool met it first.
		names := make([]string, 0, len(doc.Components.Schemas))
		for name := range doc.Components.Schemas {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			ref := doc.Components.Schemas[name]
			if ref == nil || ref.Value == nil {
				continue
			}
			if _, dup := c.compName[ref.Value]; !dup {
				c.compName[ref.Value] = name
			}
			c.nameFor("components/"+name, name)
		}
	}
	return c
}

// nameFor returns the $defs name of a definition id, choosing a free one
// derived from hint the first time.
func (c *converter) nameFor(id, hint string) string {
	if n, ok := c.names[id]; ok {
		return n
	}
	base := sanitizeDefName(hint)
	n := base
	for i := 2; c.taken[n]; i++ {
		n = base + "_" + strconv.Itoa(i)
	}
	c.taken[n] = true
	c.names[id] = n
	return n
}

func sanitizeDefName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "schema"
	}
	return b.String()
}

// state collects the definitions one schema refers to.
type state struct {
	mode schemaMode
	deps []*def
	seen map[*def]bool
	loc  string // for warnings
}

func newState(mode schemaMode, loc string) *state {
	return &state{mode: mode, seen: map[*def]bool{}, loc: loc}
}

func (st *state) use(d *def) {
	if !st.seen[d] {
		st.seen[d] = true
		st.deps = append(st.deps, d)
	}
}

// componentRef resolves "#/components/schemas/Name" (or a bare Name, as a
// discriminator mapping may say) against the root document.
func (c *converter) componentRef(ref string) *openapi3.SchemaRef {
	name, ok := strings.CutPrefix(ref, "#/components/schemas/")
	if !ok {
		if strings.ContainsAny(ref, "/#") {
			return nil
		}
		name = ref
	}
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	if c.doc.Components == nil {
		return nil
	}
	if s := c.doc.Components.Schemas[name]; s != nil && s.Value != nil {
		return &openapi3.SchemaRef{Ref: "#/components/schemas/" + name, Value: s.Value}
	}
	return nil
}

// defFor registers the definition a $ref points at.
func (c *converter) defFor(ref *openapi3.SchemaRef, src *openapi3.Schema, mode schemaMode) *def {
	var id, hint string
	if name, ok := c.compName[src]; ok {
		id, hint = "components/"+name, name
	} else {
		if rp := ref.RefPath(); rp != nil {
			id = rp.String()
		} else {
			id = ref.Ref
		}
		hint = refHint(ref.Ref)
	}
	d := c.defs[mode][id]
	if d == nil {
		d = &def{name: c.nameFor(id, hint), src: src}
		c.defs[mode][id] = d
	}
	return d
}

// refHint names a definition after the last token of its reference, or the
// referenced file's name.
func refHint(ref string) string {
	file, frag, _ := strings.Cut(ref, "#")
	if frag = strings.TrimRight(frag, "/"); frag != "" {
		tok := frag[strings.LastIndexByte(frag, '/')+1:]
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if tok != "" {
			return tok
		}
	}
	base := path.Base(file)
	if ext := path.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	if base == "" || base == "." || base == "/" {
		return "schema"
	}
	return base
}

// convert returns the JSON Schema for ref.
func (c *converter) convert(ref *openapi3.SchemaRef, st *state, depth int) []byte {
	if ref == nil {
		return []byte("{}")
	}
	if ref.Ref != "" {
		return c.refMembers(ref, st, depth).json()
	}
	if ref.Value == nil {
		return []byte("{}")
	}
	if a := ref.Value.Always; a != nil {
		return jsonBool(*a)
	}
	return c.members(ref.Value, st, depth, nil).json()
}

// schemaMembers is convert for callers that add keywords (descriptions of
// parameters): the members of a $ref or of an inline schema. ok is false for
// a boolean schema, returned as raw.
func (c *converter) schemaMembers(ref *openapi3.SchemaRef, st *state) (ms members, raw []byte) {
	switch {
	case ref == nil || (ref.Ref == "" && ref.Value == nil):
		return members{}, nil
	case ref.Ref != "":
		return c.refMembers(ref, st, 0), nil
	case ref.Value.Always != nil:
		return nil, jsonBool(*ref.Value.Always)
	}
	return c.members(ref.Value, st, 0, nil), nil
}

// refMembers is {"$ref": "#/$defs/Name"}, plus the keywords written next to
// the $ref in an OpenAPI 3.1 document, which apply alongside it.
func (c *converter) refMembers(ref *openapi3.SchemaRef, st *state, depth int) members {
	src := ref.Value
	var siblings *openapi3.Schema
	if c.is31 {
		siblings = refSiblings(ref)
		if siblings != nil {
			// kin-openapi applied the siblings to a copy; the definition
			// is the schema as declared.
			if comp := c.componentRef(ref.Ref); comp != nil {
				src = comp.Value
			}
		}
	}
	if src == nil {
		if comp := c.componentRef(ref.Ref); comp != nil {
			src = comp.Value
		} else {
			c.warn(st.loc, "unresolved schema $ref "+strconv.Quote(ref.Ref)+" is accepted as any value")
			return members{}
		}
	}
	d := c.defFor(ref, src, st.mode)
	st.use(d)
	ms := members{{"$ref", jsonString("#/$defs/" + d.name)}}
	if siblings != nil {
		for _, m := range c.members(siblings, st, depth+1, nil) {
			if m.key != "$ref" {
				ms.set(m.key, m.val)
			}
		}
	}
	return ms
}

// refSiblings returns the keywords written next to a $ref (only OpenAPI 3.1
// gives them meaning), or nil. kin-openapi keeps them private but writes
// them back when marshaling the reference.
func refSiblings(ref *openapi3.SchemaRef) *openapi3.Schema {
	raw, err := json.Marshal(ref)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	delete(m, "$ref")
	for k := range m {
		if strings.HasPrefix(k, "x-") {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		return nil
	}
	raw, _ = json.Marshal(m)
	var s openapi3.Schema
	if s.UnmarshalJSON(raw) != nil {
		return nil
	}
	return &s
}

// hiddenIn reports whether a property is left out in this direction.
func hiddenIn(mode schemaMode, ref *openapi3.SchemaRef) bool {
	if ref == nil || ref.Value == nil {
		return false
	}
	if mode == modeInput {
		return ref.Value.ReadOnly
	}
	return ref.Value.WriteOnly
}

// members converts an inline schema. hidden lists property names that an
// enclosing allOf leaves out, so that this schema does not require them.
func (c *converter) members(s *openapi3.Schema, st *state, depth int, hidden map[string]bool) members {
	if depth > maxSchemaDepth {
		c.warn(st.loc, "schema nested too deeply; the rest is accepted as any value")
		return members{}
	}
	var ms members
	sub := func(ref *openapi3.SchemaRef) []byte { return c.convert(ref, st, depth+1) }
	subs := func(refs openapi3.SchemaRefs) []byte {
		items := make([][]byte, len(refs))
		for i, r := range refs {
			items[i] = sub(r)
		}
		return jsonArray(items)
	}

	types := s.Type.Slice()
	if s.Nullable && len(types) > 0 && !slices.Contains(types, openapi3.TypeNull) {
		types = append(slices.Clip(types), openapi3.TypeNull)
	}
	switch len(types) {
	case 0:
	case 1:
		ms.add("type", jsonString(types[0]))
	default:
		ms.add("type", jsonStrings(types))
	}
	if s.Title != "" {
		ms.add("title", jsonString(s.Title))
	}
	if s.Description != "" {
		ms.add("description", jsonString(s.Description))
	}
	if s.Format != "" {
		ms.add("format", jsonString(s.Format))
	}
	contentEncoding := s.ContentEncoding
	if st.mode == modeInput && contentEncoding == "" && s.Type.Permits(openapi3.TypeString) &&
		(s.Format == "binary" || s.ContentMediaType != "") {
		// Arguments are JSON: binary data travels as base64.
		contentEncoding = "base64"
	}
	if contentEncoding != "" {
		ms.add("contentEncoding", jsonString(contentEncoding))
	}
	if s.ContentMediaType != "" {
		ms.add("contentMediaType", jsonString(s.ContentMediaType))
	}
	if s.Const != nil {
		if v := jsonValue(s.Const); v != nil {
			ms.add("const", v)
		}
	}
	if len(s.Enum) > 0 {
		enum := s.Enum
		if s.Nullable && !slices.Contains(enum, nil) {
			enum = append(slices.Clip(enum), nil)
		}
		if v := jsonValue(enum); v != nil {
			ms.add("enum", v)
		}
	}
	if s.Default != nil {
		if v := jsonValue(s.Default); v != nil {
			ms.add("default", v)
		}
	}
	if ex := examplesOf(s); len(ex) > 0 {
		if v := jsonValue(ex); v != nil {
			ms.add("examples", v)
		}
	}
	if s.Deprecated {
		ms.add("deprecated", jsonTrue)
	}
	if s.ReadOnly {
		ms.add("readOnly", jsonTrue)
	}
	if s.WriteOnly {
		ms.add("writeOnly", jsonTrue)
	}

	// Numbers. OpenAPI 3.0 writes an exclusive bound as a boolean modifier
	// of minimum/maximum; 2020-12 as the bound itself.
	addBound := func(inclusiveKey, exclusiveKey string, v *float64, ex openapi3.ExclusiveBound) {
		switch {
		case ex.Value != nil:
			if v != nil {
				ms.add(inclusiveKey, jsonNumber(*v))
			}
			ms.add(exclusiveKey, jsonNumber(*ex.Value))
		case v != nil && ex.IsTrue():
			ms.add(exclusiveKey, jsonNumber(*v))
		case v != nil:
			ms.add(inclusiveKey, jsonNumber(*v))
		}
	}
	addBound("minimum", "exclusiveMinimum", s.Min, s.ExclusiveMin)
	addBound("maximum", "exclusiveMaximum", s.Max, s.ExclusiveMax)
	if s.MultipleOf != nil && *s.MultipleOf > 0 && !math.IsInf(*s.MultipleOf, 0) {
		ms.add("multipleOf", jsonNumber(*s.MultipleOf))
	}

	// Strings.
	if s.MinLength > 0 {
		ms.add("minLength", jsonUint(s.MinLength))
	}
	if s.MaxLength != nil {
		ms.add("maxLength", jsonUint(*s.MaxLength))
	}
	if s.Pattern != "" {
		ms.add("pattern", jsonString(s.Pattern))
	}

	// Arrays.
	if s.Items != nil {
		ms.add("items", sub(s.Items))
	}
	if len(s.PrefixItems) > 0 {
		ms.add("prefixItems", subs(s.PrefixItems))
	}
	if s.Contains != nil {
		ms.add("contains", sub(s.Contains))
	}
	if s.MinContains != nil {
		ms.add("minContains", jsonUint(*s.MinContains))
	}
	if s.MaxContains != nil {
		ms.add("maxContains", jsonUint(*s.MaxContains))
	}
	if s.MinItems > 0 {
		ms.add("minItems", jsonUint(s.MinItems))
	}
	if s.MaxItems != nil {
		ms.add("maxItems", jsonUint(*s.MaxItems))
	}
	if s.UniqueItems {
		ms.add("uniqueItems", jsonTrue)
	}

	// Objects.
	hide := map[string]bool{}
	for name, p := range s.Properties {
		if hiddenIn(st.mode, p) {
			hide[name] = true
		}
	}
	for name := range hidden {
		hide[name] = true
	}
	if len(s.AllOf) > 0 {
		// A property one allOf member marks readOnly is not required by
		// another either.
		for _, m := range s.AllOf {
			if m != nil && m.Value != nil {
				for name, p := range m.Value.Properties {
					if hiddenIn(st.mode, p) {
						hide[name] = true
					}
				}
			}
		}
	}
	if len(s.Properties) > 0 {
		var props members
		for _, name := range sortedKeysOf(s.Properties) {
			if !hide[name] {
				props.add(name, sub(s.Properties[name]))
			}
		}
		ms.add("properties", props.json())
	}
	if len(s.PatternProperties) > 0 {
		ms.add("patternProperties", c.schemaMap(s.PatternProperties, st, depth))
	}
	if ap := s.AdditionalProperties; ap.Schema != nil {
		ms.add("additionalProperties", sub(ap.Schema))
	} else if ap.Has != nil && (*ap.Has || st.mode == modeInput) {
		ms.add("additionalProperties", jsonBool(*ap.Has))
	}
	if s.PropertyNames != nil {
		ms.add("propertyNames", sub(s.PropertyNames))
	}
	if len(s.Required) > 0 {
		var req []string
		for _, name := range s.Required {
			if !hide[name] && !slices.Contains(req, name) {
				req = append(req, name)
			}
		}
		if len(req) > 0 {
			ms.add("required", jsonStrings(req))
		}
	}
	if len(s.DependentRequired) > 0 {
		keys := sortedKeysOf(s.DependentRequired)
		var dr members
		for _, k := range keys {
			dr.add(k, jsonStrings(s.DependentRequired[k]))
		}
		ms.add("dependentRequired", dr.json())
	}
	if len(s.DependentSchemas) > 0 {
		ms.add("dependentSchemas", c.schemaMap(s.DependentSchemas, st, depth))
	}
	if s.MinProps > 0 {
		ms.add("minProperties", jsonUint(s.MinProps))
	}
	if s.MaxProps != nil {
		ms.add("maxProperties", jsonUint(*s.MaxProps))
	}
	if u := s.UnevaluatedItems; u.Schema != nil {
		ms.add("unevaluatedItems", sub(u.Schema))
	} else if u.Has != nil {
		ms.add("unevaluatedItems", jsonBool(*u.Has))
	}
	if u := s.UnevaluatedProperties; u.Schema != nil {
		ms.add("unevaluatedProperties", sub(u.Schema))
	} else if u.Has != nil && (*u.Has || st.mode == modeInput) {
		ms.add("unevaluatedProperties", jsonBool(*u.Has))
	}

	// Composition.
	if len(s.AllOf) > 0 {
		items := make([][]byte, len(s.AllOf))
		for i, m := range s.AllOf {
			if m != nil && m.Ref == "" && m.Value != nil && m.Value.Always == nil {
				items[i] = c.members(m.Value, st, depth+1, hide).json()
			} else {
				items[i] = sub(m)
			}
		}
		ms.add("allOf", jsonArray(items))
	}
	if len(s.AnyOf) > 0 {
		ms.add("anyOf", subs(s.AnyOf))
	}
	if len(s.OneOf) > 0 {
		ms.add("oneOf", subs(s.OneOf))
	}
	if s.Not != nil {
		ms.add("not", sub(s.Not))
	}
	if s.If != nil {
		ms.add("if", sub(s.If))
	}
	if s.Then != nil {
		ms.add("then", sub(s.Then))
	}
	if s.Else != nil {
		ms.add("else", sub(s.Else))
	}
	if d := s.Discriminator; d != nil && d.PropertyName != "" {
		ms.add("discriminator", c.discriminator(d, st))
	}
	if s.ContentSchema != nil {
		ms.add("contentSchema", sub(s.ContentSchema))
	}

	// OpenAPI 3.0 nullable with no type to extend: null or the rest.
	if s.Nullable && len(types) == 0 {
		ms = nullableWrap(ms)
	}
	return ms
}

// annotationKeys stay outside the anyOf that nullableWrap adds.
var annotationKeys = []string{"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"}

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

func (c *converter) schemaMap(m openapi3.Schemas, st *state, depth int) []byte {
	var out members
	for _, k := range sortedKeysOf(m) {
		out.add(k, c.convert(m[k], st, depth+1))
	}
	return out.json()
}

// discriminator keeps propertyName and rewrites each mapping to the
// definition it names.
func (c *converter) discriminator(d *openapi3.Discriminator, st *state) []byte {
	ms := members{{"propertyName", jsonString(d.PropertyName)}}
	if len(d.Mapping) == 0 {
		return ms.json()
	}
	var mapping members
	for _, k := range sortedKeysOf(d.Mapping) {
		mr := d.Mapping[k]
		ref := (*openapi3.SchemaRef)(&mr)
		if ref.Value == nil {
			ref = c.componentRef(mr.Ref)
		}
		if ref == nil || ref.Value == nil {
			c.warn(st.loc, "discriminator mapping "+strconv.Quote(k)+" → "+strconv.Quote(mr.Ref)+" does not resolve; left out")
			continue
		}
		target := c.defFor(ref, ref.Value, st.mode)
		st.use(target)
		mapping.add(k, jsonString("#/$defs/"+target.name))
	}
	if len(mapping) > 0 {
		ms.add("mapping", mapping.json())
	}
	return ms.json()
}

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

func sortedKeysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ensure converts d if it has not been yet.
func (c *converter) ensure(d *def, mode schemaMode, loc string) {
	if d.json != nil {
		return
	}
	st := newState(mode, loc)
	if a := d.src.Always; a != nil {
		d.json = jsonBool(*a)
		return
	}
	d.json = c.members(d.src, st, 0, nil).json()
	d.deps = st.deps
}

// defsJSON is the $defs object holding every definition reachable from
// roots, sorted by name; nil when there are none.
func (c *converter) defsJSON(roots []*def, mode schemaMode, loc string) []byte {
	if len(roots) == 0 {
		return nil
	}
	seen := map[*def]bool{}
	queue := slices.Clone(roots)
	for _, d := range roots {
		seen[d] = true
	}
	for i := 0; i < len(queue); i++ {
		d := queue[i]
		c.ensure(d, mode, loc)
		for _, dep := range d.deps {
			if !seen[dep] {
				seen[dep] = true
				queue = append(queue, dep)
			}
		}
	}
	slices.SortFunc(queue, func(a, b *def) int { return strings.Compare(a.name, b.name) })
	size := 2
	ms := make(members, len(queue))
	for i, d := range queue {
		size += len(d.name) + len(d.json) + 4
		ms[i] = member{key: d.name, val: d.json}
	}
	return ms.appendJSON(make([]byte, 0, size))
}
