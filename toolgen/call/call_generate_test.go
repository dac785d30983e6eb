package call

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// These tests drive the call path through tools made by Generate from
// documents loaded by the openapi package, the way the gateway does.

func ctGenerated(t *testing.T, fixture string) (*openapi.Document, *toolgen.Set) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", fixture))
	require.NoError(t, err)
	doc, err := openapi.LoadData(context.Background(), data, "http://docs.test/"+fixture, openapi.LoadOptions{})
	require.NoError(t, err)
	set, err := toolgen.Generate(doc, toolgen.Options{})
	require.NoError(t, err)
	return doc, set
}

func ctLookup(t *testing.T, set *toolgen.Set, name string) *toolgen.Tool {
	t.Helper()
	tool, ok := set.Lookup(name)
	require.True(t, ok, "tool %s", name)
	return tool
}

// ctConforms checks structuredContent against the tool's outputSchema (a
// JSON Schema 2020-12 document).
func ctConforms(t *testing.T, tool *toolgen.Tool, res *mcp.CallToolResult) {
	t.Helper()
	require.NotEmpty(t, tool.OutputSchema)
	require.NotNil(t, res.StructuredContent, "a tool with an outputSchema must return structuredContent")
	var schema openapi3.Schema
	require.NoError(t, json.Unmarshal(tool.OutputSchema, &schema))
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var value any
	require.NoError(t, json.Unmarshal(raw, &value))
	require.NoError(t, schema.VisitJSON(value, openapi3.EnableJSONSchema2020()), "structuredContent %s", raw)
}

func TestCallGeneratedPetstore(t *testing.T) {
	doc, set := ctGenerated(t, "petstore.yaml")
	pet := `{"id":7,"name":"Rex","tag":null,"status":"available","owner":{"email":"a@b.c","friend":{"email":"d@e.f"}}}`
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "GET" && r.URL.Path == "/v1/pets":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, "["+pet+"]")
		case r.Method == "POST":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, pet)
		case r.Method == "GET" && r.URL.Path == "/v1/pets/7/photo":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("\x89PNG"))
		case r.Method == "GET":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, pet)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL + "/v1", APIKeys: map[string]string{"apiKey": "k"}})

	t.Run("listPets: wrapped array output", func(t *testing.T) {
		tool := ctLookup(t, set, "listPets")
		res := ctCall(t, caller, tool, `{"limit": 10, "tags": ["a", "b c"], "status": "sold"}`)
		ctOK(t, res)
		ctConforms(t, tool, res)
		require.Equal(t, `{"result":[`+pet+`]}`, ctStructured(t, res))
		got := backend.requests()[0]
		require.Equal(t, "/v1/pets?limit=10&tags=a,b%20c&status=sold", got.RequestURI)
		require.Equal(t, "k", got.Header.Get("X-Api-Key"))
	})
	t.Run("listPets: invalid arguments", func(t *testing.T) {
		tool := ctLookup(t, set, "listPets")
		res := ctCall(t, caller, tool, `{"limit": 0}`)
		require.True(t, res.IsError)
		require.Equal(t, `invalid argument "limit": number must be at least 1`, ctText(res))
		res = ctCall(t, caller, tool, `{"status": "lost"}`)
		require.True(t, res.IsError)
		require.Contains(t, ctText(res), `invalid argument "status": value is not one of the allowed values`)
	})
	t.Run("createPet: flattened body, readOnly id not an argument", func(t *testing.T) {
		tool := ctLookup(t, set, "createPet")
		res := ctCall(t, caller, tool, `{"name": "Rex", "owner": {"email": "a@b.c"}}`)
		ctOK(t, res)
		ctConforms(t, tool, res)
		reqs := backend.requests()
		require.JSONEq(t, `{"name":"Rex","owner":{"email":"a@b.c"}}`, string(reqs[len(reqs)-1].Body))
		res = ctCall(t, caller, tool, `{"id": 1, "name": "Rex"}`)
		require.True(t, res.IsError)
		require.Contains(t, ctText(res), `unknown argument "id"`)
		res = ctCall(t, caller, tool, `{"owner": {"email": "a@b.c"}}`)
		require.True(t, res.IsError)
		require.Equal(t, `invalid argument "name": a value is required`, ctText(res))
	})
	t.Run("getPet: path and query parameters of the same name", func(t *testing.T) {
		tool := ctLookup(t, set, "getPet")
		var input struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(tool.InputSchema, &input))
		require.Contains(t, input.Properties, "petId")
		require.Contains(t, input.Properties, "petId_query")
		res := ctCall(t, caller, tool, `{"petId": 7, "petId_query": "x/y", "X-Request-Id": "r1"}`)
		ctOK(t, res)
		ctConforms(t, tool, res)
		reqs := backend.requests()
		got := reqs[len(reqs)-1]
		require.Equal(t, "/v1/pets/7?petId=x%2Fy", got.RequestURI)
		require.Equal(t, "r1", got.Header.Get("X-Request-Id"))
	})
	t.Run("deletePet: 204", func(t *testing.T) {
		res := ctCall(t, caller, ctLookup(t, set, "deletePet"), `{"petId": 7}`)
		ctOK(t, res)
		require.Equal(t, "204 No Content", ctText(res))
	})
	t.Run("uploadPhoto: multipart with a base64 file", func(t *testing.T) {
		photo := []byte("\x89PNG\r\n\x1a\n")
		res := ctCall(t, caller, ctLookup(t, set, "uploadPhoto"),
			`{"petId": 7, "caption": "hi", "photo": "`+base64.StdEncoding.EncodeToString(photo)+`"}`)
		ctOK(t, res)
		reqs := backend.requests()
		got := reqs[len(reqs)-1]
		require.Equal(t, "PUT", got.Method)
		_, params, err := mime.ParseMediaType(got.Header.Get("Content-Type"))
		require.NoError(t, err)
		form, err := multipart.NewReader(bytes.NewReader(got.Body), params["boundary"]).ReadForm(1 << 20)
		require.NoError(t, err)
		require.Equal(t, []string{"hi"}, form.Value["caption"])
		f, err := form.File["photo"][0].Open()
		require.NoError(t, err)
		data, _ := io.ReadAll(f)
		require.Equal(t, photo, data)
	})
	t.Run("getPhoto: image content, x-mcp-timeout", func(t *testing.T) {
		tool := ctLookup(t, set, "getPhoto")
		res := ctCall(t, caller, tool, `{"petId": 7}`)
		ctOK(t, res)
		require.Equal(t, []mcp.Content{{Type: "image", Data: base64.StdEncoding.EncodeToString([]byte("\x89PNG")), MimeType: "image/png"}}, res.Content)
		p, err := caller.plan(tool.Binding)
		require.NoError(t, err)
		require.Equal(t, 5*time.Second, p.timeout)
	})
	t.Run("base URL from the document's server variables", func(t *testing.T) {
		c, err := NewCaller(doc, Config{})
		require.NoError(t, err)
		require.Equal(t, "http://placeholder.test/v1", c.base.String())
	})
}

