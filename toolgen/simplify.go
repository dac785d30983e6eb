package toolgen

// Schemas clients can afford. A tool schema generated from a big API (a
// response that embeds a customer that embeds its invoices that embed...)
// can run to hundreds of kilobytes, and clients hand every tools/list to
// the model. Beyond Options.MaxSchemaBytes a schema is simplified step by
// step, each step a valid JSON Schema that accepts at least what the one
// before accepted, until it fits:
//
//  1. descriptions, titles and examples go, from the deepest level up to
//     the second (the tool's own properties keep theirs);
//  2. levels are cut, from the deepest up: a cut subschema becomes one that
//     accepts anything and says so in its description; $defs no longer
//     referenced go;
//  3. last, the tool's own properties lose their descriptions, and then
//     their subschemas (the names stay, each accepting anything).
//
// Depth is data depth: properties, items and the like go one level down;
// allOf/anyOf/oneOf/not/if/then/else stay on their level. A definition in
// $defs counts from the shallowest place that references it, so it is
// simplified once whatever references it, and is kept exactly when that
// place is.
//
// The work is on the generator's own compact JSON, without decoding it.
// Big APIs share their definitions between hundreds of tools, so each
// definition's simplified forms are cached for the whole generation.

import (
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

// DefaultMaxSchemaBytes is Options.MaxSchemaBytes' default.
const DefaultMaxSchemaBytes = 32 << 10

// cutNote is the description of a subschema cut for size.
const cutNote = "(omitted to keep the schema small)"

// cutStub is what a cut subschema becomes.
var cutStub = append(appendString([]byte(`{"description":`), cutNote), '}')

// How a keyword holds subschemas, and whether they are one level down.
type subKind uint8

const (
	subNone subKind = iota
	subOne          // a schema
	subList         // an array of schemas
	subMap          // an object of schemas
)

var subKeywords = map[string]struct {
	kind subKind
	down int
}{
	"additionalProperties": {subOne, 1}, "items": {subOne, 1}, "contains": {subOne, 1},
	"propertyNames": {subOne, 1}, "unevaluatedItems": {subOne, 1}, "unevaluatedProperties": {subOne, 1},
	"prefixItems": {subList, 1},
	"properties":  {subMap, 1}, "patternProperties": {subMap, 1},
	"not": {subOne, 0}, "if": {subOne, 0}, "then": {subOne, 0}, "else": {subOne, 0},
	"allOf": {subList, 0}, "anyOf": {subList, 0}, "oneOf": {subList, 0},
	"dependentSchemas": {subMap, 0},
}

func isDocKey(k []byte) bool {
	return string(k) == "description" || string(k) == "title" || string(k) == "examples"
}

// noLimit is a step setting that is off.
const noLimit = 1 << 20

// step is one simplification: docs go at depth >= docsFrom, subschemas
// deeper than cutAt become stubs.
type step struct{ docsFrom, cutAt int }

// simplification says what shrinking a schema took.
type simplification struct {
	before, after int
	docsFrom      int // descriptions dropped from this depth down (0: none)
	cutAt         int // levels below this one cut (-1: none)
}

// fitter simplifies the schemas of one generation, sharing the work on
// definitions between them.
type fitter struct {
	max  int
	defs map[string]*defForm // by the definition's JSON
}

func newFitter(max int) *fitter { return &fitter{max: max, defs: map[string]*defForm{}} }

// defForm is one definition's JSON: what it references and its
// simplified forms, relative to its own depth.
type defForm struct {
	raw    []byte
	refs   []refAt
	deep   int // its deepest level, relative
	cached map[step][]byte
}

type refAt struct {
	name  string
	depth int
}

func (f *fitter) form(raw []byte) *defForm {
	if d, ok := f.defs[string(raw)]; ok {
		return d
	}
	d := &defForm{raw: raw, cached: map[step][]byte{}}
	var w rewriter
	w.step = step{noLimit, noLimit}
	w.collect = true
	w.rewrite(nil, raw, 0)
	d.refs, d.deep = w.refs, w.deep
	f.defs[string(raw)] = d
	return d
}

// at is the definition simplified by s when it sits at depth m.
func (d *defForm) at(s step, m int) []byte {
	rel := step{docsFrom: min(max(s.docsFrom-m, 0), d.deep+1), cutAt: min(s.cutAt-m, d.deep)}
	if b, ok := d.cached[rel]; ok {
		return b
	}
	if rel == (step{d.deep + 1, d.deep}) {
		d.cached[rel] = d.raw // nothing to do
		return d.raw
	}
	w := rewriter{step: rel}
	b := w.rewrite(make([]byte, 0, len(d.raw)), d.raw, 0)
	d.cached[rel] = b
	return b
}

// simplifySchema shrinks schema to max bytes or under (a one-off fitter).
func simplifySchema(schema []byte, max int) ([]byte, simplification, bool) {
	return newFitter(max).fit(schema)
}

// fit shrinks schema to f.max bytes or under, if it can; changed is false
// when it was small enough already (or f.max is not positive). A schema no
// step brings under the bound comes back at its smallest: the names of the
// top level's properties, each accepting anything.
func (f *fitter) fit(schema []byte) (out []byte, how simplification, changed bool) {
	if f.max <= 0 || len(schema) <= f.max {
		return schema, simplification{}, false
	}
	// The root, without its $defs, and the definitions by name.
	var rootRaw []byte
	defs := map[string]*defForm{}
	var names []string
	err := jsonlex.ScanObject(schema, func(key, val []byte) error {
		if string(key) != "$defs" {
			return nil
		}
		return jsonlex.ScanObject(val, func(name, body []byte) error {
			n := string(name)
			defs[n] = f.form(body)
			names = append(names, n)
			return nil
		})
	})
	if err != nil {
		return schema, simplification{}, false
	}
	slices.Sort(names)
	var rw rewriter
	rw.step, rw.collect, rw.skipDefs = step{noLimit, noLimit}, true, true
	rootRaw = rw.rewrite(nil, schema, 0)
	rootRefs, rootDeep := rw.refs, rw.deep

	// Each definition's shallowest depth, through the references.
	depth := map[string]int{}
	queue := slices.Clone(rootRefs)
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		d, ok := defs[r.name]
		if old, seen := depth[r.name]; !ok || seen && old <= r.depth {
			continue
		}
		depth[r.name] = r.depth
		for _, x := range d.refs {
			queue = append(queue, refAt{x.name, r.depth + x.depth})
		}
	}
	deepest := rootDeep
	for name, m := range depth {
		deepest = max(deepest, m+defs[name].deep)
	}

	build := func(s step) []byte {
		w := rewriter{step: s, skipDefs: true}
		b := w.rewrite(make([]byte, 0, f.max), rootRaw, 0)
		first := true
		for _, name := range names {
			m, reached := depth[name]
			if !reached || m > s.cutAt {
				continue // unreferenced, or referenced only from cut places
			}
			if first {
				b = b[:len(b)-1] // the root's closing brace
				if len(b) > 1 {
					b = append(b, ',')
				}
				b = append(b, `"$defs":{`...)
				first = false
			} else {
				b = append(b, ',')
			}
			b = appendString(b, name)
			b = append(b, ':')
			b = append(b, defs[name].at(s, m)...)
		}
		if !first {
			b = append(b, "}}"...)
		}
		return b
	}
	how.before = len(schema)
	// A step's size only shrinks as its level rises toward the root:
	// binary-search the deepest level that fits.
	search := func(lo, hi int, at func(int) step) ([]byte, step, bool) {
		var best []byte
		var bestStep step
		for lo <= hi {
			mid := (lo + hi) / 2
			if b := build(at(mid)); len(b) <= f.max {
				best, bestStep, lo = b, at(mid), mid+1
			} else {
				hi = mid - 1
			}
		}
		return best, bestStep, best != nil
	}
	b, s, fits := search(2, deepest, func(l int) step { return step{l, noLimit} })
	if !fits {
		b, s, fits = search(1, deepest-1, func(l int) step { return step{2, l} })
	}
	if !fits {
		// The top level's descriptions, then its subschemas.
		s = step{1, 1}
		if b = build(s); len(b) > f.max {
			s = step{1, 0}
			b = build(s)
		}
	}
	how.after, how.docsFrom, how.cutAt = len(b), s.docsFrom, s.cutAt
	if s.cutAt == noLimit {
		how.cutAt = -1
	}
	return b, how, true
}

