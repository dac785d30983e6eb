package e2e

// argsGen builds tools/call arguments from a tool's own inputSchema, the way
// a careful model would: required arguments always, optional ones only when
// the schema shows a value (const, example, examples, default), and values
// that honour the schema (enum, format, bounds, lengths, pattern, items).
//
// Every value is checked against the subschema it was made for with a
// JSON Schema 2020-12 validator before it is used: a document's example that
// breaks its own schema is passed over for a made-up value, and a oneOf
// branch that does not validate is passed over for the next. So arguments
// the generator returns are valid against inputSchema by construction (or
// argsFor says they are not, and why), and a gateway that rejects them
// disagrees with the schema it advertised.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const (
	schemaURL = "mem:///input-schema.json"
	// maxGenDepth stops recursion through schemas that nest (or cycle)
	// deeply; only required properties are followed past minimalDepth.
	maxGenDepth  = 24
	minimalDepth = 6
	// maxBranches bounds the oneOf/anyOf branches tried per node.
	maxBranches = 8
)

// argsGen generates arguments for one inputSchema.
type argsGen struct {
	root     map[string]any
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema // by location; nil: does not compile
	// examples: take const/example/examples/default values from the
	// schema, and add the optional properties that have one.
	examples bool
	argsOptions
}

// argsOptions vary what argsWith makes.
type argsOptions struct {
	// branch is the oneOf/anyOf alternative tried first (counting non-null
	// ones first; past the last one, the last).
	branch int
	// all adds every optional property down to allDepth, not only those
	// with a value in the schema.
	all bool
}

// allDepth is how deep argsOptions.all adds optional properties: the
// arguments and the properties of object arguments.
const allDepth = 2

// argsFor returns arguments for a tool whose inputSchema is raw, and
// whether they validate against it (with the validator's reason when not).
// It tries values from the schema's examples first, then made-up values
// only.
func argsFor(raw json.RawMessage) (map[string]any, error) {
	return argsWith(raw, argsOptions{})
}

// argsWith is argsFor with options.
func argsWith(raw json.RawMessage, opts argsOptions) (map[string]any, error) {
	root, err := decodeSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	g := &argsGen{root: root, compiled: map[string]*jsonschema.Schema{}, argsOptions: opts}
	g.compiler = jsonschema.NewCompiler()
	g.compiler.DefaultDraft(jsonschema.Draft2020)
	g.compiler.AssertFormat()
	g.compiler.AssertContent()
	// ECMA-262 patterns that Go's RE2 cannot compile match anything here
	// rather than making the whole schema unusable.
	g.compiler.UseRegexpEngine(lenientRegexp)
	if err := g.compiler.AddResource(schemaURL, root); err != nil {
		return nil, err
	}
	if _, err := g.schemaAt(""); err != nil {
		return nil, fmt.Errorf("inputSchema does not compile as JSON Schema 2020-12: %w", err)
	}
	var lastErr error
	for _, examples := range []bool{true, false} {
		g.examples = examples
		v := g.gen(schemaNode{m: root, loc: ""}, 0, 0)
		args, ok := v.(map[string]any)
		if !ok {
			args = map[string]any{}
		}
		if lastErr = g.check("", args); lastErr == nil {
			return args, nil
		}
	}
	return nil, fmt.Errorf("generated arguments do not validate against inputSchema: %w", lastErr)
}

// decodeSchema decodes JSON keeping numbers as json.Number.
func decodeSchema(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// schemaAt compiles the subschema at a JSON pointer of the root.
func (g *argsGen) schemaAt(loc string) (*jsonschema.Schema, error) {
	if s, ok := g.compiled[loc]; ok {
		if s == nil {
			return nil, errors.New("does not compile")
		}
		return s, nil
	}
	s, err := g.compiler.Compile(schemaURL + "#" + loc)
	g.compiled[loc] = s
	return s, err
}

// check validates v against the subschema at loc. An unknown location
// (loc "-") or a subschema that does not compile accepts anything.
func (g *argsGen) check(loc string, v any) error {
	if loc == "-" {
		return nil
	}
	s, err := g.schemaAt(loc)
	if err != nil {
		return nil
	}
	return s.Validate(toInstance(v))
}

// toInstance turns a generated value into what the validator expects
// (json.Number for numbers) by a JSON round trip.
func toInstance(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return v
	}
	return inst
}

// schemaNode is a schema and the JSON pointer where it sits in the root ("-" when
// it was assembled here and has no place of its own).
type schemaNode struct {
	m   map[string]any
	loc string
}

