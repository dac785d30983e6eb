package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stretchr/testify/require"
)

// placeholder is the document's server URL; the legacy router matches on it.
const placeholder = "http://127.0.0.1:8081"

var fixedNow = time.Date(2025, 2, 1, 12, 0, 0, 0, time.UTC)

func newTestServer() *Server {
	s := New()
	s.now = func() time.Time { return fixedNow }
	return s
}

// example is one request to a fresh server and what it must answer.
type example struct {
	name         string
	method, path string
	header       map[string]string
	body         string // sent as application/json unless header sets Content-Type
	status       int
	contentType  string // "" means no Content-Type and an empty body
	want         string // a substring of the response body
}

func (ex example) request() *http.Request {
	var body io.Reader
	if ex.body != "" {
		body = strings.NewReader(ex.body)
	}
	r := httptest.NewRequest(ex.method, placeholder+ex.path, body)
	if ex.body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range ex.header {
		r.Header.Set(k, v)
	}
	return r
}

func (ex example) serve(s *Server) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, ex.request())
	return rec
}

const (
	problemJSON = "application/problem+json"
	textPlain   = "text/plain; charset=utf-8"
	appJSON     = "application/json"
)

var examples = []example{
	{name: "health", method: "GET", path: "/health", status: 200, contentType: textPlain, want: "ok"},

	{name: "list all", method: "GET", path: "/notes", status: 200, contentType: appJSON, want: `"total":3}`},
	{name: "list by status", method: "GET", path: "/notes?status=draft", status: 200, contentType: appJSON, want: `"title":"Shopping list"`},
	{name: "list by tags", method: "GET", path: "/notes?tag=work&tag=finance&limit=5", status: 200, contentType: appJSON, want: `"total":1}`},
	{name: "list limited", method: "GET", path: "/notes?limit=1", status: 200, contentType: appJSON, want: `"total":3}`},
	{name: "list bad status", method: "GET", path: "/notes?status=deleted", status: 400, contentType: problemJSON, want: "status must be one of"},
	{name: "list empty status", method: "GET", path: "/notes?status=", status: 400, contentType: problemJSON, want: "status must be one of"},
	{name: "list limit too small", method: "GET", path: "/notes?limit=0", status: 400, contentType: problemJSON, want: "limit"},
	{name: "list limit too big", method: "GET", path: "/notes?limit=101", status: 400, contentType: problemJSON, want: "limit"},
	{name: "list limit not integer", method: "GET", path: "/notes?limit=ten", status: 400, contentType: problemJSON, want: "limit"},
	{name: "list bad tag", method: "GET", path: "/notes?tag=Work!", status: 400, contentType: problemJSON, want: "tag"},

	{name: "create", method: "POST", path: "/notes", header: map[string]string{"X-Author": "carol"},
		body: `{"title":"Call Dan","tags":["work"]}`, status: 201, contentType: appJSON,
		want: `{"id":4,"title":"Call Dan","body":"","tags":["work"],"status":"draft","author":"carol","createdAt":"2025-02-01T12:00:00Z","updatedAt":"2025-02-01T12:00:00Z"}`},
	{name: "create anonymous", method: "POST", path: "/notes", body: `{"title":"x","body":"y","status":"published","tags":[]}`, status: 201, contentType: appJSON, want: `"author":"anonymous"`},
	{name: "create without title", method: "POST", path: "/notes", body: `{"body":"y"}`, status: 400, contentType: problemJSON, want: "title is required"},
	{name: "create with id", method: "POST", path: "/notes", body: `{"id":7,"title":"x"}`, status: 400, contentType: problemJSON, want: "id is read-only"},
	{name: "create with unknown field", method: "POST", path: "/notes", body: `{"title":"x","color":"red"}`, status: 400, contentType: problemJSON, want: "unknown property"},
	{name: "create with wrong case", method: "POST", path: "/notes", body: `{"Title":"x"}`, status: 400, contentType: problemJSON, want: "unknown property"},
	{name: "create with null", method: "POST", path: "/notes", body: `{"title":"x","body":null}`, status: 400, contentType: problemJSON, want: "must not be null"},
	{name: "create with wrong type", method: "POST", path: "/notes", body: `{"title":5}`, status: 400, contentType: problemJSON, want: "title has the wrong type"},
	{name: "create with empty title", method: "POST", path: "/notes", body: `{"title":""}`, status: 400, contentType: problemJSON, want: "title must be"},
	{name: "create with bad status", method: "POST", path: "/notes", body: `{"title":"x","status":"done"}`, status: 400, contentType: problemJSON, want: "status"},
	{name: "create with bad tag", method: "POST", path: "/notes", body: `{"title":"x","tags":["a b"]}`, status: 400, contentType: problemJSON, want: "tag"},
	{name: "create with array body", method: "POST", path: "/notes", body: `[]`, status: 400, contentType: problemJSON, want: "JSON object"},
	{name: "create with invalid JSON", method: "POST", path: "/notes", body: `{"title":`, status: 400, contentType: problemJSON, want: "JSON object"},
	{name: "create as text", method: "POST", path: "/notes", header: map[string]string{"Content-Type": "text/plain"}, body: `{"title":"x"}`, status: 400, contentType: problemJSON, want: "Content-Type"},
	{name: "create with long author", method: "POST", path: "/notes", header: map[string]string{"X-Author": strings.Repeat("a", 65)}, body: `{"title":"x"}`, status: 400, contentType: problemJSON, want: "X-Author"},

	{name: "get", method: "GET", path: "/notes/2", status: 200, contentType: appJSON,
		want: `{"id":2,"title":"Shopping list","body":"Milk, eggs, coffee beans.","tags":["personal"],"status":"draft","author":"alice","createdAt":"2025-01-06T10:00:00Z","updatedAt":"2025-01-06T10:00:00Z"}`},
	{name: "get unknown", method: "GET", path: "/notes/99", status: 404, contentType: problemJSON, want: `"detail":"no note has id 99"`},
	{name: "get bad id", method: "GET", path: "/notes/abc", status: 400, contentType: problemJSON, want: "id must be"},
	{name: "get zero id", method: "GET", path: "/notes/0", status: 400, contentType: problemJSON, want: "id must be"},

	{name: "replace", method: "PUT", path: "/notes/2", body: `{"title":"Groceries"}`, status: 200, contentType: appJSON,
		want: `{"id":2,"title":"Groceries","body":"","tags":[],"status":"draft","author":"alice","createdAt":"2025-01-06T10:00:00Z","updatedAt":"2025-02-01T12:00:00Z"}`},
	{name: "replace unknown", method: "PUT", path: "/notes/99", body: `{"title":"x"}`, status: 404, contentType: problemJSON, want: "no note"},
	{name: "replace without title", method: "PUT", path: "/notes/2", body: `{}`, status: 400, contentType: problemJSON, want: "title is required"},
	{name: "replace without body", method: "PUT", path: "/notes/2", status: 400, contentType: problemJSON, want: "Content-Type"},

	{name: "update", method: "PATCH", path: "/notes/1", body: `{"status":"archived"}`, status: 200, contentType: appJSON,
		want: `"title":"Welcome to mcp-gateway","body":"Every operation of this API is an MCP tool.","tags":["demo","welcome"],"status":"archived"`},
	{name: "update nothing", method: "PATCH", path: "/notes/1", body: `{}`, status: 400, contentType: problemJSON, want: "at least one"},
	{name: "update to null", method: "PATCH", path: "/notes/1", body: `{"title":null}`, status: 400, contentType: problemJSON, want: "must not be null"},
	{name: "update read-only", method: "PATCH", path: "/notes/1", body: `{"author":"mallory"}`, status: 400, contentType: problemJSON, want: "read-only"},
	{name: "update too many tags", method: "PATCH", path: "/notes/1", body: `{"tags":["a","b","c","d","e","f","g","h","i","j","k"]}`, status: 400, contentType: problemJSON, want: "at most 10"},
	{name: "update unknown", method: "PATCH", path: "/notes/99", body: `{"status":"draft"}`, status: 404, contentType: problemJSON, want: "no note"},

	{name: "delete", method: "DELETE", path: "/notes/3", status: 204},
	{name: "delete unknown", method: "DELETE", path: "/notes/99", status: 404, contentType: problemJSON, want: "no note"},
	{name: "delete bad id", method: "DELETE", path: "/notes/-1", status: 400, contentType: problemJSON, want: "id must be"},

	{name: "text", method: "GET", path: "/notes/2/text", status: 200, contentType: textPlain, want: "Shopping list\n\nMilk, eggs, coffee beans.\n"},
	{name: "text unknown", method: "GET", path: "/notes/99/text", status: 404, contentType: problemJSON, want: "no note"},

	{name: "files", method: "GET", path: "/files", status: 200, contentType: appJSON, want: `{"name":"pixel.png","contentType":"image/png","size":`},
	{name: "download", method: "GET", path: "/files/logo.png/download", status: 200, contentType: "image/png", want: "\x89PNG\r\n\x1a\n"},
	{name: "download unknown", method: "GET", path: "/files/nope.png/download", status: 404, contentType: problemJSON, want: `no file is named \"nope.png\"`},
	{name: "download bad name", method: "GET", path: "/files/Logo%20Big.png/download", status: 400, contentType: problemJSON, want: "name must be"},
	{name: "check", method: "HEAD", path: "/files/pixel.png/download", status: 200, contentType: "image/png"},
	{name: "check unknown", method: "HEAD", path: "/files/nope.png/download", status: 404},
}

