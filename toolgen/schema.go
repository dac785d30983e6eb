package toolgen

import (
	"encoding/json"
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
	// modeLenient is an output schema with the response's shape only
	// (output_schema: lenient): see schema_keywords.go.
	modeLenient
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
	defs     [3]map[string]*def
	warn     func(loc, msg string)
}

func newConverter(doc *openapi3.T, warn func(loc, msg string)) *converter {
	c := &converter{
		doc:      doc,
		is31:     doc.IsOpenAPI31OrLater(),
		compName: map[*openapi3.Schema]string{},
		names:    map[string]string{},
		taken:    map[string]bool{},
		defs:     [3]map[string]*def{{}, {}, {}},
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

// schemaMap converts a map of subschemas (patternProperties,
// dependentSchemas) into an object sorted by key.
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
