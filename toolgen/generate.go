package toolgen

import (
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// Set is the tools generated from one document. It is immutable and safe
// for concurrent use.
type Set struct {
	tools    []*Tool
	byName   map[string]*Tool
	warnings []openapi.Warning
	// resources are the GET operations also served as MCP resources
	// (resources.go), by Tool.Name in resourceByName.
	resources      []*ResourceOp
	resourceByName map[string]*ResourceOp
	// toolsets are the named groups of tools (toolsets.go).
	toolsets []*Toolset
	// opts are the options the set was generated with, defaults applied.
	opts Options
}

// Tools returns the tools in document order: paths sorted as strings, then
// methods in the order the Path Item Object declares them (get, put, post,
// delete, options, head, patch, trace). The slice is shared; do not modify
// it or the tools.
func (s *Set) Tools() []*Tool { return slices.Clip(s.tools) }

// Lookup returns the tool with the given name.
func (s *Set) Lookup(name string) (*Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Warnings are what generation had to work around (renamed tools, skipped
// bodies, undeclared path parameters, ...). The document's own warnings are
// in openapi.Document.Warnings and are not repeated here.
func (s *Set) Warnings() []openapi.Warning { return slices.Clip(s.warnings) }

// Len is the number of tools.
func (s *Set) Len() int { return len(s.tools) }

const defaultMaxDescription = 1024

// Extensions read on operations and path items.
const (
	extMCP            = "x-mcp"             // false: no tool
	extMCPName        = "x-mcp-name"        // the tool's name
	extMCPDescription = "x-mcp-description" // the tool's description
	// extMCPOutputSchema overrides Options.OutputSchema for one operation.
	extMCPOutputSchema = "x-mcp-output-schema"
)

// Generate turns every operation of doc into a tool, except those excluded
// by x-mcp: false or by opts, and each GET operation that x-mcp-resource or
// Options.ResourceOperations selects into a resource (resources.go). It fails
// only on a nil document or a malformed glob; an operation that cannot
// become a tool or a resource is skipped with a warning.
func Generate(doc *openapi.Document, opts Options) (*Set, error) {
	if doc == nil || doc.T == nil {
		return nil, errors.New("toolgen: no document")
	}
	globs := slices.Concat(opts.Include, opts.Exclude, opts.ResourceOperations, opts.ConfirmOperations)
	for _, ts := range opts.Toolsets {
		globs = append(globs, ts.Tools...)
	}
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("toolgen: glob %q: %w", g, err)
		}
	}
	if err := ValidNamePrefix(opts.NamePrefix); err != nil {
		return nil, fmt.Errorf("toolgen: %w", err)
	}
	if err := ValidToolsets(opts.Toolsets); err != nil {
		return nil, fmt.Errorf("toolgen: %w", err)
	}
	if opts.OutputSchema == "" {
		opts.OutputSchema = OutputLenient
	}
	if !ValidOutputSchema(opts.OutputSchema) {
		return nil, fmt.Errorf("toolgen: OutputSchema must be lenient, strict or off, got %q", opts.OutputSchema)
	}
	if opts.MaxSchemaBytes == 0 {
		opts.MaxSchemaBytes = DefaultMaxSchemaBytes
	}
	if opts.MaxDescription <= 0 {
		opts.MaxDescription = defaultMaxDescription
	}
	g := &generator{doc: doc.T, opts: opts, seen: map[openapi.Warning]bool{}, fitter: newFitter(opts.MaxSchemaBytes)}
	g.conv = newConverter(doc.T, g.warn)

	all := openapi.Operations(doc.T)
	var ops []openapi.Operation
	for _, op := range all {
		if g.selected(op) {
			ops = append(ops, op)
		}
	}
	taken := reservedNames()
	names := g.names(ops, taken)
	set := &Set{byName: make(map[string]*Tool, len(ops)), opts: opts}
	tools := make(map[string]*Tool, len(ops)) // by location; nil: no tool could be made
	for i, op := range ops {
		t, err := g.tool(op, names[i])
		tools[op.Location()] = t
		if err != nil {
			g.warn(op.Location(), "no tool: "+err.Error())
			continue
		}
		set.tools = append(set.tools, t)
		set.byName[t.Name] = t
	}
	// After the tools, so that resources change nothing about them.
	g.resources(set, all, tools, taken)
	g.warnFitted()
	set.toolsets = g.toolsets(set)
	set.warnings = g.warnings
	return set, nil
}

type generator struct {
	doc      *openapi3.T
	opts     Options
	conv     *converter
	warnings []openapi.Warning
	seen     map[openapi.Warning]bool
	fitter   *fitter
	fitted   []fitted
}

func (g *generator) warn(loc, msg string) {
	w := openapi.Warning{Location: loc, Message: msg}
	if !g.seen[w] {
		g.seen[w] = true
		g.warnings = append(g.warnings, w)
	}
}

// selected applies x-mcp and the include/exclude globs. An operation's own
// x-mcp wins over its path item's.
func (g *generator) selected(op openapi.Operation) bool {
	enabled := true
	if v, ok := g.extBool(op.PathItem.Extensions, extMCP, "paths."+op.Path); ok {
		enabled = v
	}
	if v, ok := g.extBool(op.Operation.Extensions, extMCP, op.Location()); ok {
		enabled = v
	}
	if !enabled {
		return false
	}
	if len(g.opts.Include) > 0 {
		if !matchAny(g.opts.Include, op) {
			return false
		}
	} else if g.opts.ReadOnly && !SafeMethod(op.Method) {
		return false // read-only's default allow-list; Include replaces it
	}
	return !matchAny(g.opts.Exclude, op)
}

func matchAny(globs []string, op openapi.Operation) bool {
	for _, glob := range globs {
		if m, _ := path.Match(glob, op.Path); m {
			return true
		}
		if id := op.Operation.OperationID; id != "" {
			if m, _ := path.Match(glob, id); m {
				return true
			}
		}
		for _, tag := range op.Operation.Tags {
			if m, _ := path.Match(glob, tag); m {
				return true
			}
		}
	}
	return false
}

func (g *generator) extBool(ext map[string]any, key, loc string) (value, ok bool) {
	v, present := ext[key]
	if !present {
		return false, false
	}
	if b, ok := extBoolValue(v); ok {
		return b, true
	}
	g.warn(loc, fmt.Sprintf("%s should be true or false, not %v; ignored", key, v))
	return false, false
}

// extBoolValue reads an extension's boolean: true or false, also as the
// strings (any case, surrounding space ignored).
func extBoolValue(v any) (value, ok bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "false":
			return false, true
		case "true":
			return true, true
		}
	}
	return false, false
}