func (n schemaNode) child(m map[string]any, path ...string) schemaNode {
	if n.loc == "-" || m == nil {
		return schemaNode{m: m, loc: "-"}
	}
	loc := n.loc
	for _, p := range path {
		loc += "/" + strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1")
	}
	return schemaNode{m: m, loc: loc}
}

// resolve follows a local $ref ("#/..." JSON pointer into the root).
func (g *argsGen) resolve(ref string) (schemaNode, bool) {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return schemaNode{}, false
	}
	var cur any = g.root
	if ptr != "" {
		for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			m, ok := cur.(map[string]any)
			if !ok {
				if arr, isArr := cur.([]any); isArr {
					i, err := strconv.Atoi(tok)
					if err != nil || i < 0 || i >= len(arr) {
						return schemaNode{}, false
					}
					cur = arr[i]
					continue
				}
				return schemaNode{}, false
			}
			if cur, ok = m[tok]; !ok {
				return schemaNode{}, false
			}
		}
	}
	m, ok := cur.(map[string]any)
	return schemaNode{m: m, loc: ptr}, ok
}

// flatSchema is a schema with its $ref and allOf members merged in: the first
// value of a keyword wins, properties are united (first wins), required
// lists are joined, and each oneOf/anyOf is one group of alternatives.
type flatSchema struct {
	schemaNode // the original schema; values are checked against it
	kw         map[string]any
	props      map[string]schemaNode
	required   []string
	items      *schemaNode
	addl       *schemaNode // additionalProperties schema
	groups     [][]schemaNode
}

func (g *argsGen) flatten(n schemaNode, depth int) *flatSchema {
	f := &flatSchema{schemaNode: n, kw: map[string]any{}, props: map[string]schemaNode{}}
	g.merge(f, n, depth)
	return f
}

func (g *argsGen) merge(f *flatSchema, n schemaNode, depth int) {
	if n.m == nil || depth > maxGenDepth {
		return
	}
	for k, v := range n.m {
		switch k {
		case "$ref", "allOf", "oneOf", "anyOf", "properties", "required", "items", "additionalProperties", "$defs", "definitions":
		default:
			if _, seen := f.kw[k]; !seen {
				f.kw[k] = v
			}
		}
	}
	if props, ok := n.m["properties"].(map[string]any); ok {
		for name, ps := range props {
			if _, seen := f.props[name]; seen {
				continue
			}
			if m, ok := ps.(map[string]any); ok {
				f.props[name] = n.child(m, "properties", name)
			} else if b, ok := ps.(bool); ok && b {
				f.props[name] = n.child(map[string]any{}, "properties", name)
			}
		}
	}
	if req, ok := n.m["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok && !slices.Contains(f.required, s) {
				f.required = append(f.required, s)
			}
		}
	}
	if it, ok := n.m["items"].(map[string]any); ok && f.items == nil {
		c := n.child(it, "items")
		f.items = &c
	}
	if ap, ok := n.m["additionalProperties"].(map[string]any); ok && f.addl == nil {
		c := n.child(ap, "additionalProperties")
		f.addl = &c
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts, ok := n.m[key].([]any)
		if !ok {
			continue
		}
		var group []schemaNode
		for i, a := range alts {
			if m, ok := a.(map[string]any); ok {
				group = append(group, n.child(m, key, strconv.Itoa(i)))
			}
		}
		if len(group) > 0 {
			f.groups = append(f.groups, group)
		}
	}
	if ref, ok := n.m["$ref"].(string); ok {
		if target, ok := g.resolve(ref); ok {
			g.merge(f, target, depth+1)
		}
	}
	if all, ok := n.m["allOf"].([]any); ok {
		for i, a := range all {
			if m, ok := a.(map[string]any); ok {
				g.merge(f, n.child(m, "allOf", strconv.Itoa(i)), depth+1)
			}
		}
	}
}