func TestCallGeneratedSwagger(t *testing.T) {
	doc, set := ctGenerated(t, "swagger.yaml")
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/search" {
			_, _ = io.WriteString(w, `["a","b"]`)
			return
		}
		_, _ = io.WriteString(w, `{"id":1}`)
	})
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL + "/api"})

	tool := ctLookup(t, set, "addNote")
	res := ctCall(t, caller, tool, `{"text": "hello", "pinned": true}`)
	ctOK(t, res)
	ctConforms(t, tool, res)
	got := backend.requests()[0]
	require.Equal(t, "/api/notes", got.RequestURI)
	require.JSONEq(t, `{"text":"hello","pinned":true}`, string(got.Body))

	// Whether the generator flattens this form (kin-openapi makes formData
	// an optional request body) is its business; call it either way.
	attach := ctLookup(t, set, "attach")
	fields := `"file": "` + base64.StdEncoding.EncodeToString([]byte{0, 1, 2}) + `", "label": "x"`
	args := `{"id": 3, "body": {` + fields + `}}`
	if attach.Binding.Body.Flattened {
		args = `{"id": 3, ` + fields + `}`
	}
	res = ctCall(t, caller, attach, args)
	ctOK(t, res)
	got = backend.requests()[1]
	require.Equal(t, "/api/notes/3/attachments", got.RequestURI)
	_, params, err := mime.ParseMediaType(got.Header.Get("Content-Type"))
	require.NoError(t, err)
	form, err := multipart.NewReader(bytes.NewReader(got.Body), params["boundary"]).ReadForm(1 << 20)
	require.NoError(t, err)
	require.Equal(t, []string{"x"}, form.Value["label"])
	require.Len(t, form.File["file"], 1)
	f, err := form.File["file"][0].Open()
	require.NoError(t, err)
	data, _ := io.ReadAll(f)
	require.Equal(t, []byte{0, 1, 2}, data)

	tool = ctLookup(t, set, "search")
	res = ctCall(t, caller, tool, `{"q": "a&b", "ids": [1, 2]}`)
	ctOK(t, res)
	ctConforms(t, tool, res)
	require.Equal(t, "/api/search?q=a%26b&ids=1%7C2", backend.requests()[2].RequestURI)
	res = ctCall(t, caller, tool, `{"ids": [1]}`)
	require.True(t, res.IsError)
	require.Equal(t, `invalid argument "q": a value is required`, ctText(res))
}