func TestOperations(t *testing.T) {
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			rec := ex.serve(newTestServer())
			require.Equal(t, ex.status, rec.Code, rec.Body.String())
			require.Equal(t, ex.contentType, rec.Header().Get("Content-Type"))
			require.Contains(t, rec.Body.String(), ex.want)
			if ex.method == "HEAD" || ex.status == 204 {
				require.Zero(t, rec.Body.Len())
			}
			if ex.contentType == problemJSON {
				var p problem
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
				require.Equal(t, problem{Type: "about:blank", Title: http.StatusText(ex.status), Status: ex.status, Detail: p.Detail}, p)
			}
		})
	}
}

// TestDocumentMatchesHandler keeps the document and the handler in step: the
// document is valid, the examples cover every operation, the handler answers
// 400 exactly when kin-openapi rejects the request, and every response
// validates against the document.
func TestDocumentMatchesHandler(t *testing.T) {
	ctx := context.Background()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI())
	require.NoError(t, err)
	require.NoError(t, doc.Validate(ctx))
	router, err := legacy.NewRouter(doc)
	require.NoError(t, err)

	covered := map[string]bool{}
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			route, pathParams, err := router.FindRoute(ex.request())
			require.NoError(t, err)
			covered[route.Operation.OperationID] = true
			in := &openapi3filter.RequestValidationInput{
				Request: ex.request(), PathParams: pathParams, Route: route,
				// Filling defaults treats a JSON null as absent, yet a null
				// where the schema is not nullable is invalid (and rejected).
				Options: &openapi3filter.Options{SkipSettingDefaults: true},
			}
			reqErr := openapi3filter.ValidateRequest(ctx, in)
			rec := ex.serve(newTestServer())
			if rec.Code == http.StatusBadRequest {
				require.Error(t, reqErr, "the handler rejects a request the document allows")
			} else {
				require.NoError(t, reqErr, "the handler accepts a request the document forbids")
			}
			require.NoError(t, openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
				RequestValidationInput: in,
				Status:                 rec.Code,
				Header:                 rec.Header(),
				Body:                   io.NopCloser(rec.Body),
				Options:                &openapi3filter.Options{IncludeResponseStatus: true},
			}))
		})
	}

	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			require.True(t, covered[op.OperationID], "%s %s has no example", method, path)
			require.NotEmpty(t, op.Summary, op.OperationID)
			require.NotEmpty(t, op.Description, op.OperationID)
		}
	}
}

