package call

// A fast check for the schemas the gateway declares by default. The
// library validator (output.go) decodes the body into Go values and
// allocates per value: about 600 µs and 6,000 allocations for a 10 KB list
// (BenchmarkOutputCheck), twice the CPU of the whole call through a reverse
// proxy. A lenient outputSchema only says the response's shape — types,
// properties, required, items, additionalProperties as a schema, anyOf,
// allOf, $ref into $defs — and that shape can be checked on the raw bytes with the
// jsonlex scanner in one pass, allocating nothing.
//
// The fast check only ever answers "fits": it is at least as strict as the
// library on every keyword it reads (duplicate keys are all checked, for
// example, where the library keeps the last), and a schema with any other
// assertion keyword anywhere (a strict schema's enum, bounds, format...) or
// a cycle that never moves on in the data gets no fast check at all. Whenever the fast check says no, the library
// decides, and says where.

import (
	"bytes"

	"strings"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

// shapeKeywords are the keywords the fast check reads, or may ignore
// because they assert nothing.
var shapeKeywords = map[string]bool{
	"type": true, "properties": true, "items": true, "prefixItems": true, "additionalProperties": true,
	"anyOf": true, "allOf": true, "$ref": true, "$defs": true, "required": true,
	// annotations
	"$schema": true, "title": true, "description": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "contentEncoding": true,
	"contentMediaType": true, "contentSchema": true, "discriminator": true, "$comment": true,
}

type jsonKind uint8

const (
	kindNull jsonKind = 1 << iota
	kindBoolean
	kindObject
	kindArray
	kindNumber
	kindString
	kindInteger // a number with no fractional part
)

// shape is one compiled (sub)schema.
type shape struct {
	any        bool     // true, {} or only annotations: everything fits
	never      bool     // false
	kinds      jsonKind // 0: any kind
	props      map[string]*shape
	propList   []namedShape // props, when there are few: a scan beats hashing
	additional *shape       // nil: any
	required   []string     // at most 64
	items      *shape       // nil: any
	prefix     []*shape
	anyOf      []*shape
	allOf      []*shape
	ref        *shape
	refName    string
	// leaf: only a type to check (no combinators, members or items), the
	// common case, walked without the general path.
	leaf bool
}

type namedShape struct {
	name string
	s    *shape
}

// compileShape compiles a schema for the fast check, or returns nil when it
// uses a keyword the fast check does not read. root is the schema as
// jsonschema.UnmarshalJSON decoded it for the library.
func compileShape(root any) *shape {
	c := &shapeCompiler{defs: map[string]*shape{}}
	if m, ok := root.(map[string]any); ok {
		if defs, ok := m["$defs"].(map[string]any); ok {
			c.rawDefs = defs
		}
	}
	s := c.compile(root)
	if c.failed || loopsInPlace(s) {
		return nil
	}
	return s
}

// loopsInPlace reports whether some shape reaches itself through $ref,
// allOf and anyOf alone: such a cycle never moves on in the data, so
// walking it would recurse without end. (A cycle through properties or
// items consumes the value it descends into and ends with the data.) The
// library refuses such a branch; here the schema gets no fast check.
func loopsInPlace(root *shape) bool {
	all := map[*shape]bool{}
	stack := []*shape{root}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s == nil || all[s] {
			continue
		}
		all[s] = true
		stack = append(stack, inPlace(s)...)
		stack = append(stack, s.additional, s.items)
		stack = append(stack, s.prefix...)
		for _, p := range s.props {
			stack = append(stack, p)
		}
	}
	color := map[*shape]int{} // 1: on the path, 2: done
	var onCycle func(*shape) bool
	onCycle = func(s *shape) bool {
		switch color[s] {
		case 1:
			return true
		case 2:
			return false
		}
		color[s] = 1
		for _, n := range inPlace(s) {
			if onCycle(n) {
				return true
			}
		}
		color[s] = 2
		return false
	}
	for s := range all {
		if onCycle(s) {
			return true
		}
	}
	return false
}

// inPlace are the shapes that see the same value as s.
func inPlace(s *shape) []*shape {
	next := append(append([]*shape{}, s.allOf...), s.anyOf...)
	if s.ref != nil {
		next = append(next, s.ref)
	}
	return next
}

type shapeCompiler struct {
	rawDefs map[string]any
	defs    map[string]*shape
	failed  bool
}