func (g *generator) extString(ext map[string]any, key, loc string) string {
	v, present := ext[key]
	if !present {
		return ""
	}
	s, ok := v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		g.warn(loc, fmt.Sprintf("%s should be a non-empty string; ignored", key))
		return ""
	}
	return strings.TrimSpace(s)
}

// names gives every operation a unique name: x-mcp-name first, then
// operationIds, then names made from method and path, each group in
// document order, so an explicit name is never the one that gets a suffix.
// A name that is taken (in taken, or by an earlier operation) gets "_" and a
// hash of the operation's method and path, which is stable across runs.
// The names are added to taken.
func (g *generator) names(ops []openapi.Operation, taken nameSet) []string {
	type want struct {
		name, why string
	}
	wants := make([]want, len(ops))
	for i, op := range ops {
		loc := op.Location()
		if x := g.extString(op.Operation.Extensions, extMCPName, loc); x != "" {
			n := sanitizeName(x)
			if n != x {
				g.warn(loc, fmt.Sprintf("%s %q is not a valid tool name; using %q", extMCPName, x, n))
			}
			if n != "" {
				wants[i] = want{n, extMCPName}
				continue
			}
		}
		if id := op.Operation.OperationID; id != "" {
			n := sanitizeName(id)
			if n != "" {
				if len(id) > maxNameLen {
					g.warn(loc, fmt.Sprintf("operationId %q is longer than %d characters; the tool is named %q", id, maxNameLen, n))
				}
				wants[i] = want{n, "operationId"}
				continue
			}
		}
		wants[i] = want{fallbackName(op.Method, op.Path), ""}
	}
	if p := g.opts.NamePrefix; p != "" {
		for i := range wants {
			wants[i].name = withPrefix(p, wants[i].name)
		}
	}
	out := make([]string, len(ops))
	for _, why := range []string{extMCPName, "operationId", ""} {
		for i, op := range ops {
			if wants[i].why != why {
				continue
			}
			out[i] = taken.claim(wants[i].name, op.Method+" "+op.Path, maxNameLen)
			if out[i] != wants[i].name {
				g.warn(op.Location(), fmt.Sprintf("tool name %q is already taken; this tool is named %q", wants[i].name, out[i]))
			}
		}
	}
	return out
}