func TestLifecycle(t *testing.T) {
	h := newTestServer().Handler()
	do := func(method, path, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		ex := example{method: method, path: path, body: body}
		h.ServeHTTP(rec, ex.request())
		return rec
	}

	rec := do("POST", "/notes", `{"title":"Plan trip","tags":["travel"],"status":"published"}`)
	require.Equal(t, http.StatusCreated, rec.Code)
	require.Equal(t, "/notes/4", rec.Header().Get("Location"))

	rec = do("GET", "/notes?tag=travel&status=published", "")
	require.JSONEq(t, `{"total":1,"items":[{"id":4,"title":"Plan trip","body":"","tags":["travel"],"status":"published","author":"anonymous","createdAt":"2025-02-01T12:00:00Z","updatedAt":"2025-02-01T12:00:00Z"}]}`, rec.Body.String())

	require.Equal(t, http.StatusOK, do("PATCH", "/notes/4", `{"body":"Book flights."}`).Code)
	require.Equal(t, "Plan trip\n\nBook flights.\n", do("GET", "/notes/4/text", "").Body.String())
	require.Equal(t, http.StatusNoContent, do("DELETE", "/notes/4", "").Code)
	require.Equal(t, http.StatusNotFound, do("GET", "/notes/4", "").Code)
	require.Equal(t, http.StatusNotFound, do("DELETE", "/notes/4", "").Code)

	rec = do("GET", "/notes?limit=2", "")
	var list struct {
		Items []note `json:"items"`
		Total int    `json:"total"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &list))
	require.Equal(t, 3, list.Total)
	require.Len(t, list.Items, 2)
	require.Equal(t, []int64{1, 2}, []int64{list.Items[0].ID, list.Items[1].ID})
}

func TestFilesArePNG(t *testing.T) {
	s := newTestServer()
	rec := example{method: "GET", path: "/files"}.serve(s)
	var files []fileInfo
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &files))
	require.Len(t, files, 2)
	for _, f := range files {
		rec := example{method: "GET", path: "/files/" + f.Name + "/download"}.serve(s)
		require.Equal(t, strconv.Itoa(f.Size), rec.Header().Get("Content-Length"))
		require.Equal(t, f.Size, rec.Body.Len())
		_, err := png.Decode(bytes.NewReader(rec.Body.Bytes()))
		require.NoError(t, err, f.Name)
	}
}

func TestConcurrentUse(t *testing.T) {
	h := newTestServer().Handler()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				ex := example{method: "POST", path: "/notes", body: `{"title":"n` + strconv.Itoa(i*100+j) + `"}`}
				if j%2 == 1 {
					ex = example{method: "PATCH", path: "/notes/1", body: `{"tags":["t` + strconv.Itoa(j) + `"]}`}
				}
				h.ServeHTTP(httptest.NewRecorder(), ex.request())
				h.ServeHTTP(httptest.NewRecorder(), example{method: "GET", path: "/notes?limit=100"}.request())
			}
		})
	}
	wg.Wait()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, example{method: "GET", path: "/notes"}.request())
	require.Contains(t, rec.Body.String(), `"total":83}`)
}

func TestStart(t *testing.T) {
	baseURL, stop, err := Start(t.Context(), "127.0.0.1:0")
	require.NoError(t, err)
	resp, err := http.Get(baseURL + "/health")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "ok", string(body))

	require.NoError(t, stop(t.Context()))
	require.NoError(t, stop(t.Context()), "stop is idempotent")
	_, err = http.Get(baseURL + "/health")
	require.Error(t, err)
}

func TestStartBadAddress(t *testing.T) {
	_, _, err := Start(t.Context(), "127.0.0.1:-1")
	require.ErrorContains(t, err, "demo: listen")
}
