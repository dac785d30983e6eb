// Package resources is the MCP resources feature: resources/list,
// resources/templates/list and resources/read, and Read for the features
// that embed a resource (prompts) or complete a template's variables
// (VariableValues).
//
// It serves the resources the configuration declares (fixed URIs and RFC
// 6570 templates whose text is a Go text/template over the variables) and
// three built-ins on the reserved gateway: scheme, present once SetCatalog
// gave the OpenAPI document: gateway://about, gateway://openapi and the
// template gateway://schema/{name}. An unknown URI is "not found" in the
// shape each era uses (-32002 in the session era, -32602 in 2026-07-28).
//
// It registers its methods on the server's method table and sees requests
// only as gateway/mcp values. It must not import package gateway, the
// transport, or another feature package.
package resources

import (
	"encoding/json"
	"errors"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// Config is the feature's configuration. Zero values take the defaults
// noted on each field.
type Config struct {
	// PageSize is the resources/list and resources/templates/list page
	// size. Zero means 100.
	PageSize int
	// Declared are the configured resources, listed and matched in order
	// after the built-ins.
	Declared []Declared
}

// Catalog is what the built-in resources describe; SetCatalog replaces it
// atomically (document reloads).
type Catalog struct {
	// Doc is the backend's document. Nil leaves out gateway://openapi and
	// gateway://schema/{name}.
	Doc                       *openapi.Document
	ServerName, ServerVersion string
	// Revisions are the protocol revisions served; nil means
	// mcp.SupportedVersions.
	Revisions []string
	// Tools and Prompts are the counts gateway://about reports (this
	// package sees neither feature).
	Tools, Prompts int
	// Set is the generated tools and resource operations: its resource
	// operations are served as REST-backed resources, and declared
	// operation-backed resources name its tools.
	Set *toolgen.Set
}

// Deps are how the feature reaches the backend. Each admits the caller as
// tools/call does (scopes, limits, quotas, the policy webhook) and its
// error is the answer as is (an *mcp.Error chooses the code); r nil is the
// gateway's own change polling, admitted as nobody.
type Deps struct {
	// Fetch GETs the resource operation name with args, conditionally when
	// cond has validators. A *call.FetchError is the backend's answer.
	Fetch func(r *mcp.Request, name string, args json.RawMessage, cond call.Conditional) (*call.Fetched, error)
	// CallTool runs the tool name for an operation-backed resource.
	CallTool func(r *mcp.Request, name string, args json.RawMessage) (*mcp.CallToolResult, error)
	// Permits reports whether r's caller may use the tool or operation
	// name: resources backed by one it may not use are neither listed
	// nor read. Nil permits all.
	Permits func(r *mcp.Request, name string) bool
}

// Feature serves the resources methods.
type Feature struct {
	pageSize int
	deps     Deps
	current  atomic.Pointer[state]
	// mu orders SetCatalog and SetDeclared, the writers of current;
	// declared is read under it.
	mu       sync.Mutex
	declared *compiled
}

// state is one generation of what is served: the declared resources and,
// after SetCatalog, the built-ins.
type state struct {
	cat          *Catalog // nil before SetCatalog
	resources    []resource
	resourcesTag string
	bodies       map[string]*body // fixed resources by URI
	templates    []*uriTemplate
	infos        []resourceTemplate
	templatesTag string
	// dynamic are the fixed resources read from the backend, by URI.
	dynamic map[string]*source
	// openapi is gateway://openapi once made; docHash the hash of its
	// text (empty without a document).
	openapiOnce sync.Once
	openapi     *body
	docHash     string
}

// resource is a Resource as resources/list shows it.
type resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// tool is the operation that backs it (Deps.Permits), or "".
	tool string
}

// resourceTemplate is a ResourceTemplate as resources/templates/list
// shows it.
type resourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	tool        string
}

// New checks cfg and returns the feature, serving the declared resources
// and, once SetCatalog is called, the built-ins. An error names the
// entry at fault by index and URI.
func New(cfg Config, deps Deps) (*Feature, error) {
	c, err := compile(cfg.Declared)
	if err != nil {
		return nil, err
	}
	f := &Feature{pageSize: cfg.PageSize, declared: c, deps: deps}
	if f.pageSize <= 0 {
		f.pageSize = 100
	}
	f.current.Store(f.build(nil))
	return f, nil
}

// Register adds the feature's methods to the server's table.
func (f *Feature) Register(r mcp.Router) {
	r.Handle("resources/list", mcp.EraBoth, f.list)
	r.Handle("resources/templates/list", mcp.EraBoth, f.listTemplates)
	r.Handle("resources/read", mcp.EraBoth, f.read)
}

