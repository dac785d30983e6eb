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

// cutNote ends the description of a schema that was cut for size.
const cutNote = "(Simplified to fit the gateway's max_schema_bytes: values nested deeper than this schema describes are not checked.)"

// cutStub is what a cut subschema becomes: it accepts any value, and it
// is smaller than anything it replaces, so a deeper cut is never bigger.
var cutStub = []byte("{}")

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
// deeper than cutAt become stubs; loosen (set whenever anything is cut)
// drops the keywords a looser subschema would make refuse more.
type step struct {
	docsFrom, cutAt int
	loosen          bool
}

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
	w.step = step{docsFrom: noLimit, cutAt: noLimit}
	w.collect = true
	w.rewrite(nil, raw, 0)
	d.refs, d.deep = w.refs, w.deep
	f.defs[string(raw)] = d
	return d
}

// at is the definition simplified by s when it sits at depth m.
func (d *defForm) at(s step, m int) []byte {
	rel := step{docsFrom: min(max(s.docsFrom-m, 0), d.deep+1), cutAt: min(s.cutAt-m, d.deep), loosen: s.loosen}
	if b, ok := d.cached[rel]; ok {
		return b
	}
	if rel == (step{d.deep + 1, d.deep, false}) {
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
	p, ok := f.prepare(schema)
	if !ok {
		return schema, simplification{}, false
	}
	build, deepest := p.build, p.deepest
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
	b, s, fits := search(2, deepest, func(l int) step { return step{docsFrom: l, cutAt: noLimit} })
	if !fits {
		b, s, fits = search(1, deepest-1, func(l int) step { return step{docsFrom: 2, cutAt: l} })
	}
	if !fits {
		// The top level's descriptions, then its subschemas.
		s = step{docsFrom: 1, cutAt: 1}
		if b = build(s); len(b) > f.max {
			s = step{docsFrom: 1, cutAt: 0}
			b = build(s)
		}
	}
	how.after, how.docsFrom, how.cutAt = len(b), s.docsFrom, s.cutAt
	if s.cutAt == noLimit {
		how.cutAt = -1
	}
	return b, how, true
}

// prepared is one schema split for simplifying: its root without $defs,
// its definitions, and how deep each sits.
type prepared struct {
	f       *fitter
	rootRaw []byte
	defs    map[string]*defForm
	names   []string // sorted
	depth   map[string]int
	deepest int
}

// prepare splits schema; ok is false when it is not a JSON object.
func (f *fitter) prepare(schema []byte) (*prepared, bool) {
	p := &prepared{f: f, defs: map[string]*defForm{}, depth: map[string]int{}}
	err := jsonlex.ScanObject(schema, func(key, val []byte) error {
		if string(key) != "$defs" {
			return nil
		}
		return jsonlex.ScanObject(val, func(name, body []byte) error {
			n := string(name)
			p.defs[n] = f.form(body)
			p.names = append(p.names, n)
			return nil
		})
	})
	if err != nil {
		return nil, false
	}
	slices.Sort(p.names)
	var rw rewriter
	rw.step, rw.collect, rw.skipDefs = step{docsFrom: noLimit, cutAt: noLimit}, true, true
	p.rootRaw = rw.rewrite(nil, schema, 0)

	// Each definition's shallowest depth, through the references.
	queue := slices.Clone(rw.refs)
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		d, ok := p.defs[r.name]
		if old, seen := p.depth[r.name]; !ok || seen && old <= r.depth {
			continue
		}
		p.depth[r.name] = r.depth
		for _, x := range d.refs {
			queue = append(queue, refAt{x.name, r.depth + x.depth})
		}
	}
	p.deepest = rw.deep
	for name, m := range p.depth {
		p.deepest = max(p.deepest, m+p.defs[name].deep)
	}
	return p, true
}

