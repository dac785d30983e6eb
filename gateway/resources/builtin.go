package resources

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// AllOperations is the name Deps.Permits is asked for the built-ins that
// show the whole document (gateway://openapi, gateway://schema/{name}):
// only a caller that may use every operation sees them.
const AllOperations = "\x00all operations"

// The built-ins, on the scheme no declared resource may use.
const (
	aboutURI       = "gateway://about"
	openapiURI     = "gateway://openapi"
	schemaTemplate = "gateway://schema/{name}"
)

var (
	aboutResource = resource{URI: aboutURI, Name: "about", Title: "About this gateway",
		Description: "The gateway's name and version, the protocol revisions it serves, how many tools, resources and prompts it offers, " +
			"and the backend document's title, version and contentHash: the first 16 hex digits of the SHA-256 of gateway://openapi's text.",
		MIMEType: "application/json"}
	openapiResource = resource{URI: openapiURI, Name: "openapi", Title: "Backend OpenAPI document",
		Description: "The backend's OpenAPI document as the gateway loaded it (references resolved, Swagger 2.0 converted to OpenAPI 3), as JSON.",
		MIMEType:    "application/json"}
	schemaInfo = resourceTemplate{URITemplate: schemaTemplate, Name: "schema", Title: "Component schema",
		Description: "A component schema of the backend's OpenAPI document (components.schemas.{name}) as OpenAPI Schema Object JSON; its $refs are the document's.",
		MIMEType:    "application/json"}
)

// schemaMatcher is gateway://schema/{name}, compiled once.
var schemaMatcher = func() *uriTemplate {
	t, err := parseTemplate(schemaTemplate)
	if err != nil {
		panic(err)
	}
	t.info = schemaInfo
	t.render = readSchema
	t.exists = func(s *state, vars map[string]string) bool {
		comps := s.cat.Doc.T.Components
		return comps != nil && comps.Schemas[vars["name"]] != nil
	}
	return t
}()

// builtins adds the built-ins but gateway://about (which counts the
// lists) to s.
func builtins(s *state) {
	s.resources = append(s.resources, aboutResource)
	doc := s.cat.Doc
	if doc == nil || doc.T == nil {
		return
	}
	// The whole document describes every operation: it is for callers
	// that may use them all.
	r := openapiResource
	r.tool = AllOperations
	s.resources = append(s.resources, r)
	s.dynamic[openapiURI] = builtin(s.openapiBody, AllOperations)

	var names []string
	if doc.T.Components != nil {
		for name := range doc.T.Components.Schemas {
			names = append(names, name)
		}
		slices.Sort(names)
	}
	t := *schemaMatcher
	t.values = map[string][]string{"name": names}
	t.tool, t.info.tool = AllOperations, AllOperations
	s.templates = append(s.templates, &t)
}

// builtin is a fixed built-in made on first read (mk keeps what it made),
// for callers permitted tool ("": anyone). Its contents change only with
// the catalog: it is not watched.
func builtin(mk func() *body, tool string) *source {
	return &source{tool: tool, render: func(*reading, map[string]string) (*body, error) {
		b := mk()
		if b.err != nil {
			return nil, b.err
		}
		return b, nil
	}}
}

// readSchema is gateway://schema/{name}: nil for a name that is not a
// component schema.
func readSchema(rd *reading, vars map[string]string) (*body, error) {
	comps := rd.s.cat.Doc.T.Components
	if comps == nil {
		return nil, nil
	}
	ref := comps.Schemas[vars["name"]]
	if ref == nil {
		return nil, nil
	}
	// The component's own schema: a component that is itself a $ref
	// (to another file, say) shows what it refers to.
	var v any = ref
	if ref.Value != nil {
		v = ref.Value
	}
	raw, err := mcp.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("resources: encode schema %s: %w", mcp.Truncate(vars["name"]), err)
	}
	return &body{mimeType: schemaInfo.MIMEType, text: string(raw)}, nil
}

// aboutJSON is gateway://about.
type aboutJSON struct {
	Gateway struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"gateway"`
	ProtocolRevisions []string `json:"protocolRevisions"`
	Capabilities      struct {
		Tools     count `json:"tools"`
		Resources struct {
			Count     int `json:"count"`
			Templates int `json:"templates"`
		} `json:"resources"`
		Prompts count `json:"prompts"`
	} `json:"capabilities"`
	Document *aboutDocument `json:"document,omitempty"`
}

type count struct {
	Count int `json:"count"`
}

type aboutDocument struct {
	Title         string `json:"title,omitempty"`
	Version       string `json:"version,omitempty"`
	OpenAPI       string `json:"openapi,omitempty"`
	SourceVersion string `json:"sourceVersion,omitempty"`
	ContentHash   string `json:"contentHash,omitempty"`
}

// openapiBody is gateway://openapi, encoded on first read and then kept:
// a large document (GitHub's: 13 MB) costs neither start-up time nor a
// second copy in memory until a client asks for it, and is not encoded
// again on every read. kin-openapi encodes objects as Go maps, so keys
// are sorted and the text is the same for the same document (and
// library version); it is also what about's contentHash is of (the
// loader keeps no raw bytes to hash instead).
func (s *state) openapiBody() *body {
	s.openapiOnce.Do(func() {
		raw, err := mcp.Marshal(s.cat.Doc.T)
		if err != nil {
			s.openapi = &body{err: fmt.Errorf("resources: encode %s: %w", openapiURI, err)}
			return
		}
		sum := sha256.Sum256(raw)
		s.docHash = hex.EncodeToString(sum[:8])
		s.openapi = &body{mimeType: openapiResource.MIMEType, text: string(raw)}
	})
	return s.openapi
}

// about is gateway://about for s, made on first read (its contentHash
// needs gateway://openapi's text).
func about(s *state) *body {
	var a aboutJSON
	a.Gateway.Name, a.Gateway.Version = s.cat.ServerName, s.cat.ServerVersion
	a.ProtocolRevisions = s.cat.Revisions
	a.Capabilities.Tools.Count = s.cat.Tools
	a.Capabilities.Resources.Count = len(s.resources)
	a.Capabilities.Resources.Templates = len(s.templates)
	a.Capabilities.Prompts.Count = s.cat.Prompts
	if doc := s.cat.Doc; doc != nil && doc.T != nil {
		s.openapiBody()
		d := &aboutDocument{OpenAPI: doc.T.OpenAPI, SourceVersion: doc.SourceVersion, ContentHash: s.docHash}
		if doc.T.Info != nil {
			d.Title, d.Version = doc.T.Info.Title, doc.T.Info.Version
		}
		a.Document = d
	}
	raw, err := mcp.Marshal(&a) // strings, ints and slices: cannot fail
	if err != nil {
		return &body{err: fmt.Errorf("resources: encode %s: %w", aboutURI, err)}
	}
	return &body{mimeType: aboutResource.MIMEType, text: string(raw)}
}