// SetCatalog atomically replaces what the built-ins describe. Cursors of
// the previous generation stay good if the lists did not change.
func (f *Feature) SetCatalog(c Catalog) {
	if c.Revisions == nil {
		c.Revisions = mcp.SupportedVersions
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.current.Store(f.build(&c))
}

// SetDeclared serves decl instead of the declared resources served now,
// with the built-ins as they are, atomically; an error (named as New
// names it) leaves them as they are. Subscriptions to a resource that is
// gone get no more updates.
func (f *Feature) SetDeclared(decl []Declared) error {
	c, err := compile(decl)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.declared = c
	f.current.Store(f.build(f.current.Load().cat))
	return nil
}

// Check reports what would make SetDeclared(decl) fail, serving nothing.
func Check(decl []Declared) error {
	_, err := compile(decl)
	return err
}

// build makes the generation serving cat (nil: declared resources only).
func (f *Feature) build(cat *Catalog) *state {
	s := &state{cat: cat, bodies: make(map[string]*body, len(f.declared.bodies)), dynamic: map[string]*source{}}
	if cat != nil {
		builtins(s)
	}
	s.resources = append(s.resources, f.declared.resources...)
	for uri, b := range f.declared.bodies {
		s.bodies[uri] = b
	}
	for uri, src := range f.declared.dynamic {
		s.dynamic[uri] = src
	}
	s.templates = append(s.templates, f.declared.templates...)
	if cat != nil && cat.Set != nil {
		f.addOperations(s, cat.Set.Resources())
	}
	for _, t := range s.templates {
		s.infos = append(s.infos, t.info)
	}
	if cat != nil {
		// about counts what the lists hold: made on first read, from
		// the lists complete by then.
		var once sync.Once
		var b *body
		s.dynamic[aboutURI] = builtin(func() *body { once.Do(func() { b = about(s) }); return b }, "")
	}
	s.resourcesTag, s.templatesTag = listTag(s.resources), listTag(s.infos)
	return s
}

// listTag fingerprints a list by what it shows, so that a cursor is good
// exactly as long as the list it paginates.
func listTag[T any](items []T) string {
	h := fnv.New64a()
	for _, it := range items {
		b, _ := json.Marshal(it) // plain strings: cannot fail
		h.Write(b)
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

type listResult struct {
	Resources  []resource `json:"resources"`
	NextCursor string     `json:"nextCursor,omitempty"`
	mcp.ResultMeta
}

type listTemplatesResult struct {
	ResourceTemplates []resourceTemplate `json:"resourceTemplates"`
	NextCursor        string             `json:"nextCursor,omitempty"`
	mcp.ResultMeta
}

func (f *Feature) list(r *mcp.Request) (any, error) {
	s := f.current.Load()
	tool := func(x resource) string { return x.tool }
	items, next, err := page(r, visible(f, r, s.resources, tool), s.resourcesTag, f.pageSize)
	if err != nil {
		return nil, err
	}
	return &listResult{Resources: items, NextCursor: next, ResultMeta: listMeta(f, r, s.resources, tool)}, nil
}

func (f *Feature) listTemplates(r *mcp.Request) (any, error) {
	s := f.current.Load()
	tool := func(x resourceTemplate) string { return x.tool }
	items, next, err := page(r, visible(f, r, s.infos, tool), s.templatesTag, f.pageSize)
	if err != nil {
		return nil, err
	}
	return &listTemplatesResult{ResourceTemplates: items, NextCursor: next, ResultMeta: listMeta(f, r, s.infos, tool)}, nil
}

// listMeta stamps a list result: cacheable, but "private" rather than
// "public" when what a caller sees depends on who it is, as tools/list
// does: when Deps.Permits refuses an anonymous caller an operation behind
// some of all. A public cache would otherwise hand one caller's list,
// names and URIs of resources others may not see included, to another.
func listMeta[T any](f *Feature, r *mcp.Request, all []T, tool func(T) string) mcp.ResultMeta {
	m := r.StampResult(true)
	if m.CacheScope == "" || f.deps.Permits == nil {
		return m
	}
	nobody := &mcp.Request{Ctx: r.Ctx, Era: r.Era, Version: r.Version, Stamp: r.Stamp}
	for _, x := range all {
		if name := tool(x); name != "" && !f.deps.Permits(nobody, name) {
			m.CacheScope = "private"
			break
		}
	}
	return m
}

// Fingerprint is a short hash of the resources and templates r's caller
// sees now: it differs exactly when its lists would.
func (f *Feature) Fingerprint(r *mcp.Request) string {
	s := f.current.Load()
	return listTag(visible(f, r, s.resources, func(x resource) string { return x.tool })) + "." +
		listTag(visible(f, r, s.infos, func(x resourceTemplate) string { return x.tool }))
}

// permits reports whether r's caller may use the operation tool: yes for
// none, for the gateway's own reads (r nil), and without Deps.Permits.
func (f *Feature) permits(r *mcp.Request, tool string) bool {
	return tool == "" || r == nil || f.deps.Permits == nil || f.deps.Permits(r, tool)
}

// visible is the part of all r's caller may use: all of it unless some
// are backed by operations that need scopes.
func visible[T any](f *Feature, r *mcp.Request, all []T, tool func(T) string) []T {
	if f.deps.Permits == nil {
		return all
	}
	var out []T
	for i, x := range all {
		if name := tool(x); name != "" && !f.deps.Permits(r, name) {
			if out == nil {
				out = append(make([]T, 0, len(all)), all[:i]...)
			}
			continue
		}
		if out != nil {
			out = append(out, x)
		}
	}
	if out == nil {
		return all
	}
	return out
}

// page is the page of all that r's cursor names, and the next cursor.
func page[T any](r *mcp.Request, all []T, tag string, size int) ([]T, string, error) {
	var p mcp.ListParams
	if err := mcp.DecodeParams(r, &p); err != nil {
		return nil, "", err
	}
	start := 0
	if p.Cursor != nil {
		var err error
		if start, err = mcp.DecodeCursor(*p.Cursor, tag, len(all)); err != nil {
			return nil, "", err
		}
	}
	end := min(start+size, len(all))
	items := slices.Clip(all[start:end])
	if items == nil {
		items = []T{} // an empty list, not null
	}
	next := ""
	if end < len(all) {
		next = mcp.EncodeCursor(tag, end)
	}
	return items, next, nil
}

type readResult struct {
	Contents []contents `json:"contents"`
	mcp.ResultMeta
}

// contents is TextResourceContents or BlobResourceContents: unlike
// mcp.ResourceContents it keeps an empty text or blob, which each needs.
type contents struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

func (f *Feature) read(r *mcp.Request) (any, error) {
	uri := r.Meta.URI
	if !r.Meta.OK {
		var p struct {
			URI *string `json:"uri"`
		}
		if err := mcp.DecodeParams(r, &p); err != nil {
			return nil, err
		}
		uri = p.URI
	}
	if uri == nil {
		return nil, mcp.InvalidParams("Invalid params for resources/read: uri is required")
	}
	b, err := f.lookup(&reading{r: r, era: r.Era}, *uri)
	if err != nil {
		return nil, err
	}
	c := contents{URI: *uri, MIMEType: b.mimeType}
	if b.isBlob {
		c.Blob = &b.blob
	} else {
		c.Text = &b.text
	}
	return &readResult{Contents: []contents{c}, ResultMeta: r.StampResult(false)}, nil
}

// Read is resources/read for other features (prompts embed resources):
// the contents of uri as r's caller may read them, or the error to answer
// with (the not-found error of the era, a refusal, a backend failure). An
// error that is not an *mcp.Error is the gateway's fault: the transport
// logs it and answers -32603 "Internal error".
func (f *Feature) Read(r *mcp.Request, uri string) ([]mcp.ResourceContents, error) {
	b, err := f.lookup(&reading{r: r, era: r.Era}, uri)
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{{URI: uri, MimeType: b.mimeType, Text: b.text, Blob: b.blob}}, nil
}

// reading is one read: who asks (r nil: the gateway's own poll) and, for
// a poll, the validators of the one before.
type reading struct {
	s    *state
	f    *Feature
	r    *mcp.Request
	era  mcp.Era
	cond call.Conditional
}

// source makes a resource's body on every read: a REST-backed or
// operation-backed resource, a built-in template.
type source struct {
	render func(rd *reading, vars map[string]string) (*body, error)
	// tool is the operation behind it ("" for none): the caller must be
	// permitted it.
	tool string
	// watched: its contents change, and subscribers' copies are polled
	// every interval (zero: the watcher's default).
	watched  bool
	interval time.Duration
}

// maxMatched bounds the URIs tried against templates: the matcher's cost
// grows with the length, and no template resource needs a longer one.
const maxMatched = 8 << 10

// lookup reads uri: a fixed resource first, then the templates in order.
func (f *Feature) lookup(rd *reading, uri string) (*body, error) {
	rd.s, rd.f = f.current.Load(), f
	src, vars, b, err := rd.s.find(rd, uri)
	if err != nil {
		return nil, err
	}
	if b != nil {
		if b.err != nil {
			return nil, b.err
		}
		return b, nil
	}
	if !f.permits(rd.r, src.tool) {
		// What the caller may not see does not exist for it.
		return nil, notFound(rd.era, uri)
	}
	if b, err = src.render(rd, vars); err != nil {
		if errors.Is(err, errGone) && rd.r != nil {
			return nil, notFound(rd.era, uri)
		}
		return nil, err
	}
	if b == nil {
		return nil, notFound(rd.era, uri)
	}
	return b, nil
}

// find resolves uri to a static body or to the source that makes it (and
// the variables a template matched); neither is not-found.
func (s *state) find(rd *reading, uri string) (*source, map[string]string, *body, error) {
	if b, ok := s.bodies[uri]; ok {
		return nil, nil, b, nil
	}
	if src, ok := s.dynamic[uri]; ok {
		return src, nil, nil, nil
	}
	if len(uri) <= maxMatched {
		for _, t := range s.templates {
			if vars, ok := t.match(uri); ok && t.known(s, vars) {
				return &t.source, vars, nil, nil
			}
		}
	}
	return nil, nil, nil, notFound(rd.era, uri)
}

// Template is the URI template a templated resource's uri matches, for a
// record of the read without the arguments the URI carries (a span); ok
// is false for a fixed resource's URI and an unknown one.
func (f *Feature) Template(uri string) (tmpl string, ok bool) {
	s := f.current.Load()
	if _, fixed := s.bodies[uri]; fixed || len(uri) > maxMatched {
		return "", false
	}
	if _, fixed := s.dynamic[uri]; fixed {
		return "", false
	}
	for _, t := range s.templates {
		if vars, ok := t.match(uri); ok && t.known(s, vars) {
			return t.info.URITemplate, true
		}
	}
	return "", false
}

// notFound is the era's answer to an unknown URI.
func notFound(era mcp.Era, uri string) *mcp.Error {
	code := mcp.CodeResourceNotFound // session era
	if era == mcp.EraStateless {
		code = mcp.CodeInvalidParams // 2026-07-28 retired -32002
	}
	return mcp.NewError(code, "Resource not found: %s", uri).WithData(map[string]string{"uri": mcp.Truncate(uri)})
}

// VariableValues are the completion candidates of a template's variable
// for r's caller: Values for declared templates; for a REST-backed one, the
// path parameter's enum and examples; for gateway://schema/{name} (once
// SetCatalog gave a document), the component schema names, sorted. ok is
// false for an unknown template or variable, and for a template r's caller
// may not read.
func (f *Feature) VariableValues(r *mcp.Request, uriTemplate, variable string) (values []string, ok bool) {
	s := f.current.Load()
	for _, t := range s.templates {
		if t.info.URITemplate == uriTemplate {
			if !f.permits(r, t.tool) {
				return nil, false
			}
			return t.variableValues(variable)
		}
	}
	return nil, false
}

// Watched reports whether uri is a resource whose contents can change (a
// REST-backed or operation-backed one) and how often to poll it (zero:
// the default), for the gateway's change polling.
func (f *Feature) Watched(uri string) (bool, time.Duration) {
	rd := &reading{era: mcp.EraSession, s: f.current.Load(), f: f}
	src, _, _, err := rd.s.find(rd, uri)
	if err != nil || src == nil {
		return false, 0
	}
	return src.watched, src.interval
}

// Known reports whether uri is a resource r's caller may read, without
// reading it: nil, or the error resources/read would answer for a URI it
// does not know (resources/subscribe answers the same). watched reports
// whether its contents can change (a REST-backed or operation-backed
// resource), interval how often to poll it (zero: the default).
func (f *Feature) Known(r *mcp.Request, uri string) (watched bool, interval time.Duration, err error) {
	rd := &reading{r: r, era: r.Era, s: f.current.Load(), f: f}
	src, _, _, err := rd.s.find(rd, uri)
	if err != nil {
		return false, 0, err
	}
	if src == nil {
		return false, 0, nil
	}
	if !f.permits(r, src.tool) {
		return false, 0, notFound(r.Era, uri)
	}
	return src.watched, src.interval, nil
}
