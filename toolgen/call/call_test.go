package call

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// Helpers for the call path tests. Names start with "ct" so they cannot
// clash with other test files of this package.

// ctDoc loads an OpenAPI document from YAML text with kin-openapi directly,
// so these tests do not depend on the openapi package's loader.
func ctDoc(t testing.TB, spec string) *openapi.Document {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData([]byte(spec))
	require.NoError(t, err)
	require.NoError(t, doc.Validate(loader.Context))
	return &openapi.Document{T: doc, SourceVersion: doc.OpenAPI, Location: "http://docs.test/openapi.yaml"}
}

// ctDocFile loads a fixture from testdata.
func ctDocFile(t testing.TB, name string) *openapi.Document {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return ctDoc(t, string(data))
}

// ctTool binds one operation by hand the way the generator does: each
// parameter's argument is its name, an object body of a JSON, form or
// multipart media type is flattened (argument = property, or body_<property>
// when a parameter has that name), any other body is
// the argument "body"; the output schema comes from the first 2xx JSON
// response. mods adjust the binding.
func ctTool(t testing.TB, doc *openapi.Document, method, path string, mods ...func(*toolgen.Binding)) *toolgen.Tool {
	t.Helper()
	item := doc.T.Paths.Value(path)
	require.NotNil(t, item, "path %s", path)
	op := item.GetOperation(strings.ToUpper(method))
	require.NotNil(t, op, "%s %s", method, path)
	b := &toolgen.Binding{Method: strings.ToUpper(method), Path: path, PathItem: item, Operation: op}

	seen := map[string]bool{}
	for _, ref := range op.Parameters {
		b.Params = append(b.Params, toolgen.ParamBinding{Arg: ref.Value.Name, Param: ref.Value})
		seen[ref.Value.In+" "+ref.Value.Name] = true
	}
	for _, ref := range item.Parameters {
		if !seen[ref.Value.In+" "+ref.Value.Name] {
			b.Params = append(b.Params, toolgen.ParamBinding{Arg: ref.Value.Name, Param: ref.Value})
		}
	}
	if op.RequestBody != nil {
		rb := op.RequestBody.Value
		mts := make([]string, 0, len(rb.Content))
		for mt := range rb.Content {
			mts = append(mts, mt)
		}
		sort.Slice(mts, func(i, j int) bool {
			ji, jj := openapi.IsJSONMediaType(toolgen.MediaBase(mts[i])), openapi.IsJSONMediaType(toolgen.MediaBase(mts[j]))
			if ji != jj {
				return ji
			}
			return mts[i] < mts[j]
		})
		mt := mts[0]
		schema := rb.Content[mt].Schema
		bb := &toolgen.BodyBinding{MediaType: mt, Required: rb.Required, Schema: schema}
		base := toolgen.MediaBase(mt)
		flat := schema != nil && schema.Value != nil && schema.Value.Type.Is("object") && len(schema.Value.Properties) > 0 &&
			(openapi.IsJSONMediaType(base) || base == "application/x-www-form-urlencoded" || strings.HasPrefix(base, "multipart/"))
		if flat {
			bb.Flattened = true
			bb.Props = map[string]string{}
			for name := range schema.Value.Properties {
				arg := name
				if slices.ContainsFunc(b.Params, func(pb toolgen.ParamBinding) bool { return pb.Arg == name }) {
					arg = "body_" + name
				}
				bb.Props[arg] = name
			}
		} else {
			bb.Arg = "body"
		}
		b.Body = bb
	}
	if op.Security != nil {
		b.Security = *op.Security
	} else {
		b.Security = doc.T.Security
	}
	if op.Responses != nil {
		for _, code := range []string{"200", "201", "202", "203", "206"} {
			r := op.Responses.Value(code)
			if r == nil || r.Value == nil {
				continue
			}
			if media := r.Value.Content.Get("application/json"); media != nil && media.Schema != nil {
				b.HasOutputSchema = true
				b.OutputIsWrapped = !media.Schema.Value.Type.Is("object")
			}
			break
		}
	}
	for _, m := range mods {
		m(b)
	}
	name := op.OperationID
	if name == "" {
		name = strings.ToLower(method) + strings.ReplaceAll(path, "/", "_")
	}
	return &toolgen.Tool{Name: name, Description: name, InputSchema: json.RawMessage(`{"type":"object"}`), Binding: b}
}

// ctRequest is what the backend saw.
type ctRequest struct {
	Method     string
	RequestURI string
	Path       string // decoded
	RawQuery   string
	Header     http.Header
	Host       string
	Body       []byte
}

// ctBackend is an httptest server that records requests and answers with
// reply (200 {"ok":true} when nil).
type ctBackend struct {
	*httptest.Server
	mu    sync.Mutex
	reqs  []ctRequest
	reply http.HandlerFunc
}

func ctNewBackend(t testing.TB, reply http.HandlerFunc) *ctBackend {
	t.Helper()
	b := &ctBackend{reply: reply}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.reqs = append(b.reqs, ctRequest{
			Method: r.Method, RequestURI: r.RequestURI, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
			Header: r.Header.Clone(), Host: r.Host, Body: body,
		})
		b.mu.Unlock()
		if b.reply != nil {
			b.reply(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *ctBackend) requests() []ctRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]ctRequest(nil), b.reqs...)
}

// last returns the only request the backend saw.
func (b *ctBackend) last(t testing.TB) ctRequest {
	t.Helper()
	reqs := b.requests()
	require.Len(t, reqs, 1, "backend requests")
	return reqs[0]
}

func ctCaller(t testing.TB, doc *openapi.Document, cfg Config) *Caller {
	t.Helper()
	c, err := NewCaller(doc, cfg)
	require.NoError(t, err)
	return c
}

// ctText joins the text content of a result.
func ctText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func ctCall(t testing.TB, c *Caller, tool *toolgen.Tool, args string) *mcp.CallToolResult {
	t.Helper()
	res := c.Call(context.Background(), tool, json.RawMessage(args))
	require.NotNil(t, res)
	return res
}

// ctOK fails unless the result is a success.
func ctOK(t testing.TB, res *mcp.CallToolResult) {
	t.Helper()
	require.False(t, res.IsError, "unexpected error result: %s", ctText(res))
}