func (c *shapeCompiler) compile(v any) *shape {
	switch s := v.(type) {
	case bool:
		return &shape{any: s, never: !s}
	case map[string]any:
		out := &shape{}
		assertions := 0
		for k, val := range s {
			if !shapeKeywords[k] {
				c.failed = true
				return out
			}
			switch k {
			case "type":
				assertions++
				out.kinds = c.kinds(val)
			case "properties":
				assertions++
				props, _ := val.(map[string]any)
				out.props = make(map[string]*shape, len(props))
				for name, p := range props {
					out.props[name] = c.compile(p)
				}
				if len(props) <= 12 {
					for name, p := range out.props {
						out.propList = append(out.propList, namedShape{name, p})
					}
				}
			case "additionalProperties":
				assertions++
				out.additional = c.compile(val)
			case "required":
				assertions++
				list, _ := val.([]any)
				for _, r := range list {
					name, ok := r.(string)
					if !ok {
						c.failed = true
					}
					out.required = append(out.required, name)
				}
				if len(out.required) > 64 {
					c.failed = true
				}
			case "items":
				assertions++
				out.items = c.compile(val)
			case "prefixItems":
				assertions++
				list, _ := val.([]any)
				for _, p := range list {
					out.prefix = append(out.prefix, c.compile(p))
				}
			case "anyOf", "allOf":
				assertions++
				list, _ := val.([]any)
				if len(list) == 0 {
					c.failed = true
					return out
				}
				for _, p := range list {
					sub := c.compile(p)
					if k == "anyOf" {
						out.anyOf = append(out.anyOf, sub)
					} else {
						out.allOf = append(out.allOf, sub)
					}
				}
			case "$ref":
				assertions++
				ref, _ := val.(string)
				name, ok := strings.CutPrefix(ref, "#/$defs/")
				if !ok || strings.ContainsAny(name, "/~%") {
					c.failed = true
					return out
				}
				out.refName = name
				out.ref = c.def(name)
			}
		}
		out.any = assertions == 0
		out.leaf = !out.any && out.ref == nil && out.allOf == nil && out.anyOf == nil && out.props == nil &&
			out.additional == nil && out.required == nil && out.items == nil && out.prefix == nil
		return out
	}
	c.failed = true
	return &shape{}
}

// def compiles a $defs entry once; a circular one refers to itself.
func (c *shapeCompiler) def(name string) *shape {
	if d, ok := c.defs[name]; ok {
		return d
	}
	raw, ok := c.rawDefs[name]
	if !ok {
		c.failed = true
		return &shape{}
	}
	d := &shape{}
	c.defs[name] = d
	*d = *c.compile(raw)
	return d
}

func (c *shapeCompiler) kinds(v any) jsonKind {
	var names []any
	switch t := v.(type) {
	case string:
		names = []any{t}
	case []any:
		names = t
	}
	var k jsonKind
	for _, n := range names {
		switch n {
		case "null":
			k |= kindNull
		case "boolean":
			k |= kindBoolean
		case "object":
			k |= kindObject
		case "array":
			k |= kindArray
		case "number":
			k |= kindNumber
		case "string":
			k |= kindString
		case "integer":
			k |= kindInteger
		default:
			c.failed = true
		}
	}
	if k == 0 {
		c.failed = true
	}
	return k
}

// fits reports whether data is valid JSON that fits s. false means "not
// sure": the caller checks the JSON and asks the library. It walks the
// bytes once, validating as it goes (every value it passes over goes
// through the jsonlex scanner), so a body that fits needs no other scan.
func (s *shape) fits(data []byte) bool {
	i := skipWS(data, 0)
	end, ok := s.walk(data, i, 0)
	return ok && skipWS(data, end) == len(data)
}

// walk checks the value at data[i], inside depth objects and arrays, and
// returns the offset past it. Nesting is bounded as jsonlex.Valid bounds
// it (a recursive schema follows the data down), counted from the top.
func (s *shape) walk(data []byte, i, depth int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	kind := kindAt(data[i])
	switch {
	case s.leaf:
		if s.kinds == 0 || s.kinds&kind != 0 {
			return skipValue(data, i, depth)
		}
	case s.never:
		return i, false
	case s.any:
		return skipValue(data, i, depth)
	}
	if s.kinds != 0 && s.kinds&kind == 0 {
		if kind != kindNumber || s.kinds&kindInteger == 0 {
			return i, false
		}
		end, ok := skipValue(data, i, depth)
		if !ok || !isIntegral(data[i:end]) {
			return i, false
		}
	}
	// The combinators see the same value; every walk of it ends at the
	// same offset, so the last one's end serves (the value is not skipped
	// once more).
	end := -1
	if s.ref != nil {
		e, ok := s.ref.walk(data, i, depth)
		if !ok {
			return i, false
		}
		end = e
	}
	for _, sub := range s.allOf {
		e, ok := sub.walk(data, i, depth)
		if !ok {
			return i, false
		}
		end = e
	}
	if len(s.anyOf) > 0 {
		ok := false
		for _, sub := range s.anyOf {
			var e int
			if e, ok = sub.walk(data, i, depth); ok {
				end = e
				break
			}
		}
		if !ok {
			return i, false
		}
	}
	switch {
	case kind == kindObject && (s.props != nil || s.additional != nil || s.required != nil):
		return s.walkObject(data, i, depth+1)
	case kind == kindArray && (s.items != nil || len(s.prefix) > 0):
		return s.walkArray(data, i, depth+1)
	case end >= 0:
		return end, true
	}
	return skipValue(data, i, depth)
}

