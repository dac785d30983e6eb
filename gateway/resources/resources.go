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
	"context"
	"encoding/json"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/openapi"
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
}

// Feature serves the resources methods.
type Feature struct {
	pageSize int
	declared *compiled
	current  atomic.Pointer[state]
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
	// lazy are the built-ins made on first read, by URI.
	lazy map[string]func() *body
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
}

// resourceTemplate is a ResourceTemplate as resources/templates/list
// shows it.
type resourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// New checks cfg and returns the feature, serving the declared resources
// and, once SetCatalog is called, the built-ins. An error names the
// entry at fault by index and URI.
func New(cfg Config) (*Feature, error) {
	c, err := compile(cfg.Declared)
	if err != nil {
		return nil, err
	}
	f := &Feature{pageSize: cfg.PageSize, declared: c}
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
	f.current.Store(f.build(&c))
}

// build makes the generation serving cat (nil: declared resources only).
func (f *Feature) build(cat *Catalog) *state {
	s := &state{cat: cat, bodies: make(map[string]*body, len(f.declared.bodies)), lazy: map[string]func() *body{}}
	if cat != nil {
		builtins(s)
	}
	s.resources = append(s.resources, f.declared.resources...)
	for uri, b := range f.declared.bodies {
		s.bodies[uri] = b
	}
	s.templates = append(s.templates, f.declared.templates...)
	for _, t := range s.templates {
		s.infos = append(s.infos, t.info)
	}
	if cat != nil {
		// about counts what the lists hold: made on first read, from
		// the lists complete by then.
		var once sync.Once
		var b *body
		s.lazy[aboutURI] = func() *body { once.Do(func() { b = about(s) }); return b }
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
	items, next, err := page(r, s.resources, s.resourcesTag, f.pageSize)
	if err != nil {
		return nil, err
	}
	return &listResult{Resources: items, NextCursor: next, ResultMeta: r.StampResult(true)}, nil
}

func (f *Feature) listTemplates(r *mcp.Request) (any, error) {
	s := f.current.Load()
	items, next, err := page(r, s.infos, s.templatesTag, f.pageSize)
	if err != nil {
		return nil, err
	}
	return &listTemplatesResult{ResourceTemplates: items, NextCursor: next, ResultMeta: r.StampResult(true)}, nil
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
	b, err := f.lookup(r.Era, *uri)
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
// the contents of uri, or the not-found error of the era. Any other error
// is the gateway's fault: the transport logs it and answers -32603
// "Internal error".
func (f *Feature) Read(_ context.Context, era mcp.Era, uri string) ([]mcp.ResourceContents, error) {
	b, err := f.lookup(era, uri)
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{{URI: uri, MimeType: b.mimeType, Text: b.text, Blob: b.blob}}, nil
}

// maxMatched bounds the URIs tried against templates: the matcher's cost
// grows with the length, and no template resource needs a longer one.
const maxMatched = 8 << 10

// lookup finds uri: a fixed resource first, then the templates in order.
func (f *Feature) lookup(era mcp.Era, uri string) (*body, error) {
	s := f.current.Load()
	b, ok := s.bodies[uri]
	if mk, lazy := s.lazy[uri]; lazy {
		b, ok = mk(), true
	}
	if ok {
		if b.err != nil {
			return nil, b.err
		}
		return b, nil
	}
	if len(uri) <= maxMatched {
		for _, t := range s.templates {
			vars, ok := t.match(uri)
			if !ok {
				continue
			}
			b, err := t.render(s, vars)
			if err != nil {
				return nil, err
			}
			if b != nil {
				return b, nil
			}
		}
	}
	return nil, notFound(era, uri)
}

// notFound is the era's answer to an unknown URI.
func notFound(era mcp.Era, uri string) *mcp.Error {
	code := mcp.CodeResourceNotFound // session era
	if era == mcp.EraStateless {
		code = mcp.CodeInvalidParams // 2026-07-28 retired -32002
	}
	return mcp.NewError(code, "Resource not found: %s", uri).WithData(map[string]string{"uri": mcp.Truncate(uri)})
}

// VariableValues are the completion candidates of a template's variable:
// Values for declared templates; for gateway://schema/{name} (once
// SetCatalog gave a document), the component schema names, sorted. ok is
// false for an unknown template or variable.
func (f *Feature) VariableValues(uriTemplate, variable string) (values []string, ok bool) {
	s := f.current.Load()
	for _, t := range s.templates {
		if t.info.URITemplate == uriTemplate {
			return t.variableValues(variable)
		}
	}
	return nil, false
}
