package toolgen

import (
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// ResourceOp is a GET operation served as an MCP resource: reading a URI
// the resource matches calls the operation, with the template's variables
// as the arguments of its Tool.
type ResourceOp struct {
	// Tool is the binding the call path runs; Tool.Name is the resource's
	// name for policy and audit, unique among tools and resources.
	Tool *Tool
	// IsTool: the same operation is also listed as a tool (then Tool is
	// that tool).
	IsTool bool
	// URI is set for a fixed resource (no path parameters);
	URI string
	// URITemplate is set when the path has parameters: an RFC 6570
	// template of levels 1 and 2 ({name} and {+name} only).
	URITemplate string
	// Name defaults to the tool name, Title to the operation's summary,
	// Description to the tool's description, MIMEType to the success
	// response's media type (application/json when it has it) or empty.
	Name, Title, Description, MIMEType string
	// PollInterval is how often a subscribed resource is read again; 0:
	// the gateway's default.
	PollInterval time.Duration
	// Vars maps each template variable to the tool argument that carries it.
	Vars map[string]string
	// Values are completion candidates per template variable: the path
	// parameter's enum, then its example and examples, then its schema's,
	// as strings, deduplicated, in document order (examples maps by key).
	// Values a variable could never match are left out.
	Values map[string][]string
	// Location is the operation's place in the document, e.g.
	// paths./pets/{id}.get, for errors.
	Location string
}

// Resources returns the resource operations in document order. The slice
// is shared; do not modify it or the resources.
func (s *Set) Resources() []*ResourceOp { return slices.Clip(s.resources) }

// Resource returns the resource operation whose Tool.Name is name.
func (s *Set) Resource(name string) (*ResourceOp, bool) {
	r, ok := s.resourceByName[name]
	return r, ok
}

// extMCPResource on a GET operation: true, false, or an object of
// resourceSpec's fields.
const extMCPResource = "x-mcp-resource"

// defaultURIBase is what a resource's default URI puts before the path.
const defaultURIBase = "rest://api"

// minPollInterval bounds x-mcp-resource.pollInterval from below.
const minPollInterval = time.Second

// reservedSchemes are the gateway's own (gateway:) and those a client
// would take for the backend's or the web's (http:, https:).
var reservedSchemes = []string{"gateway", "http", "https"}

// resourceSpec is x-mcp-resource read: empty fields take the defaults.
type resourceSpec struct {
	uri, name, title, description, mimeType string
	pollInterval                            time.Duration
}

// resourceCandidate is an operation selected as a resource, not yet checked.
type resourceCandidate struct {
	op   openapi.Operation
	spec resourceSpec
}

// resources adds to set the resource operations among all, in document
// order. tools holds the operations selected as tools by location (nil
// when the tool could not be made); taken, their names, to which the names
// of the operations that are resources only are added.
func (g *generator) resources(set *Set, all []openapi.Operation, tools map[string]*Tool, taken nameSet) {
	var (
		cands []resourceCandidate
		extra []openapi.Operation // resources that are not tools: they need names
	)
	for _, op := range all {
		spec, ok := g.resourceSelected(op)
		if !ok {
			continue
		}
		cands = append(cands, resourceCandidate{op, spec})
		if _, isTool := tools[op.Location()]; !isTool {
			extra = append(extra, op)
		}
	}
	if len(cands) == 0 {
		return
	}
	names := make(map[string]string, len(extra))
	for i, n := range g.names(extra, taken) {
		names[extra[i].Location()] = n
	}
	set.resourceByName = make(map[string]*ResourceOp, len(cands))
	keys := map[string]string{} // uriKey → location of the resource that has it
	for _, c := range cands {
		t, isTool := tools[c.op.Location()]
		if isTool && t == nil {
			continue // the "no tool" warning says why
		}
		r := g.resource(c.op, c.spec, keys)
		if r == nil {
			continue
		}
		if !isTool {
			var err error
			if t, err = g.tool(c.op, names[c.op.Location()]); err != nil {
				g.warn(r.Location, "no resource: "+err.Error())
				continue
			}
		}
		r.Tool, r.IsTool = t, isTool
		if r.Name == "" {
			r.Name = t.Name
		}
		if r.Description == "" {
			r.Description = t.Description
		}
		set.resources = append(set.resources, r)
		set.resourceByName[t.Name] = r
	}
}

// resourceSelected reads x-mcp-resource and Options.ResourceOperations:
// whether op is a resource, and how x-mcp-resource describes it.
func (g *generator) resourceSelected(op openapi.Operation) (resourceSpec, bool) {
	loc := op.Location()
	v, present := op.Operation.Extensions[extMCPResource]
	if op.Method != http.MethodGet {
		if present {
			g.warn(loc, fmt.Sprintf("%s is read only on GET operations; ignored", extMCPResource))
		}
		return resourceSpec{}, false
	}
	globbed := len(g.opts.ResourceOperations) > 0 && matchAny(g.opts.ResourceOperations, op)
	if !present {
		return resourceSpec{}, globbed
	}
	spec, on, err := g.parseResourceExt(v, loc)
	if err != nil {
		g.warn(loc, fmt.Sprintf("no resource: %s %v", extMCPResource, err))
		return resourceSpec{}, false
	}
	return spec, on || globbed
}

// parseResourceExt reads an x-mcp-resource value: true, false (also as
// strings) or an object. Unknown object fields are warned about and
// ignored; a field of the wrong type or a bad pollInterval is an error.
func (g *generator) parseResourceExt(v any, loc string) (spec resourceSpec, on bool, err error) {
	if b, ok := extBoolValue(v); ok {
		return spec, b, nil
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeysOf(x) {
			f := x[k]
			var dst *string
			switch k {
			case "uri":
				dst = &spec.uri
			case "name":
				dst = &spec.name
			case "title":
				dst = &spec.title
			case "description":
				dst = &spec.description
			case "mimeType":
				dst = &spec.mimeType
			case "pollInterval":
				if spec.pollInterval, err = pollInterval(f); err != nil {
					return spec, false, err
				}
				continue
			default:
				g.warn(loc, fmt.Sprintf("%s has no field %q; ignored", extMCPResource, k))
				continue
			}
			s, ok := f.(string)
			if !ok {
				return spec, false, fmt.Errorf("%s should be a string, not %v", k, f)
			}
			*dst = strings.TrimSpace(s)
		}
		if spec.mimeType != "" {
			if _, _, err := mime.ParseMediaType(spec.mimeType); err != nil {
				return spec, false, fmt.Errorf("mimeType %q is not a media type", spec.mimeType)
			}
		}
		return spec, true, nil
	}
	return spec, false, fmt.Errorf("should be true, false or an object, not %v", v)
}

// pollInterval reads a Go duration string ("10s") or a number of seconds.
func pollInterval(v any) (time.Duration, error) {
	var d time.Duration
	switch x := v.(type) {
	case string:
		var err error
		if d, err = time.ParseDuration(strings.TrimSpace(x)); err != nil {
			return 0, fmt.Errorf("pollInterval %q is not a duration (like \"10s\") or a number of seconds", x)
		}
	default:
		f, ok := number(v)
		if !ok {
			return 0, fmt.Errorf("pollInterval should be a duration (like \"10s\") or a number of seconds, not %v", v)
		}
		if f > math.MaxInt64/float64(time.Second) {
			return 0, fmt.Errorf("pollInterval %v is too long", v)
		}
		d = time.Duration(f * float64(time.Second))
	}
	if d < minPollInterval {
		return 0, fmt.Errorf("pollInterval must be at least %s, not %v", minPollInterval, v)
	}
	return d, nil
}

// number is v as a float64 when it is a finite JSON or Go number.
func number(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint64:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

// resource checks that op can be read from a URI and makes its resource,
// all but Tool, IsTool and the defaults that come from the tool; nil (with
// a warning) when it cannot be one. keys holds the URIs and templates
// already taken.
func (g *generator) resource(op openapi.Operation, spec resourceSpec, keys map[string]string) *ResourceOp {
	loc := op.Location()
	params, err := g.params(op)
	if err != nil {
		g.warn(loc, "no resource: "+err.Error())
		return nil
	}
	// A read sends only what the URI carries: the path parameters.
	for _, p := range params {
		if p.param.Required && p.param.In != openapi3.ParameterInPath {
			g.warn(loc, fmt.Sprintf("no resource: %s parameter %q is required, and a resource URI carries only path parameters", p.param.In, p.param.Name))
			return nil
		}
	}
	if rb := op.Operation.RequestBody; rb != nil && rb.Value != nil && rb.Value.Required {
		g.warn(loc, "no resource: the request body is required, and a resource read sends none")
		return nil
	}

	// Each path parameter is one variable, named after it when its name
	// is a varname, else sanitized.
	inPath, _ := templateNames(op.Path) // g.params checked it
	varOf := templateVars(inPath)
	byVar := make(map[string]param, len(inPath))
	for _, p := range params {
		if p.param.In == openapi3.ParameterInPath {
			byVar[varOf[p.param.Name]] = p
		}
	}

	raw := spec.uri
	if raw == "" {
		raw = defaultURI(op.Path, varOf)
	}
	parts, err := parseURITemplate(raw)
	if err == nil {
		err = checkURIVars(parts, inPath, varOf)
	}
	if err != nil {
		g.warn(loc, fmt.Sprintf("no resource: uri %q: %v", raw, err))
		return nil
	}
	key := uriKey(parts)
	if prev, dup := keys[key]; dup {
		g.warn(loc, fmt.Sprintf("no resource: uri %q is that of the resource at %s (up to variable names)", raw, prev))
		return nil
	}
	keys[key] = loc

	r := &ResourceOp{
		Name:         spec.name,
		Title:        spec.title,
		MIMEType:     cmpOr(spec.mimeType, responseMediaType(op.Operation)),
		PollInterval: spec.pollInterval,
		Location:     loc,
	}
	if spec.description != "" {
		r.Description = TruncateText(spec.description, g.opts.MaxDescription)
	}
	if r.Title == "" && strings.TrimSpace(plainText(op.Operation.Summary)) != "" {
		r.Title = toolTitle(op.Operation, "")
	}
	if len(inPath) == 0 {
		r.URI = raw
		return r
	}
	r.URITemplate = raw
	r.Vars = make(map[string]string, len(parts))
	for _, part := range parts {
		if part.name == "" {
			continue
		}
		p := byVar[part.name]
		r.Vars[part.name] = p.arg
		if vs := completionValues(p.param, part.op == '+'); len(vs) > 0 {
			if r.Values == nil {
				r.Values = map[string][]string{}
			}
			r.Values[part.name] = vs
		}
	}
	return r
}

// templateVars names the variable of each path parameter: its own name
// when that is an RFC 6570 varname, else the name sanitized to
// [A-Za-z0-9_] ("_" and a number when that is taken, "p" when nothing is
// left). Valid names are claimed first, so they never change.
func templateVars(names []string) map[string]string {
	out := make(map[string]string, len(names))
	taken := map[string]bool{}
	for _, n := range names {
		if validVarname(n) {
			out[n] = n
			taken[n] = true
		}
	}
	for _, n := range names {
		if _, ok := out[n]; ok {
			continue
		}
		base := sanitize(n, math.MaxInt, func(r rune) bool {
			return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
		})
		if base == "" {
			base = "p"
		}
		v := base
		for i := 2; taken[v]; i++ {
			v = base + "_" + strconv.Itoa(i)
		}
		out[n] = v
		taken[v] = true
	}
	return out
}

// validVarname reports an RFC 6570 varname: varchar *( ["."] varchar ),
// varchar being ALPHA / DIGIT / "_" / pct-encoded.
func validVarname(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		case c == '.':
			if s[i+1] == '.' {
				return false
			}
		case c == '%':
			if !pctEncoded(s, i) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

func pctEncoded(s string, i int) bool {
	return i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// defaultURI is defaultURIBase and the path, each {name} the variable
// varOf names and each byte a template literal may not hold
// percent-encoded (non-ASCII too, so the URI is plain ASCII).
func defaultURI(path string, varOf map[string]string) string {
	var b strings.Builder
	b.WriteString(defaultURIBase)
	for rest := path; rest != ""; {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			open = len(rest)
		}
		lit := rest[:open]
		for i := 0; i < len(lit); i++ {
			if c := lit[i]; c < 0x80 && literalByte(c) || c == '%' && pctEncoded(lit, i) {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		}
		rest = rest[open:]
		if rest == "" {
			break
		}
		end := strings.IndexByte(rest, '}') // g.params checked the braces
		b.WriteString("{" + varOf[rest[1:end]] + "}")
		rest = rest[end+1:]
	}
	return b.String()
}

// literalByte reports an ASCII character an RFC 6570 literal may hold as
// it is: all but controls, space, '"', '%', '\”, '<', '>', '\\', '^',
// '`', '{', '|' and '}'.
func literalByte(c byte) bool {
	return c > 0x20 && c < 0x7f && !strings.ContainsRune("\"%'<>\\^`{|}", rune(c))
}

// uriPart is a literal or, when name is set, an expression of a URI
// template.
type uriPart struct {
	literal string
	op      byte // 0: simple expansion; '+': reserved expansion
	name    string
}

// parseURITemplate parses a fixed URI or an RFC 6570 template of levels 1
// and 2, of which the gateway serves {name} and {+name} for REST
// resources ({#name} would put the value in the fragment, which no
// request sees). It must begin with a literal scheme that is not
// reserved.
func parseURITemplate(raw string) ([]uriPart, error) {
	var parts []uriPart
	for rest := raw; rest != ""; {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			open = len(rest)
		}
		if lit := rest[:open]; lit != "" {
			for i := 0; i < len(lit); i++ {
				switch c := lit[i]; {
				case c == '%':
					if !pctEncoded(lit, i) {
						return nil, fmt.Errorf("%% not followed by two hex digits")
					}
					i += 2
				case c < 0x80 && !literalByte(c):
					return nil, fmt.Errorf("%q may not appear outside an expression", c)
				}
			}
			parts = append(parts, uriPart{literal: lit})
		}
		rest = rest[open:]
		if rest == "" {
			break
		}
		if rest[0] == '}' {
			return nil, fmt.Errorf("} without {")
		}
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return nil, fmt.Errorf("unclosed {")
		}
		expr := rest[1:end]
		rest = rest[end+1:]
		part := uriPart{}
		if expr != "" {
			switch c := expr[0]; c {
			case '+':
				part.op, expr = c, expr[1:]
			case '#':
				return nil, fmt.Errorf("{%s} is fragment expansion; a path parameter needs {name} or {+name}", expr)
			case '.', '/', ';', '?', '&', '=', ',', '!', '@', '|':
				return nil, fmt.Errorf("{%s} uses a level 3 operator; only {name} and {+name} are served", expr)
			}
		}
		if strings.ContainsAny(expr, ",:*") {
			return nil, fmt.Errorf("{%s} needs level 3 or 4 (several variables, a prefix or explode); only {name} and {+name} are served", expr)
		}
		if !validVarname(expr) {
			return nil, fmt.Errorf("{%s}: %q is not a template variable name (letters, digits, _, and . between them)", expr, expr)
		}
		part.name = expr
		parts = append(parts, part)
	}
	var prefix string
	if len(parts) > 0 && parts[0].name == "" {
		prefix = parts[0].literal
	}
	scheme, _, ok := strings.Cut(prefix, ":")
	if !ok || !validScheme(scheme) {
		return nil, fmt.Errorf("it must begin with a scheme (like %s)", defaultURIBase)
	}
	for _, r := range reservedSchemes {
		if strings.EqualFold(scheme, r) {
			return nil, fmt.Errorf("the scheme %s: is reserved", scheme)
		}
	}
	return parts, nil
}

// validScheme reports an RFC 3986 scheme: ALPHA *( ALPHA / DIGIT / "+" /
// "-" / "." ).
func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// checkURIVars checks that the template's variables are the path
// parameters' (by their variable names), each exactly once.
func checkURIVars(parts []uriPart, inPath []string, varOf map[string]string) error {
	want := make([]string, 0, len(inPath))
	for _, n := range inPath {
		want = append(want, varOf[n])
	}
	var seen []string
	for _, p := range parts {
		if p.name == "" {
			continue
		}
		switch {
		case slices.Contains(seen, p.name):
			return fmt.Errorf("{%s} appears twice", p.name)
		case !slices.Contains(want, p.name):
			if len(want) == 0 {
				return fmt.Errorf("{%s} is not a path parameter: the path has none", p.name)
			}
			return fmt.Errorf("{%s} is not a path parameter: the variables are {%s}", p.name, strings.Join(want, "}, {"))
		}
		seen = append(seen, p.name)
	}
	for _, w := range want {
		if !slices.Contains(seen, w) {
			return fmt.Errorf("path parameter {%s} has no variable", w)
		}
	}
	return nil
}

// uriKey is the template without its variables' names: two resources with
// the same key would match the same URIs.
func uriKey(parts []uriPart) string {
	var b strings.Builder
	for _, p := range parts {
		if p.name == "" {
			b.WriteString(p.literal)
			continue
		}
		b.WriteByte('{')
		if p.op != 0 {
			b.WriteByte(p.op)
		}
		b.WriteByte('}')
	}
	return b.String()
}

// responseMediaType is the success response's media type: of the first
// 2xx response (200, 201, then by code, 2XX last) with content,
// application/json when it has it, else the first other in sorted order;
// media ranges with * are not a resource's type.
func responseMediaType(o *openapi3.Operation) string {
	if o.Responses == nil {
		return ""
	}
	m := o.Responses.Map()
	var codes []string
	for code, r := range m {
		if r != nil && r.Value != nil && (len(code) == 3 && code[0] == '2' || strings.EqualFold(code, "2XX")) {
			codes = append(codes, code)
		}
	}
	slices.SortFunc(codes, func(a, b string) int { return successRank(a) - successRank(b) })
	for _, code := range codes {
		var first string
		for _, mt := range sortedKeysOf(m[code].Value.Content) {
			if MediaBase(mt) == "application/json" {
				return mt
			}
			if first == "" && !strings.Contains(mt, "*") {
				first = mt
			}
		}
		if first != "" {
			return first
		}
	}
	return ""
}

// completionValues lists a path parameter's candidate values: its schema's
// enum, then its example and examples, then its schema's example and
// examples, as strings, without repeats. For simple expansion (not
// reserved) values holding a slash or being "." or ".." are left out: they
// could never match the one path segment the variable does.
func completionValues(p *openapi3.Parameter, reserved bool) []string {
	var schema *openapi3.Schema
	if p.Schema != nil {
		schema = p.Schema.Value
	}
	var raw []any
	if schema != nil {
		raw = append(raw, schema.Enum...)
	}
	if p.Example != nil {
		raw = append(raw, p.Example)
	}
	for _, k := range sortedKeysOf(p.Examples) {
		if e := p.Examples[k]; e != nil && e.Value != nil {
			raw = append(raw, e.Value.Value)
		}
	}
	if schema != nil {
		if schema.Example != nil {
			raw = append(raw, schema.Example)
		}
		raw = append(raw, schema.Examples...)
	}
	var out []string
	for _, v := range raw {
		s, ok := scalarString(v)
		if !ok || s == "" || slices.Contains(out, s) {
			continue
		}
		if !reserved && (strings.ContainsAny(s, `/\`) || s == "." || s == "..") {
			continue
		}
		out = append(out, s)
	}
	return out
}

// scalarString is a string, number or boolean as the text a URI carries.
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	}
	if f, ok := number(v); ok {
		return strconv.FormatFloat(f, 'f', -1, 64), true
	}
	return "", false
}
