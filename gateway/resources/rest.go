package resources

// Resources read from the backend: REST-backed ones (a GET operation with
// x-mcp-resource, or selected by resource_operations) and declared ones
// whose source is an operation.

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// addOperations adds the REST-backed resources of ops to s: fixed ones and
// templates, after the declared ones.
func (f *Feature) addOperations(s *state, ops []*toolgen.ResourceOp) {
	for _, op := range ops {
		src := restSource(op)
		if op.URITemplate == "" {
			if _, taken := s.bodies[op.URI]; taken {
				continue // a declared resource wins
			}
			if _, taken := s.dynamic[op.URI]; taken {
				continue
			}
			s.dynamic[op.URI] = src
			s.resources = append(s.resources, resource{URI: op.URI, Name: op.Name, Title: op.Title,
				Description: op.Description, MIMEType: op.MIMEType, tool: op.Tool.Name})
			continue
		}
		t, err := parseTemplate(op.URITemplate)
		if err != nil {
			continue // toolgen checked it; a template it let through and this refuses is not served
		}
		t.source = *src
		t.info = resourceTemplate{URITemplate: op.URITemplate, Name: op.Name, Title: op.Title,
			Description: op.Description, MIMEType: op.MIMEType, tool: op.Tool.Name}
		t.values = op.Values
		s.templates = append(s.templates, t)
	}
}

// restSource reads a REST-backed resource: the GET of its operation, with
// the template's variables as the path parameters.
func restSource(op *toolgen.ResourceOp) *source {
	return &source{tool: op.Tool.Name, watched: true, interval: op.PollInterval,
		render: func(rd *reading, vars map[string]string) (*body, error) {
			args := make(map[string]json.RawMessage, len(vars))
			for v, val := range vars {
				arg := cmp.Or(op.Vars[v], v)
				args[arg] = op.Tool.ArgFromText(arg, val)
			}
			raw, err := json.Marshal(args)
			if err != nil {
				return nil, err
			}
			if rd.f.deps.Fetch == nil {
				return nil, errors.New("resources: no Fetch to read a REST-backed resource with")
			}
			got, err := rd.f.deps.Fetch(rd.r, op.Tool.Name, raw, rd.cond)
			if err != nil {
				var fe *call.FetchError
				if errors.As(err, &fe) {
					return nil, fetchFailed(rd, fe)
				}
				return nil, err
			}
			return fetchedBody(got, op.MIMEType), nil
		}}
}

// fetchFailed is the answer to a read the backend failed: not found for a
// 404 or 410, else an error with the call path's sanitized message.
func fetchFailed(rd *reading, fe *call.FetchError) error {
	if fe.NotFound {
		return errGone
	}
	data := map[string]any{"kind": "backend_error"}
	if fe.Status != 0 {
		data["backendStatus"] = fe.Status
	}
	if fe.Timeout {
		data["kind"] = "backend_timeout"
	}
	return mcp.NewError(mcp.CodeInternalError, "Reading the resource failed: %s", mcp.Verbatim(fe.Message)).WithData(data)
}

// errGone marks a read the backend answered 404 or 410: lookup answers
// it as the era's not found.
var errGone = errors.New("resources: the backend has no such resource")

// fetchedBody is a backend response as resource contents: text for text
// and JSON media types (valid UTF-8), else a base64 blob.
func fetchedBody(got *call.Fetched, declared string) *body {
	b := &body{mimeType: cmp.Or(got.MIMEType, declared), etag: got.ETag, lastModified: got.LastModified, notModified: got.NotModified}
	if got.NotModified {
		return b
	}
	if (b.mimeType == "" || call.IsTextMIME(b.mimeType)) && utf8.Valid(got.Body) {
		b.text = string(got.Body)
	} else {
		b.isBlob, b.blob = true, base64.StdEncoding.EncodeToString(got.Body)
		b.mimeType = cmp.Or(b.mimeType, "application/octet-stream")
	}
	return b
}

// operationSource reads a declared operation-backed resource: the result of
// the tool d.Operation. mime is what lists show.
func operationSource(d Declared) (src *source, mime string, err error) {
	if d.Text != nil || d.Blob != nil {
		return nil, "", errors.New("operation is a source of its own: give it, or text, blob or file, not both")
	}
	fixed := make(map[string]json.RawMessage, len(d.Arguments))
	for k, v := range d.Arguments {
		if fixed[k], err = json.Marshal(v); err != nil {
			return nil, "", errors.New("arguments must be JSON values")
		}
	}
	name := d.Operation
	src = &source{tool: name, watched: true, render: func(rd *reading, vars map[string]string) (*body, error) {
		var tool *toolgen.Tool
		if rd.s.cat != nil && rd.s.cat.Set != nil {
			tool, _ = rd.s.cat.Set.Lookup(name)
		}
		args := make(map[string]json.RawMessage, len(fixed)+len(vars))
		maps.Copy(args, fixed)
		for k, v := range vars {
			args[k] = tool.ArgFromText(k, v)
		}
		raw, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		if rd.f.deps.CallTool == nil {
			return nil, errors.New("resources: no CallTool to read an operation-backed resource with")
		}
		res, err := rd.f.deps.CallTool(rd.r, name, raw)
		if err != nil {
			return nil, err
		}
		return resultBody(res, d.MIMEType)
	}}
	return src, d.MIMEType, nil
}