// gen makes a value for n. variant makes sibling array items differ.
func (g *argsGen) gen(n schemaNode, depth, variant int) any {
	f := g.flatten(n, depth)
	var candidates []any
	if c, ok := f.kw["const"]; ok {
		candidates = append(candidates, c)
	}
	if g.examples && variant == 0 {
		if ex, ok := f.kw["examples"].([]any); ok {
			candidates = append(candidates, ex...)
		}
		for _, k := range []string{"example", "default"} {
			if v, ok := f.kw[k]; ok {
				candidates = append(candidates, v)
			}
		}
	}
	if enum, ok := f.kw["enum"].([]any); ok {
		// Prefer non-null members, rotated by variant for unique items.
		var nonNull []any
		for _, e := range enum {
			if e != nil {
				nonNull = append(nonNull, e)
			}
		}
		for i := range nonNull {
			candidates = append(candidates, nonNull[(i+variant)%len(nonNull)])
		}
		if len(nonNull) < len(enum) {
			candidates = append(candidates, nil)
		}
	}
	for _, c := range candidates {
		if g.check(f.loc, c) == nil {
			return c
		}
	}
	// Made up: try the alternatives of each oneOf/anyOf group in turn,
	// non-null ones first.
	tries := 1
	for _, grp := range f.groups {
		tries = max(tries, min(len(grp), maxBranches))
	}
	var first any
	for k := range tries {
		ff := f
		if len(f.groups) > 0 {
			ff = g.withBranches(f, (k+g.branch)%tries, depth)
		}
		v := g.synthesize(ff, depth, variant)
		if k == 0 {
			first = v
		}
		if g.check(f.loc, v) == nil {
			return v
		}
	}
	return first
}

// withBranches merges the k-th alternative (non-null ones first) of every
// oneOf/anyOf group of f into a copy of f.
func (g *argsGen) withBranches(f *flatSchema, k, depth int) *flatSchema {
	out := &flatSchema{schemaNode: f.schemaNode, kw: map[string]any{}, props: map[string]schemaNode{}}
	for key, v := range f.kw {
		out.kw[key] = v
	}
	for key, v := range f.props {
		out.props[key] = v
	}
	out.required = slices.Clone(f.required)
	out.items, out.addl = f.items, f.addl
	for _, grp := range f.groups {
		ordered := make([]schemaNode, 0, len(grp))
		var nulls []schemaNode
		for _, alt := range grp {
			if isNullSchema(alt.m) {
				nulls = append(nulls, alt)
			} else {
				ordered = append(ordered, alt)
			}
		}
		ordered = append(ordered, nulls...)
		alt := g.flatten(ordered[min(k, len(ordered)-1)], depth+1)
		for key, v := range alt.kw {
			if _, seen := out.kw[key]; !seen {
				out.kw[key] = v
			}
		}
		for key, v := range alt.props {
			if _, seen := out.props[key]; !seen {
				out.props[key] = v
			}
		}
		for _, r := range alt.required {
			if !slices.Contains(out.required, r) {
				out.required = append(out.required, r)
			}
		}
		if out.items == nil {
			out.items = alt.items
		}
		if out.addl == nil {
			out.addl = alt.addl
		}
		out.groups = append(out.groups, alt.groups...)
	}
	if len(out.groups) > 0 {
		// Nested alternatives: take their first (non-null) branches.
		inner := out.groups
		out.groups = nil
		out = g.withBranches(&flatSchema{schemaNode: out.schemaNode, kw: out.kw, props: out.props, required: out.required, items: out.items, addl: out.addl, groups: inner}, 0, depth+1)
	}
	return out
}

func isNullSchema(m map[string]any) bool {
	if t, ok := m["type"].(string); ok {
		return t == "null"
	}
	return false
}

// schemaType picks the type to generate: the first non-null one listed, else
// one implied by the keywords present.
func schemaType(f *flatSchema) string {
	switch t := f.kw["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
		if len(t) > 0 {
			return "null"
		}
	}
	switch {
	case len(f.props) > 0 || len(f.required) > 0 || f.addl != nil || f.kw["minProperties"] != nil:
		return "object"
	case f.items != nil || f.kw["minItems"] != nil:
		return "array"
	case f.kw["minimum"] != nil || f.kw["maximum"] != nil || f.kw["multipleOf"] != nil:
		return "number"
	}
	return "string"
}

func (g *argsGen) synthesize(f *flatSchema, depth, variant int) any {
	if depth > maxGenDepth {
		return nil
	}
	switch schemaType(f) {
	case "object":
		return g.object(f, depth)
	case "array":
		return g.array(f, depth)
	case "integer":
		return genNumber(f, true, variant)
	case "number":
		return genNumber(f, false, variant)
	case "boolean":
		return variant%2 == 0
	case "null":
		return nil
	}
	return genString(f, variant)
}

