package call

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestCallJSONBody(t *testing.T) {
	doc := ctDocFile(t, "bodies.yaml")
	cases := []struct {
		name    string
		method  string
		path    string
		args    string
		wantCT  string
		wantURI string
		want    string // the body the backend receives, byte for byte
	}{
		{"flattened", "POST", "/pets", `{"name": "Rex", "age": 3, "owner": {"email": "a@b.c"}}`,
			"application/json", "/pets", `{"age":3,"name":"Rex","owner":{"email": "a@b.c"}}`},
		{"numbers stay exact", "POST", "/pets", `{"name": "Rex", "age": 12345678901234567}`,
			"application/json", "/pets", `{"age":12345678901234567,"name":"Rex"}`},
		{"explicit null is sent", "POST", "/pets", `{"name": "Rex", "nickname": null}`,
			"application/json", "/pets", `{"name":"Rex","nickname":null}`},
		{"+json media type", "PATCH", "/pets/{id}", `{"id": 7, "nickname": null}`,
			"application/merge-patch+json", "/pets/7", `{"nickname":null}`},
		{"whole body argument", "POST", "/batch", `{"body": [1, 2, 3]}`,
			"application/json", "/batch", `[1, 2, 3]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			ctOK(t, ctCall(t, caller, ctTool(t, doc, c.method, c.path), c.args))
			got := backend.last(t)
			require.Equal(t, c.method, got.Method)
			require.Equal(t, c.wantURI, got.RequestURI)
			require.Equal(t, c.wantCT, got.Header.Get("Content-Type"))
			require.Equal(t, c.want, string(got.Body))
		})
	}
	t.Run("optional body left out", func(t *testing.T) {
		backend := ctNewBackend(t, nil)
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		ctOK(t, ctCall(t, caller, ctTool(t, doc, "PATCH", "/pets/{id}"), `{"id": 7}`))
		got := backend.last(t)
		require.Empty(t, got.Body)
		require.Empty(t, got.Header.Get("Content-Type"))
	})
}

func TestCallFormBody(t *testing.T) {
	doc := ctDocFile(t, "bodies.yaml")
	backend := ctNewBackend(t, nil)
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	res := ctCall(t, caller, ctTool(t, doc, "POST", "/form"), `{
		"name": "a b&c=d",
		"count": 2,
		"tags": ["x", "y"],
		"csv": ["p", "q,r"],
		"meta": {"color": "red", "size": 3},
		"filter": {"q": "term"},
		"path": "a/b:c"
	}`)
	ctOK(t, res)
	got := backend.last(t)
	require.Equal(t, "application/x-www-form-urlencoded", got.Header.Get("Content-Type"))
	require.Equal(t,
		"count=2"+
			"&csv=p,q%2Cr"+
			"&filter=%7B%22q%22%3A%22term%22%7D"+
			"&meta%5Bcolor%5D=red&meta%5Bsize%5D=3"+
			"&name=a%20b%26c%3Dd"+
			"&path=a/b:c"+
			"&tags=x&tags=y",
		string(got.Body))
	form, err := url.ParseQuery(string(got.Body))
	require.NoError(t, err)
	require.Equal(t, "a b&c=d", form.Get("name"))
	require.Equal(t, `{"q":"term"}`, form.Get("filter"))

	t.Run("validated as JSON", func(t *testing.T) {
		backend := ctNewBackend(t, nil)
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		res := ctCall(t, caller, ctTool(t, doc, "POST", "/form"), `{"name": "x", "meta": {"size": "big"}}`)
		require.True(t, res.IsError)
		require.Equal(t, `invalid argument "meta": value must be an integer (at /size)`, ctText(res))
		res = ctCall(t, caller, ctTool(t, doc, "POST", "/form"), `{"count": 1}`)
		require.True(t, res.IsError)
		require.Equal(t, `invalid argument "name": a value is required`, ctText(res))
		require.Empty(t, backend.requests())
	})
	t.Run("validated as JSON, OpenAPI 3.1", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join("testdata", "bodies.yaml"))
		require.NoError(t, err)
		doc := ctDoc(t, strings.Replace(string(data), "openapi: 3.0.3", "openapi: 3.1.0", 1))
		backend := ctNewBackend(t, nil)
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		ctOK(t, ctCall(t, caller, ctTool(t, doc, "POST", "/form"), `{"name": "x", "count": 2, "meta": {"size": 3}}`))
		res := ctCall(t, caller, ctTool(t, doc, "POST", "/form"), `{"name": "x", "count": 2.5}`)
		require.Equal(t, `invalid argument "count": got number, want integer`, ctText(res))
		res = ctCall(t, caller, ctTool(t, doc, "POST", "/form"), `{"count": 1}`)
		require.Equal(t, `invalid argument "name": a value is required`, ctText(res))
		require.Len(t, backend.requests(), 1)
	})
}

func TestCallMultipartBody(t *testing.T) {
	doc := ctDocFile(t, "bodies.yaml")
	png := []byte("\x89PNG\r\n\x1a\n\x00binary\xff")
	extra := []byte{0, 1, 2, 3, 254, 255}
	backend := ctNewBackend(t, nil)
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	args, _ := json.Marshal(map[string]any{
		"description": "a picture",
		"count":       2,
		"file":        base64.StdEncoding.EncodeToString(png),
		"extras":      []string{"data:application/octet-stream;base64," + base64.StdEncoding.EncodeToString(extra), base64.RawURLEncoding.EncodeToString(extra)},
		"meta":        map[string]any{"author": "ann"},
		"labels":      []string{"one", "two"},
	})
	ctOK(t, ctCall(t, caller, ctTool(t, doc, "POST", "/upload"), string(args)))
	got := backend.last(t)

	mt, params, err := mime.ParseMediaType(got.Header.Get("Content-Type"))
	require.NoError(t, err)
	require.Equal(t, "multipart/form-data", mt)
	type part struct {
		name, filename, ct string
		data               []byte
	}
	var parts []part
	mr := multipart.NewReader(bytes.NewReader(got.Body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(p)
		require.NoError(t, err)
		parts = append(parts, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), data})
	}
	require.Equal(t, []part{
		{"count", "", "", []byte("2")},
		{"description", "", "", []byte("a picture")},
		{"extras", "extras", "application/octet-stream", extra},
		{"extras", "extras", "application/octet-stream", extra},
		{"file", "file", "image/png", png},
		{"labels", "", "", []byte("one")},
		{"labels", "", "", []byte("two")},
		{"meta", "", "application/json", []byte(`{"author":"ann"}`)},
	}, parts)

	t.Run("bad base64", func(t *testing.T) {
		backend := ctNewBackend(t, nil)
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		res := ctCall(t, caller, ctTool(t, doc, "POST", "/upload"), `{"file": "not base64!"}`)
		require.True(t, res.IsError)
		require.Equal(t, `invalid argument "file": must be base64-encoded binary data`, ctText(res))
		res = ctCall(t, caller, ctTool(t, doc, "POST", "/upload"), `{"description": "no file"}`)
		require.True(t, res.IsError)
		require.Equal(t, `invalid argument "file": a value is required`, ctText(res))
		require.Empty(t, backend.requests())
	})
}

func TestCallTextAndBinaryBodies(t *testing.T) {
	doc := ctDocFile(t, "bodies.yaml")
	blob := []byte{0, 0xff, 0x10, 'a'}
	cases := []struct {
		name, method, path, args string
		wantCT                   string
		want                     []byte
	}{
		{"text/plain", "POST", "/note", `{"body": "hello"}`, "text/plain; charset=utf-8", []byte("hello")},
		{"octet-stream", "PUT", "/blob", `{"body": "` + base64.StdEncoding.EncodeToString(blob) + `"}`, "application/octet-stream", blob},
		{"xml", "POST", "/xml", `{"body": "<a>1</a>"}`, "application/xml", []byte("<a>1</a>")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			ctOK(t, ctCall(t, caller, ctTool(t, doc, c.method, c.path), c.args))
			got := backend.last(t)
			require.Equal(t, c.wantCT, got.Header.Get("Content-Type"))
			require.Equal(t, c.want, got.Body)
		})
	}
	errCases := []struct{ name, method, path, args, want string }{
		{"text too long", "POST", "/note", `{"body": "this note is far too long"}`, `invalid argument "body": maximum string length is 20`},
		{"text missing", "POST", "/note", `{}`, `invalid argument "body": a value is required: it is the request body`},
		{"text not a string", "POST", "/note", `{"body": {"a": 1}}`, `invalid argument "body": must be a string: the request body is text/plain`},
		{"blob not base64", "PUT", "/blob", `{"body": "%%%"}`, `invalid argument "body": must be base64-encoded binary data`},
		{"blob not a string", "PUT", "/blob", `{"body": 5}`, `invalid argument "body": must be a base64-encoded string: the request body is application/octet-stream`},
	}
	for _, c := range errCases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			res := ctCall(t, caller, ctTool(t, doc, c.method, c.path), c.args)
			require.True(t, res.IsError)
			require.Equal(t, c.want, ctText(res))
			require.Empty(t, backend.requests())
		})
	}
}

// Invalid UTF-8 in an argument is repaired the same way wherever the
// argument goes: in a JSON body as in the path.
func TestInvalidUTF8ArgumentsAreRepairedEverywhere(t *testing.T) {
	doc := ctDocFile(t, "bodies.yaml")
	backend := ctNewBackend(t, nil)
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	ctOK(t, ctCall(t, caller, ctTool(t, doc, "PATCH", "/pets/{id}"), "{\"id\": 7, \"nickname\": \"N\xfe\"}"))
	got := backend.last(t)
	require.Equal(t, "{\"nickname\":\"N\uFFFD\"}", string(got.Body))
	require.True(t, utf8.Valid(got.Body))
}