// build writes the schema with step s applied.
func (p *prepared) build(s step) []byte {
	s.loosen = s.cutAt != noLimit
	w := rewriter{step: s, skipDefs: true}
	if s.loosen {
		w.note = cutNote
	}
	b := w.rewrite(make([]byte, 0, max(p.f.max, 64)), p.rootRaw, 0)
	first := true
	for _, name := range p.names {
		m, reached := p.depth[name]
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
		b = append(b, p.defs[name].at(s, m)...)
	}
	if !first {
		b = append(b, "}}"...)
	}
	return b
}

// build is prepare and build in one (for tests).
func (f *fitter) build(schema []byte, s step) []byte {
	p, _ := f.prepare(schema)
	return p.build(s)
}

// rewriter writes a schema with a step applied; with collect it also
// notes the $defs references and the deepest level it saw.
type rewriter struct {
	step     step
	collect  bool
	skipDefs bool   // leave out the root's $defs member
	note     string // appended to the root's description
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
	type member struct{ key, val []byte }
	var ms []member
	var has map[string]bool // the keys, when loosening needs them
	if w.step.loosen {
		has = map[string]bool{}
	}
	_ = jsonlex.ScanObject(raw, func(key, val []byte) error {
		ms = append(ms, member{key, val})
		if has != nil {
			has[string(key)] = true
		}
		return nil
	})
	dst = append(dst, '{')
	n := 0
	open := func(key string) {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendString(dst, key)
		dst = append(dst, ':')
	}
	noted := false
	for _, m := range ms {
		key, val := string(m.key), m.val
		if isDocKey(m.key) && depth >= w.step.docsFrom || root && key == "$defs" {
			continue
		}
		if w.step.loosen {
			// A cut loosens a subschema; these keywords would turn that
			// into refusing more: drop them, and make oneOf an anyOf
			// (once its branches accept more, several may match).
			switch key {
			case "not", "if", "then", "else", "maxContains", "discriminator":
				continue
			case "oneOf":
				switch {
				case !has["anyOf"]:
					key = "anyOf"
				case !has["allOf"]:
					open("allOf")
					dst = append(dst, `[{"anyOf":`...)
					dst = w.elements(dst, val, depth)
					dst = append(dst, "}]"...)
					continue
				default:
					continue // dropping it only accepts more
				}
			}
		}
		if root && key == "description" && w.note != "" {
			if text, ok := jsonlex.String(val); ok {
				open(key)
				dst = appendString(dst, text+" "+w.note)
				noted = true
				continue
			}
		}
		open(key)
		if w.collect {
			w.collectRefs(key, val, depth)
		}
		sub, ok := subKeywords[key]
		switch {
		case !ok:
			dst = append(dst, val...)
		case sub.kind == subOne:
			dst = w.child(dst, val, depth+sub.down)
		case sub.kind == subList && val[0] == '[':
			dst = w.elements(dst, val, depth+sub.down)
		case sub.kind == subMap && val[0] == '{':
			dst = append(dst, '{')
			k := 0
			_ = jsonlex.ScanObject(val, func(pk, pv []byte) error {
				if k > 0 {
					dst = append(dst, ',')
				}
				k++
				dst = appendString(dst, string(pk))
				dst = append(dst, ':')
				dst = w.child(dst, pv, depth+sub.down)
				return nil
			})
			dst = append(dst, '}')
		default:
			dst = append(dst, val...)
		}
	}
	if root && w.note != "" && !noted {
		open("description")
		dst = appendString(dst, w.note)
	}
	return append(dst, '}')
}

// collectRefs notes the $defs references of one member: $ref, and the
// OpenAPI discriminator's mapping (which names definitions too).
func (w *rewriter) collectRefs(key string, val []byte, depth int) {
	add := func(raw []byte) {
		if s, ok := jsonlex.String(raw); ok {
			if name, ok := defName(s); ok {
				w.refs = append(w.refs, refAt{name, depth})
			}
		}
	}
	switch key {
	case "$ref":
		add(val)
	case "discriminator":
		_ = jsonlex.ScanObject(val, func(k, v []byte) error {
			if string(k) == "mapping" {
				return jsonlex.ScanObject(v, func(_, target []byte) error { add(target); return nil })
			}
			return nil
		})
	}
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