func (g *argsGen) object(f *flatSchema, depth int) map[string]any {
	obj := map[string]any{}
	names := slices.Clone(f.required)
	if g.examples && depth < minimalDepth {
		var optional []string
		for name, p := range f.props {
			if !slices.Contains(names, name) && ((g.all && depth < allDepth) || g.hasExample(p, depth)) {
				optional = append(optional, name)
			}
		}
		sort.Strings(optional)
		names = append(names, optional...)
	}
	if minProps, ok := intKeyword(f.kw, "minProperties"); ok && int64(len(names)) < minProps {
		var rest []string
		for name := range f.props {
			if !slices.Contains(names, name) {
				rest = append(rest, name)
			}
		}
		sort.Strings(rest)
		for _, name := range rest {
			if int64(len(names)) >= minProps {
				break
			}
			names = append(names, name)
		}
	}
	for _, name := range names {
		p, ok := f.props[name]
		switch {
		case ok:
		case f.addl != nil:
			p = *f.addl
		default:
			p = schemaNode{m: map[string]any{}, loc: "-"}
		}
		obj[name] = g.gen(p, depth+1, 0)
	}
	return obj
}

// hasExample reports a property schema that shows a value.
func (g *argsGen) hasExample(p schemaNode, depth int) bool {
	f := g.flatten(p, depth+1)
	for _, k := range []string{"const", "example", "examples", "default"} {
		if _, ok := f.kw[k]; ok {
			return true
		}
	}
	return false
}

func (g *argsGen) array(f *flatSchema, depth int) []any {
	n := int64(1)
	if v, ok := intKeyword(f.kw, "minItems"); ok && v > n {
		n = v
	}
	if v, ok := intKeyword(f.kw, "maxItems"); ok && v < n {
		n = v
	}
	items := schemaNode{m: map[string]any{}, loc: "-"}
	if f.items != nil {
		items = *f.items
	}
	out := make([]any, 0, n)
	for i := range int(n) {
		out = append(out, g.gen(items, depth+1, i))
	}
	return out
}

// genNumber picks the smallest value the bounds allow (1 when unbounded),
// a multiple of multipleOf when one is given.
func genNumber(f *flatSchema, integer bool, variant int) json.Number {
	lo, hasLo := ratKeyword(f.kw, "minimum")
	if ex, ok := ratKeyword(f.kw, "exclusiveMinimum"); ok {
		step := big.NewRat(1, 1)
		if !integer {
			step = big.NewRat(1, 100)
		}
		ex.Add(ex, step)
		if !hasLo || ex.Cmp(lo) > 0 {
			lo, hasLo = ex, true
		}
	}
	hi, hasHi := ratKeyword(f.kw, "maximum")
	if ex, ok := ratKeyword(f.kw, "exclusiveMaximum"); ok {
		step := big.NewRat(1, 1)
		if !integer {
			step = big.NewRat(1, 100)
		}
		ex.Sub(ex, step)
		if !hasHi || ex.Cmp(hi) < 0 {
			hi, hasHi = ex, true
		}
	}
	v := big.NewRat(int64(1+variant), 1)
	switch {
	case hasLo:
		v.Add(lo, big.NewRat(int64(variant), 1))
	case hasHi && hi.Cmp(v) < 0:
		v.Sub(hi, big.NewRat(int64(variant), 1))
	}
	if hasHi && v.Cmp(hi) > 0 {
		v.Set(hi)
	}
	if integer {
		v = ceilRat(v)
	}
	if m, ok := ratKeyword(f.kw, "multipleOf"); ok && m.Sign() > 0 {
		q := new(big.Rat).Quo(v, m)
		v = new(big.Rat).Mul(ceilRat(q), m)
	}
	if v.IsInt() {
		return json.Number(v.Num().String())
	}
	f64, _ := v.Float64()
	return json.Number(strconv.FormatFloat(f64, 'f', -1, 64))
}

func ceilRat(r *big.Rat) *big.Rat {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return new(big.Rat).SetInt(q)
}