func (g *generator) tool(op openapi.Operation, name string) (*Tool, error) {
	loc := op.Location()
	o := op.Operation
	b := &Binding{
		Method:    op.Method,
		Path:      op.Path,
		PathItem:  op.PathItem,
		Operation: o,
	}
	if o.Security != nil {
		b.Security = *o.Security
	} else {
		b.Security = g.doc.Security
	}
	b.Scopes = ScopeAlternatives(b.Security, g.doc.Components)
	b.Async = g.async(op)

	params, err := g.params(op)
	if err != nil {
		return nil, err
	}
	in := newState(modeInput, loc)
	var (
		props    members
		required []string
	)
	taken := map[string]bool{}
	for _, p := range params {
		b.Params = append(b.Params, ParamBinding{Arg: p.arg, Param: p.param})
		taken[p.arg] = true
		props.add(p.arg, g.paramSchema(p.param, in))
		if p.param.Required || p.param.In == openapi3.ParameterInPath {
			required = append(required, p.arg)
		}
	}
	if rb := o.RequestBody; rb != nil && rb.Value != nil {
		b.Body = g.body(op, rb.Value, taken, in, &props, &required)
	}
	// The output check holds results to the schema as declared: fit it first.
	out := g.fit(loc, "outputSchema", g.output(op, b))
	b.OutputSchema = out

	title := toolTitle(o, name)
	t := &Tool{
		Name:         name,
		Title:        title,
		Description:  g.description(op),
		InputSchema:  g.fit(loc, "inputSchema", g.inputSchema(props, required, in)),
		OutputSchema: out,
		Annotations:  annotations(op.Method, title),
		Confirm:      g.confirm(op, name),
		Binding:      b,
	}
	return t, nil
}

type param struct {
	arg   string
	param *openapi3.Parameter
}

// locationOrder orders parameters and decides which of two parameters with
// the same name keeps it as its argument name.
var locationOrder = []string{openapi3.ParameterInPath, openapi3.ParameterInQuery, openapi3.ParameterInHeader, openapi3.ParameterInCookie}

// params lists the operation's effective parameters (its own, then the path
// item's it does not override) with their argument names.
func (g *generator) params(op openapi.Operation) ([]param, error) {
	loc := op.Location()
	var list []*openapi3.Parameter
	seen := map[string]bool{}
	for _, refs := range []openapi3.Parameters{op.Operation.Parameters, op.PathItem.Parameters} {
		for _, ref := range refs {
			if ref == nil || ref.Value == nil {
				g.warn(loc, "unresolved parameter skipped")
				continue
			}
			p := ref.Value
			key := p.In + " " + p.Name
			if seen[key] {
				continue
			}
			seen[key] = true
			if !slices.Contains(locationOrder, p.In) {
				g.warn(loc, fmt.Sprintf("parameter %q has unknown location %q; skipped", p.Name, p.In))
				continue
			}
			if p.In == openapi3.ParameterInHeader {
				switch http.CanonicalHeaderKey(p.Name) {
				case "Accept", "Content-Type", "Authorization":
					continue // OpenAPI: such header parameters are ignored
				}
			}
			list = append(list, p)
		}
	}

	// The path template and the path parameters must agree: the call path
	// fills every {name} from an argument.
	inTemplate, err := templateNames(op.Path)
	if err != nil {
		return nil, err
	}
	kept := list[:0]
	for _, p := range list {
		if p.In == openapi3.ParameterInPath && !slices.Contains(inTemplate, p.Name) {
			g.warn(loc, fmt.Sprintf("path parameter %q does not appear in the path; skipped", p.Name))
			continue
		}
		kept = append(kept, p)
	}
	list = kept
	for _, name := range inTemplate {
		if !slices.ContainsFunc(list, func(p *openapi3.Parameter) bool {
			return p.In == openapi3.ParameterInPath && p.Name == name
		}) {
			g.warn(loc, fmt.Sprintf("path parameter {%s} is not declared; it is taken as a required string", name))
			list = append(list, &openapi3.Parameter{
				Name: name, In: openapi3.ParameterInPath, Required: true,
				Schema: openapi3.NewStringSchema().NewRef(),
			})
		}
	}

	slices.SortStableFunc(list, func(a, b *openapi3.Parameter) int {
		return slices.Index(locationOrder, a.In) - slices.Index(locationOrder, b.In)
	})
	out := make([]param, 0, len(list))
	taken := map[string]bool{}
	for _, p := range list {
		base := sanitizeArg(p.Name)
		if base == "" {
			base = p.In
		}
		arg := base
		for i := 1; taken[arg]; i++ {
			suffix := p.In
			if i > 1 {
				suffix = fmt.Sprintf("%s%d", p.In, i)
			}
			arg = withSuffix(base, suffix, maxNameLen)
		}
		if arg != p.Name {
			g.warn(loc, fmt.Sprintf("%s parameter %q is the argument %q", p.In, p.Name, arg))
		}
		taken[arg] = true
		out = append(out, param{arg: arg, param: p})
	}
	return out, nil
}

