package toolgen

// The schema_refs: inline dialect. Some model providers reject any $ref,
// so a Set can also list its tools with every reference to the schema's
// own $defs replaced by the definition it names (Set.InlineTools).
//
// A reference with keywords beside it ({"$ref": ..., "description": ...},
// a parameter's description or an OpenAPI 3.1 sibling) becomes the
// definition's keywords with the siblings set over them, in the
// definition's order: the sibling wins. That is exact for annotations
// (description, title, examples, ...); when a sibling would instead
// change what the definition's own keywords check (the same keyword twice,
// or properties beside additionalProperties and the like), the definition
// goes into an allOf beside the siblings, which is what $ref means.
//
// A recursive definition (a Tree whose children are Trees, or a pair that
// reference each other) is expanded InlineRecursionDepth times along any
// path; the reference that would expand it again becomes a small schema
// that keeps the definition's "type" and says it was cut. Discriminator
// mappings name $defs, which are gone: they are left out (the property
// name stays; validators ignore the keyword either way).
//
// Inlining can make a schema far bigger, so the result is then fitted to
// Options.MaxSchemaBytes the way generation fits (simplify.go).
//
// Every step accepts at least what the $defs form accepts: inlining a
// non-recursive definition is exact, and a cut or a simplified subschema
// only accepts more.

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

// InlineRecursionDepth is how many times a recursive definition is
// expanded along any one path of an inlined schema: a Tree of Trees shows
// two levels of Tree, and the reference below the second becomes
//
//	{"type": "object", "description": "Recursive schema Tree, cut after 2 levels: what it holds here is not described."}
//
// ("type" only when the definition has one; it is copied as it is).
const InlineRecursionDepth = 2

// InlineTools returns the tools as Tools does (same order, names,
// descriptions, annotations, Confirm and Binding) with inputSchema and
// outputSchema inlined: no "$ref" and no "$defs" (inline.go), each fitted
// to Options.MaxSchemaBytes. They are computed on the first call and
// shared by every later one; do not modify the slice or the tools.
//
// Binding.OutputSchema stays the $defs form the call path checks results
// against: whatever it accepts, the inlined outputSchema accepts too, so a
// client checking against the inlined one never refuses a result the
// gateway let through.
func (s *Set) InlineTools() []*Tool {
	key := weak.Make(s)
	v, ok := inlined.Load(key)
	if !ok {
		var loaded bool
		if v, loaded = inlined.LoadOrStore(key, new(inlineEntry)); !loaded {
			// The entry must not hold s, or s would never be collected.
			runtime.AddCleanup(s, func(k weak.Pointer[Set]) { inlined.Delete(k) }, key)
		}
	}
	e := v.(*inlineEntry)
	e.once.Do(func() { e.tools = inlineTools(s.tools, s.opts.MaxSchemaBytes) })
	return slices.Clip(e.tools)
}

// inlined holds each Set's inlined tools, so that Set (generate.go) needs
// no field for them; an entry goes when its Set is collected. Weak keys
// keep it from holding any Set alive.
var inlined sync.Map // weak.Pointer[Set] → *inlineEntry

type inlineEntry struct {
	once  sync.Once
	tools []*Tool
}

// inlineTools copies tools with their schemas inlined and fitted to
// maxBytes (not positive: no bound).
func inlineTools(tools []*Tool, maxBytes int) []*Tool {
	f := newFitter(maxBytes)
	fit := func(schema []byte) []byte {
		out, _, _ := f.fit(inlineRefs(schema))
		return out
	}
	out := make([]*Tool, len(tools))
	for i, t := range tools {
		c := *t
		c.InputSchema = fit(t.InputSchema)
		if t.OutputSchema != nil {
			c.OutputSchema = fit(t.OutputSchema)
		}
		out[i] = &c
	}
	return out
}

// inlineRefs returns schema with every reference to its $defs replaced by
// the definition, and without $defs; the other members keep their order.
// A schema without $defs, or that is not a JSON object, comes back as it
// is. References to anything else are left alone.
func inlineRefs(schema []byte) []byte {
	var root members
	var defs []byte
	err := jsonlex.ScanObject(schema, func(key, val []byte) error {
		if string(key) == "$defs" {
			defs = val
		} else {
			root = append(root, member{string(key), val})
		}
		return nil
	})
	if err != nil || defs == nil {
		return schema
	}
	in := &inliner{defs: map[string][]byte{}, done: map[string][]byte{}}
	err = jsonlex.ScanObject(defs, func(name, body []byte) error {
		in.defs[string(name)] = body
		return nil
	})
	if err != nil {
		return schema
	}
	in.components()
	return in.object(make([]byte, 0, len(schema)), root)
}

// inliner inlines one schema's references to its $defs.
type inliner struct {
	defs map[string][]byte // the root's $defs, by name
	// comp is each definition's strongly connected component in peers:
	// the definitions it reaches that also reach it.
	comp  map[string]int
	peers [][]string
	stack []string          // the definitions being expanded, outermost first
	done  map[string][]byte // expansions, by expandKey
}