// rewriter writes a schema with a step applied; with collect it also
// notes the $defs references and the deepest level it saw.
type rewriter struct {
	step     step
	collect  bool
	skipDefs bool // leave out the root's $defs member
	refs     []refAt
	deep     int
}

func (w *rewriter) rewrite(dst, raw []byte, depth int) []byte {
	if len(raw) == 0 || raw[0] != '{' {
		return append(dst, raw...)
	}
	if w.collect {
		w.deep = max(w.deep, depth)
	}
	root := w.skipDefs && depth == 0 && len(dst) == 0
	dst = append(dst, '{')
	n := 0
	_ = jsonlex.ScanObject(raw, func(key, val []byte) error {
		if isDocKey(key) && depth >= w.step.docsFrom || root && string(key) == "$defs" {
			return nil
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendString(dst, string(key))
		dst = append(dst, ':')
		if w.collect && string(key) == "$ref" {
			if s, ok := jsonlex.String(val); ok {
				if name, ok := defName(s); ok {
					w.refs = append(w.refs, refAt{name, depth})
				}
			}
		}
		sub, ok := subKeywords[string(key)]
		switch {
		case !ok:
			dst = append(dst, val...)
		case sub.kind == subOne:
			dst = w.child(dst, val, depth+sub.down)
		case sub.kind == subList && val[0] == '[':
			dst = w.elements(dst, val, depth+sub.down)
		case sub.kind == subMap && val[0] == '{':
			dst = append(dst, '{')
			m := 0
			_ = jsonlex.ScanObject(val, func(k, v []byte) error {
				if m > 0 {
					dst = append(dst, ',')
				}
				m++
				dst = appendString(dst, string(k))
				dst = append(dst, ':')
				dst = w.child(dst, v, depth+sub.down)
				return nil
			})
			dst = append(dst, '}')
		default:
			dst = append(dst, val...)
		}
		return nil
	})
	return append(dst, '}')
}

// child writes a subschema at depth: a stub beyond the cut.
func (w *rewriter) child(dst, val []byte, depth int) []byte {
	switch {
	case len(val) > 0 && val[0] == '[':
		return w.elements(dst, val, depth) // items as an array (older drafts)
	case len(val) == 0 || val[0] != '{':
		return append(dst, val...) // a boolean schema
	case depth > w.step.cutAt:
		return append(dst, cutStub...)
	}
	return w.rewrite(dst, val, depth)
}

// elements writes an array of subschemas.
func (w *rewriter) elements(dst, arr []byte, depth int) []byte {
	start := len(dst)
	dst = append(dst, '[')
	i := skipSpace(arr, 1)
	for n := 0; i < len(arr) && arr[i] != ']'; n++ {
		end, err := jsonlex.SkipValue(arr, i)
		if err != nil {
			return append(dst[:start], arr...) // not ours to fix: as it is
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = w.child(dst, arr[i:end], depth)
		i = skipSpace(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	return append(dst, ']')
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

func defName(ref string) (string, bool) {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	return name, ok && !strings.Contains(name, "/")
}