// templateNames lists the {names} of a path template.
func templateNames(tmpl string) ([]string, error) {
	var names []string
	for rest := tmpl; ; {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			return names, nil
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("path template %q has an unclosed {", tmpl)
		}
		name := rest[open+1 : open+end]
		if name == "" {
			return nil, fmt.Errorf("path template %q has an empty {}", tmpl)
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		rest = rest[open+end+1:]
	}
}

// paramSchema is a parameter's property: its schema, with the parameter's
// description, deprecation and examples.
func (g *generator) paramSchema(p *openapi3.Parameter, st *state) []byte {
	ref := p.Schema
	if ref == nil {
		for _, mt := range sortedKeysOf(p.Content) {
			if m := p.Content[mt]; m != nil && m.Schema != nil {
				ref = m.Schema
				break
			}
		}
	}
	if ref == nil {
		g.warn(st.loc, fmt.Sprintf("%s parameter %q has no schema; it is taken as a string", p.In, p.Name))
		ref = openapi3.NewStringSchema().NewRef()
	}
	ms, raw := g.conv.schemaMembers(ref, st)
	if raw != nil {
		return raw
	}
	if d := strings.TrimSpace(plainText(p.Description)); d != "" {
		// The parameter's description replaces the schema's, and with it
		// the note of a format no client knows (see texts): say it again.
		if ref.Value != nil && ref.Value.Format != "" && !knownFormat(ref.Value.Format) {
			d += "\n\nFormat: " + ref.Value.Format + "."
		}
		ms.setDescription(jsonString(d))
	}
	if p.Deprecated {
		ms.set("deprecated", jsonTrue)
	}
	var examples []any
	if p.Example != nil {
		examples = append(examples, p.Example)
	}
	for _, k := range sortedKeysOf(p.Examples) {
		if e := p.Examples[k]; e != nil && e.Value != nil && e.Value.Value != nil {
			examples = append(examples, e.Value.Value)
		}
	}
	if len(examples) > 0 {
		if v := jsonValue(examples); v != nil {
			ms.set("examples", v)
		}
	}
	return ms.json()
}

// schemaDialect names the JSON Schema dialect of every input schema, so a
// client need not guess between draft-07 (older MCP revisions' default) and
// 2020-12 (the default from 2025-11-25 on).
const schemaDialect = "https://json-schema.org/draft/2020-12/schema"

func (g *generator) inputSchema(props members, required []string, st *state) []byte {
	ms := members{{"$schema", jsonString(schemaDialect)}, {"type", jsonString("object")}}
	if len(props) > 0 {
		ms.add("properties", props.json())
	}
	if len(required) > 0 {
		ms.add("required", jsonStrings(required))
	}
	// The call path rejects arguments the tool does not declare.
	ms.add("additionalProperties", jsonFalse)
	if defs := g.conv.defsJSON(st.deps, modeInput, st.loc); defs != nil {
		ms.add("$defs", defs)
	}
	return ms.json()
}

// fit simplifies a schema beyond Options.MaxSchemaBytes (simplify.go) and
// notes it for the one warning Generate gives about them. The call path
// still checks arguments against the document's own schemas, so a cut
// input schema only tells the client less.
func (g *generator) fit(loc, which string, schema []byte) []byte {
	out, how, changed := g.fitter.fit(schema)
	if changed {
		g.fitted = append(g.fitted, fitted{loc: loc, which: which, how: how})
	}
	return out
}