// schema writes the subschema raw with its references inlined.
func (in *inliner) schema(dst, raw []byte) []byte {
	if !mayRef(raw) {
		return append(dst, raw...)
	}
	var ms members
	err := jsonlex.ScanObject(raw, func(key, val []byte) error {
		ms = append(ms, member{string(key), val})
		return nil
	})
	if err != nil {
		return append(dst, raw...) // a boolean schema, or not ours to fix
	}
	return in.object(dst, ms)
}

// object writes a schema object given its members.
func (in *inliner) object(dst []byte, ms members) []byte {
	ref := ""
	out := make(members, 0, len(ms))
	for _, m := range ms {
		if m.key == "$ref" {
			if name, ok := in.defRef(m.val); ok {
				ref = name
				continue
			}
		}
		out = append(out, member{m.key, in.value(m.key, m.val)})
	}
	if ref == "" {
		return out.appendJSON(dst)
	}
	if in.count(ref) >= InlineRecursionDepth {
		// The siblings go too: leaving out keywords only accepts more.
		return append(dst, in.cut(ref)...)
	}
	return mergeRef(dst, out, in.expand(ref))
}

// defRef is the name of the definition a $ref value names in $defs.
func (in *inliner) defRef(val []byte) (string, bool) {
	s, ok := jsonlex.String(val)
	if !ok {
		return "", false
	}
	name, ok := defName(s)
	if _, def := in.defs[name]; !ok || !def {
		return "", false
	}
	return name, true
}

// value is a member's value with the subschemas it holds inlined.
func (in *inliner) value(key string, val []byte) []byte {
	if key == "discriminator" {
		return withoutDefsMapping(val)
	}
	kind := subKeywords[key].kind
	if key == "contentSchema" {
		kind = subOne
	}
	switch {
	case len(val) > 0 && val[0] == '[' && (kind == subOne || kind == subList):
		// A list of schemas (items as an array in older drafts too).
		var items [][]byte
		if !eachElement(val, func(el []byte) { items = append(items, in.schema(nil, el)) }) {
			return val
		}
		return jsonArray(items)
	case kind == subOne:
		return in.schema(nil, val)
	case kind == subMap && len(val) > 0 && val[0] == '{':
		var ms members
		_ = jsonlex.ScanObject(val, func(k, v []byte) error {
			ms = append(ms, member{string(k), in.schema(nil, v)})
			return nil
		})
		return ms.json()
	}
	return val
}

// expand is the definition name inlined, below the definitions being
// expanded now.
func (in *inliner) expand(name string) []byte {
	key := in.expandKey(name)
	if b, ok := in.done[key]; ok {
		return b
	}
	in.stack = append(in.stack, name)
	b := in.schema(nil, in.defs[name])
	in.stack = in.stack[:len(in.stack)-1]
	in.done[key] = b
	return b
}

// expandKey says what expand's result depends on: the definition, and
// how many times the stack holds each definition of its component. A
// definition outside the component cannot be met again below it (it would
// then be in the component), so the rest of the stack changes nothing,
// and a definition in no cycle has one expansion, however often and
// wherever it is referenced.
func (in *inliner) expandKey(name string) string {
	peers := in.peers[in.comp[name]]
	key := make([]byte, 0, len(name)+1+len(peers))
	key = append(key, name...)
	key = append(key, 0)
	for _, p := range peers {
		key = append(key, byte(in.count(p)))
	}
	return string(key)
}

// count is how many times name is being expanded.
func (in *inliner) count(name string) int {
	n := 0
	for _, s := range in.stack {
		if s == name {
			n++
		}
	}
	return n
}

// cut is what a reference to name becomes below InlineRecursionDepth
// expansions of it: its type, if it says one, and why the rest is not there.
func (in *inliner) cut(name string) []byte {
	var ms members
	_ = jsonlex.ScanObject(in.defs[name], func(key, val []byte) error {
		if string(key) == "type" {
			ms.add("type", val)
		}
		return nil
	})
	ms.add("description", jsonString(fmt.Sprintf("Recursive schema %s, cut after %d levels: what it holds here is not described.", name, InlineRecursionDepth)))
	return ms.json()
}

// Keywords that only annotate: a sibling's replaces the definition's.
var annotationKeywords = map[string]bool{
	"title": true, "description": true, "examples": true, "default": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$comment": true,
}

// Keywords whose meaning depends on others of the same schema object
// (additionalProperties on properties, maxContains on contains, then on
// if, ...): a definition's and a sibling's cannot share one object.
var adjacentKeywords = map[string]bool{
	"properties": true, "patternProperties": true, "additionalProperties": true, "unevaluatedProperties": true,
	"prefixItems": true, "items": true, "unevaluatedItems": true, "contains": true, "minContains": true, "maxContains": true,
	"if": true, "then": true, "else": true,
}