// resultBody is a tool result as resource contents: its structuredContent
// as JSON, else its first content block. A tool error is an error with
// the tool's (sanitized) text.
func resultBody(res *mcp.CallToolResult, declared string) (*body, error) {
	if res.IsError {
		return nil, mcp.NewError(mcp.CodeInternalError, "Reading the resource failed: %s", mcp.Verbatim(mcp.TruncateTo(res.FirstText(), 500, "…"))).
			WithData(map[string]any{"kind": "tool_error"})
	}
	if len(res.StructuredContent) > 0 {
		return &body{mimeType: cmp.Or(declared, "application/json"), text: string(res.StructuredContent)}, nil
	}
	if len(res.Content) == 0 {
		return &body{mimeType: cmp.Or(declared, "text/plain")}, nil
	}
	c := res.Content[0]
	switch {
	case c.Type == "text":
		return &body{mimeType: cmp.Or(declared, "text/plain"), text: c.Text}, nil
	case c.Resource != nil:
		if c.Resource.Blob != "" {
			return &body{mimeType: cmp.Or(c.Resource.MimeType, declared, "application/octet-stream"), isBlob: true, blob: c.Resource.Blob}, nil
		}
		return &body{mimeType: cmp.Or(c.Resource.MimeType, declared, "text/plain"), text: c.Resource.Text}, nil
	default: // image, audio
		return &body{mimeType: cmp.Or(c.MimeType, declared, "application/octet-stream"), isBlob: true, blob: c.Data}, nil
	}
}

// Snapshot is what change polling compares: the validators and a hash
// of the contents. Gone: the backend has no such resource (now).
type Snapshot struct {
	NotModified        bool
	ETag, LastModified string
	Hash               string
	Gone               bool
}

// Poll reads uri as the gateway's own change poll (nobody's scopes or
// limits), conditionally when cond has validators.
func (f *Feature) Poll(uri string, cond call.Conditional) (Snapshot, error) {
	return f.observe(&reading{era: mcp.EraSession, cond: cond}, uri)
}

// Snapshot reads uri as r's caller would (its scopes, limits and quotas)
// and returns what change polling compares: a subscription starts from
// what it read. A URI the backend does not have is the era's not found.
func (f *Feature) Snapshot(r *mcp.Request, uri string) (Snapshot, error) {
	return f.observe(&reading{r: r, era: r.Era}, uri)
}

func (f *Feature) observe(rd *reading, uri string) (Snapshot, error) {
	b, err := f.lookup(rd, uri)
	switch {
	case errors.Is(err, errGone):
		return Snapshot{Gone: true, Hash: "gone"}, nil
	case err != nil:
		return Snapshot{}, err
	case b.notModified:
		return Snapshot{NotModified: true, ETag: cmp.Or(b.etag, rd.cond.ETag), LastModified: cmp.Or(b.lastModified, rd.cond.LastModified)}, nil
	}
	h := sha256.New()
	h.Write([]byte(b.mimeType))
	h.Write([]byte{0})
	h.Write([]byte(b.text))
	h.Write([]byte(b.blob))
	return Snapshot{ETag: b.etag, LastModified: b.lastModified, Hash: hex.EncodeToString(h.Sum(nil)[:16])}, nil
}

// URIsForPath are the REST-backed resources a backend path names (a
// change webhook's "paths"): each whose operation's path template matches
// it, as the URI the resource has for those path parameters.
func (f *Feature) URIsForPath(path string) []string {
	s := f.current.Load()
	if s.cat == nil || s.cat.Set == nil {
		return nil
	}
	path, _, _ = strings.Cut(path, "?")
	var out []string
	for _, op := range s.cat.Set.Resources() {
		params, ok := matchPath(op.Tool.Binding.Path, path)
		if !ok {
			continue
		}
		if op.URITemplate == "" {
			out = append(out, op.URI)
			continue
		}
		uri, ok := expand(op, params)
		if ok {
			out = append(out, uri)
		}
	}
	return out
}

// matchPath matches a concrete path against an OpenAPI path template
// segment by segment; each {param} segment matches one non-empty segment.
func matchPath(tmpl, path string) (map[string]string, bool) {
	ts, ps := strings.Split(strings.Trim(tmpl, "/"), "/"), strings.Split(strings.Trim(path, "/"), "/")
	if len(ts) != len(ps) {
		return nil, false
	}
	params := map[string]string{}
	for i, t := range ts {
		if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") && strings.Count(t, "{") == 1 {
			if ps[i] == "" {
				return nil, false
			}
			params[t[1:len(t)-1]] = ps[i] // still percent-encoded, as a URI wants it
			continue
		}
		if t != ps[i] {
			return nil, false
		}
	}
	return params, true
}

// expand is op's URI for the path parameters' (encoded) values.
func expand(op *toolgen.ResourceOp, params map[string]string) (string, bool) {
	argParam := map[string]string{}
	for _, p := range op.Tool.Binding.Params {
		argParam[p.Arg] = p.Param.Name
	}
	uri := op.URITemplate
	for v, arg := range op.Vars {
		val, ok := params[argParam[arg]]
		if !ok {
			return "", false
		}
		uri = strings.Replace(uri, "{"+v+"}", val, 1)
		uri = strings.Replace(uri, "{+"+v+"}", val, 1)
	}
	if strings.Contains(uri, "{") {
		return "", false
	}
	return uri, true
}