func ratKeyword(kw map[string]any, key string) (*big.Rat, bool) {
	var s string
	switch v := kw[key].(type) {
	case json.Number:
		s = string(v)
	case float64:
		s = strconv.FormatFloat(v, 'g', -1, 64)
	default:
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

func intKeyword(kw map[string]any, key string) (int64, bool) {
	r, ok := ratKeyword(kw, key)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

// formatValues are valid values of the formats JSON Schema and OpenAPI
// name.
var formatValues = map[string]string{
	"date-time":             "2024-01-02T03:04:05Z",
	"date":                  "2024-01-02",
	"time":                  "03:04:05Z",
	"duration":              "P1D",
	"email":                 "user@example.com",
	"idn-email":             "user@example.com",
	"hostname":              "example.com",
	"idn-hostname":          "example.com",
	"ipv4":                  "192.0.2.1",
	"ipv6":                  "2001:db8::1",
	"uri":                   "https://example.com/x",
	"uri-reference":         "https://example.com/x",
	"iri":                   "https://example.com/x",
	"iri-reference":         "https://example.com/x",
	"url":                   "https://example.com/x",
	"uri-template":          "https://example.com/{x}",
	"uuid":                  "123e4567-e89b-12d3-a456-426614174000",
	"json-pointer":          "/x",
	"relative-json-pointer": "0/x",
	"regex":                 "^x$",
	"byte":                  "ZXhhbXBsZQ==",
	"binary":                "ZXhhbXBsZQ==",
	"password":              "example",
}

func genString(f *flatSchema, variant int) string {
	format, _ := f.kw["format"].(string)
	minLen, hasMin := intKeyword(f.kw, "minLength")
	maxLen, hasMax := intKeyword(f.kw, "maxLength")
	fits := func(s string) bool {
		n := int64(utf8.RuneCountInString(s))
		return (!hasMin || n >= minLen) && (!hasMax || n <= maxLen)
	}
	pattern, _ := f.kw["pattern"].(string)
	var re *regexp.Regexp
	if pattern != "" {
		re, _ = regexp.Compile(pattern)
	}
	ok := func(s string) bool { return fits(s) && (re == nil || re.MatchString(s)) }

	if enc, _ := f.kw["contentEncoding"].(string); strings.EqualFold(enc, "base64") {
		data := "example"
		if mt, _ := f.kw["contentMediaType"].(string); strings.Contains(mt, "json") {
			data = "{}"
		}
		return base64.StdEncoding.EncodeToString([]byte(data))
	}
	if v, known := formatValues[format]; known && ok(v) {
		return v
	}
	if re != nil {
		for _, rep := range []int{1, int(max(minLen, 1)), 0, 2, 8} {
			if s, good := sampleRegexp(pattern, rep); good && ok(s) {
				return s
			}
		}
	}
	s := "example"
	if variant > 0 {
		s += strconv.Itoa(variant)
	}
	if hasMin && int64(len(s)) < minLen {
		s += strings.Repeat("x", int(minLen)-len(s))
	}
	if hasMax && int64(len(s)) > maxLen {
		s = s[:maxLen]
		if variant > 0 && maxLen > 0 {
			s = s[:maxLen-1] + strconv.Itoa(variant%10)
		}
	}
	return s
}

// sampleRegexp makes one string that the pattern matches in full: the
// first alternative, a friendly member of each class, rep repetitions of
// each unbounded repeat (within its bounds), no optional parts.
func sampleRegexp(pattern string, rep int) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !emitRegexp(&b, re.Simplify(), rep) {
		return "", false
	}
	s := b.String()
	full, err := regexp.Compile(pattern)
	return s, err == nil && full.MatchString(s)
}

func emitRegexp(b *strings.Builder, re *syntax.Regexp, rep int) bool {
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
		return true
	case syntax.OpCharClass:
		r, ok := classRune(re.Rune)
		if ok {
			b.WriteRune(r)
		}
		return ok
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
		return true
	case syntax.OpCapture:
		return emitRegexp(b, re.Sub[0], rep)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !emitRegexp(b, sub, rep) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		return emitRegexp(b, re.Sub[0], rep)
	case syntax.OpQuest:
		return true
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		n := rep
		lo, hi := 0, -1
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
		}
		n = max(n, lo)
		if hi >= 0 {
			n = min(n, hi)
		}
		for range n {
			if !emitRegexp(b, re.Sub[0], rep) {
				return false
			}
		}
		return true
	}
	return false
}

// classRune picks a readable member of a character class: a letter or
// digit when there is one, else the first printable one.
func classRune(ranges []rune) (rune, bool) {
	for _, want := range []rune{'a', 'A', '1', '0', 'x'} {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= want && want <= ranges[i+1] {
				return want, true
			}
		}
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := max(ranges[i], '!'); r <= ranges[i+1] && r < 0x10000; r++ {
			if unicode.IsPrint(r) && r != ' ' {
				return r, true
			}
		}
	}
	return 0, false
}

// lenientRegexp compiles a pattern with Go's regexp; one it cannot compile
// (lookaround, backreferences) matches every string.
func lenientRegexp(s string) (jsonschema.Regexp, error) {
	re, err := regexp.Compile(s)
	if err != nil {
		return anyString(s), nil
	}
	return re, nil
}

type anyString string

func (a anyString) String() string          { return string(a) }
func (a anyString) MatchString(string) bool { return true }