// fitted is one schema fit simplified.
type fitted struct {
	loc, which string
	how        simplification
}

// warnFitted gives one warning for all the schemas simplified, naming the
// largest, and one for each that is still over the bound (those need the
// operator: a bigger bound, or x-mcp-output-schema: off).
func (g *generator) warnFitted() {
	if len(g.fitted) == 0 {
		return
	}
	var over []string
	for _, f := range g.fitted {
		if f.how.after > g.opts.MaxSchemaBytes {
			over = append(over, f.loc)
			g.warn(f.loc, fmt.Sprintf("%s is %d bytes even simplified to its top-level property names (from %d): over max_schema_bytes (%d)",
				f.which, f.how.after, f.how.before, g.opts.MaxSchemaBytes))
		}
	}
	big := slices.MaxFunc(g.fitted, func(a, b fitted) int { return a.how.before - b.how.before })
	steps := fmt.Sprintf("descriptions below level %d dropped", big.how.docsFrom-1)
	switch {
	case big.how.cutAt == 0:
		steps = "every description and every subschema below the top dropped"
	case big.how.docsFrom == 1:
		steps = fmt.Sprintf("every description but the tool's own dropped, levels below %d cut", big.how.cutAt)
	case big.how.cutAt > 0:
		steps += fmt.Sprintf(", levels below %d cut", big.how.cutAt)
	}
	g.warn("", fmt.Sprintf("%d tool schemas were over max_schema_bytes (%d) and were simplified; the largest, the %s at %s, from %d to %d bytes (%s)",
		len(g.fitted), g.opts.MaxSchemaBytes, big.which, big.loc, big.how.before, big.how.after, steps))
}

// description is x-mcp-description, else summary and description, else
// "METHOD /path"; trimmed to MaxDescription characters.
func (g *generator) description(op openapi.Operation) string {
	o := op.Operation
	d := g.extString(o.Extensions, extMCPDescription, op.Location())
	if d == "" {
		summary, desc := strings.TrimSpace(plainText(o.Summary)), strings.TrimSpace(plainText(o.Description))
		switch {
		case summary == "":
			d = desc
		case desc == "" || strings.HasPrefix(desc, summary):
			d = cmpOr(desc, summary)
		default:
			d = summary + "\n\n" + desc
		}
		if d == "" {
			d = op.Method + " " + op.Path
		}
		if o.Deprecated {
			d = "Deprecated. " + d
		}
	}
	return TruncateText(d, g.opts.MaxDescription)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TruncateText cuts s to at most n characters, ending with "…" when cut:
// max_description's rule, also for descriptions made outside generation.
func TruncateText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return string([]rune(s)[:max(n, 0)])
	}
	r := []rune(s)[:n-1]
	return strings.TrimRightFunc(string(r), func(c rune) bool { return c == ' ' || c == '\n' || c == '\t' }) + "…"
}

// maxTitle bounds a title taken from a summary.
const maxTitle = 100

func toolTitle(o *openapi3.Operation, name string) string {
	if s := strings.TrimSpace(plainText(o.Summary)); s != "" {
		line, _, _ := strings.Cut(s, "\n")
		return TruncateText(strings.TrimSpace(line), maxTitle)
	}
	return humanize(name)
}

// annotations are the hints derived from the method:
//
//	GET HEAD OPTIONS TRACE QUERY  readOnly, not destructive, idempotent
//	PUT                           destructive (replaces what is there), idempotent
//	DELETE                        destructive, idempotent
//	PATCH                         destructive (changes what is there), not idempotent
//	POST and others               not destructive (creates), not idempotent
//
// Every hint is set explicitly rather than left to the MCP defaults
// (readOnly false, destructive true, idempotent false); openWorld is always
// true, as the tool reaches an external system.
func annotations(method, title string) *Annotations {
	readOnly, destructive, idempotent := false, false, false
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, openapi3.MethodQuery:
		readOnly, idempotent = true, true
	case http.MethodPut, http.MethodDelete:
		destructive, idempotent = true, true
	case http.MethodPatch:
		destructive = true
	}
	return &Annotations{
		Title:           title,
		ReadOnlyHint:    &readOnly,
		DestructiveHint: &destructive,
		IdempotentHint:  &idempotent,
		OpenWorldHint:   new(true),
	}
}