func (s *shape) walkObject(data []byte, i, depth int) (int, bool) {
	if depth > jsonlex.MaxDepth {
		return i, false
	}
	var seen uint64 // bit n: required[n] is present
	all := uint64(1)<<len(s.required) - 1
	i, more, ok := open(data, i, '}')
	for more && ok && i < len(data) && data[i] == '"' {
		kend, err := jsonlex.SkipString(data, i)
		if err != nil {
			return i, false
		}
		key := data[i+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			k, _ := jsonlex.String(data[i:kend])
			key = []byte(k)
		}
		i = skipWS(data, kend)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		seen |= s.requiredBit(key)
		if i, ok = walkOrSkip(s.member(key), data, skipWS(data, i+1), depth); !ok {
			return i, false
		}
		i, more, ok = next(data, i, '}')
	}
	return i, ok && !more && seen == all
}

func (s *shape) walkArray(data []byte, i, depth int) (int, bool) {
	if depth > jsonlex.MaxDepth {
		return i, false
	}
	i, more, ok := open(data, i, ']')
	for n := 0; more && ok; n++ {
		sub := s.items
		if n < len(s.prefix) {
			sub = s.prefix[n]
		}
		if i, ok = walkOrSkip(sub, data, i, depth); !ok {
			return i, false
		}
		i, more, ok = next(data, i, ']')
	}
	return i, ok && !more
}

// open steps into the object or array at data[i]: more reports whether a
// member follows (else i is past the closing byte).
func open(data []byte, i int, closing byte) (at int, more, ok bool) {
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == closing {
		return i + 1, false, true
	}
	return i, i < len(data), i < len(data)
}

// next steps past the separator after a member: more reports whether
// another member follows (else i is past the closing byte).
func next(data []byte, i int, closing byte) (at int, more, ok bool) {
	i = skipWS(data, i)
	switch {
	case i < len(data) && data[i] == ',':
		return skipWS(data, i+1), true, true
	case i < len(data) && data[i] == closing:
		return i + 1, false, true
	}
	return i, false, false
}

// walkOrSkip checks the value at data[i] against sub, or only passes over
// it when nothing constrains it (sub is nil).
func walkOrSkip(sub *shape, data []byte, i, depth int) (int, bool) {
	if sub != nil {
		return sub.walk(data, i, depth)
	}
	return skipValue(data, i, depth)
}

// requiredBit is the bit of key among the required names, or 0.
func (s *shape) requiredBit(key []byte) uint64 {
	for n, r := range s.required {
		if r == string(key) {
			return 1 << n
		}
	}
	return 0
}

// member is the schema a property's value must fit; nil: any.
func (s *shape) member(key []byte) *shape {
	if s.propList != nil {
		for _, p := range s.propList {
			if p.name == string(key) {
				return p.s
			}
		}
		return s.additional
	}
	if p, ok := s.props[string(key)]; ok {
		return p
	}
	return s.additional
}

// skipValue passes over the value at data[i], inside depth objects and
// arrays, with the jsonlex scanner.
func skipValue(data []byte, i, depth int) (int, bool) {
	end, err := jsonlex.SkipNested(data, i, depth)
	return end, err == nil
}

func skipWS(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

func kindAt(c byte) jsonKind {
	switch c {
	case '{':
		return kindObject
	case '[':
		return kindArray
	case '"':
		return kindString
	case 't', 'f':
		return kindBoolean
	case 'n':
		return kindNull
	}
	return kindNumber
}

// isIntegral reports whether a JSON number is written as a whole number
// (no fraction, no exponent). 2020-12 also counts 1.0 and 1e2 as integers,
// exactly; those, rare in practice, go to the library, which decides with
// exact decimals (a float64 would round 1.0000000000000000001 to 1).
func isIntegral(data []byte) bool {
	for _, c := range data {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}