// mergeRef writes a reference's siblings together with its definition,
// already inlined: the definition's keywords with the siblings set over
// them when only annotations meet, else siblings and an allOf of the
// definition (as $ref itself applies it).
func mergeRef(dst []byte, siblings members, def []byte) []byte {
	if len(siblings) == 0 {
		return append(dst, def...)
	}
	var ms members
	err := jsonlex.ScanObject(def, func(key, val []byte) error {
		ms = append(ms, member{string(key), val})
		return nil
	})
	if err == nil && !clash(siblings, ms) {
		for _, s := range siblings {
			ms.set(s.key, s.val)
		}
		return ms.appendJSON(dst)
	}
	out := slices.Clone(siblings)
	if all := out.get("allOf"); len(all) > 1 && all[0] == '[' {
		if string(all) == "[]" {
			out.set("allOf", jsonArray([][]byte{def}))
		} else {
			// A new slice: def is shared with every other use of it.
			b := make([]byte, 0, len(all)+1+len(def))
			b = append(append(b, all[:len(all)-1]...), ',')
			out.set("allOf", append(append(b, def...), ']'))
		}
	} else {
		out.add("allOf", jsonArray([][]byte{def}))
	}
	return out.appendJSON(dst)
}

// clash reports whether a sibling would change what the definition's own
// keywords check, were they one schema object.
func clash(siblings, def members) bool {
	defAdjacent := slices.ContainsFunc(def, func(m member) bool { return adjacentKeywords[m.key] })
	for _, s := range siblings {
		if annotationKeywords[s.key] {
			continue
		}
		if def.has(s.key) || defAdjacent && adjacentKeywords[s.key] {
			return true
		}
	}
	return false
}

// withoutDefsMapping is a discriminator without the mappings into $defs.
func withoutDefsMapping(val []byte) []byte {
	var ms members
	err := jsonlex.ScanObject(val, func(key, v []byte) error {
		if string(key) != "mapping" {
			ms = append(ms, member{string(key), v})
			return nil
		}
		var mapping members
		err := jsonlex.ScanObject(v, func(k, target []byte) error {
			if s, ok := jsonlex.String(target); ok {
				if _, def := defName(s); def {
					return nil
				}
			}
			mapping = append(mapping, member{string(k), target})
			return nil
		})
		if err != nil {
			mapping = members{} // not an object: drop it
		}
		if len(mapping) > 0 {
			ms = append(ms, member{string(key), mapping.json()})
		}
		return nil
	})
	if err != nil {
		return val
	}
	return ms.json()
}

// mayRef reports whether raw may hold a $ref or a discriminator, the
// members inlining changes: most subschemas hold neither and are copied as
// they are. The generator never escapes a key.
func mayRef(raw []byte) bool {
	return bytes.Contains(raw, []byte(`"$ref"`)) || bytes.Contains(raw, []byte(`"discriminator"`))
}

// eachElement calls fn with each element of the JSON array arr; false
// when arr is not one.
func eachElement(arr []byte, fn func(el []byte)) bool {
	if !jsonlex.Valid(arr) || len(arr) == 0 || arr[0] != '[' {
		return false
	}
	i := skipSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		end, _ := jsonlex.SkipValue(arr, i) // valid: checked above
		fn(arr[i:end])
		i = skipSpace(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	return true
}

// components finds the strongly connected components of the definitions'
// references (Tarjan's algorithm), in order of the sorted names.
func (in *inliner) components() {
	names := make([]string, 0, len(in.defs))
	for name := range in.defs {
		names = append(names, name)
	}
	slices.Sort(names)
	in.comp = make(map[string]int, len(names))
	index := make(map[string]int, len(names))
	low := make(map[string]int, len(names))
	onStack := map[string]bool{}
	var stack []string
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack = append(stack, v)
		onStack[v] = true
		refsOf(in.defs[v], func(w string) {
			if _, def := in.defs[w]; !def {
				return
			}
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		})
		if low[v] != index[v] {
			return
		}
		var peers []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			in.comp[w] = len(in.peers)
			peers = append(peers, w)
			if w == v {
				break
			}
		}
		in.peers = append(in.peers, peers)
	}
	for _, name := range names {
		if _, seen := index[name]; !seen {
			strong(name)
		}
	}
}

// refsOf calls fn with the name of each $defs reference in the schema raw,
// where value would inline it.
func refsOf(raw []byte, fn func(name string)) {
	if !mayRef(raw) {
		return
	}
	_ = jsonlex.ScanObject(raw, func(key, val []byte) error {
		k := string(key)
		if k == "$ref" {
			if s, ok := jsonlex.String(val); ok {
				if name, ok := defName(s); ok {
					fn(name)
				}
			}
			return nil
		}
		kind := subKeywords[k].kind
		if k == "contentSchema" {
			kind = subOne
		}
		switch {
		case len(val) > 0 && val[0] == '[' && (kind == subOne || kind == subList):
			eachElement(val, func(el []byte) { refsOf(el, fn) })
		case kind == subOne:
			refsOf(val, fn)
		case kind == subMap:
			_ = jsonlex.ScanObject(val, func(_, v []byte) error { refsOf(v, fn); return nil })
		}
		return nil
	})
}
