package call

import (
	"bytes"
	"context"
	"net/url"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

const fuzzBuildSpec = `
openapi: 3.0.3
info: {title: fuzz, version: "1"}
paths:
  /items/{id}/parts/{part}:
    post:
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: part, in: path, required: true, style: label, schema: {type: array, items: {type: string}}}
        - {name: q, in: query, schema: {type: string}}
        - {name: tags, in: query, schema: {type: array, items: {type: string}}}
        - {name: filter, in: query, style: deepObject, explode: true, schema: {type: object, additionalProperties: {type: string}}}
        - {name: X-Trace, in: header, schema: {type: string}}
        - {name: Authorization, in: header, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                id: {type: string}
                name: {type: string}
                count: {type: integer}
                meta: {type: object}
      responses: {"200": {description: ok}}
`

// FuzzBuildRequest: whatever JSON the model sends as a tool's arguments,
// building the request does not panic, and a request that is built stays
// under the operation's path: the template's literal segments in place,
// one segment per path parameter, no dot segment, nothing a server would
// resolve to another path; the host is the backend's and an Authorization
// argument is never sent.
func FuzzBuildRequest(f *testing.F) {
	for _, s := range []string{
		`{"id": "a", "part": ["b"]}`,
		`{"id": "../../admin", "part": ["x"], "q": "1", "X-Trace": "t"}`,
		`{"id": "..", "part": ["."]}`,
		`{"id": ".", "part": [""]}`,
		`{"id": "%2e%2e", "part": ["%2F", "..", "a/b"]}`,
		`{"id": "a/b?c#d", "part": ["x;y=z"], "tags": ["a", "b&c=d"], "filter": {"k": "v", "a[b]": "../"}}`,
		`{"id": "x", "part": ["y"], "Authorization": "Bearer stolen", "X-Trace": "t"}`,
		`{"id": "x", "part": ["y"], "X-Trace": "v\r\nInjected: 1"}`,
		`{"id": "x", "part": ["y"], "body_id": "b", "name": "n", "count": 3, "meta": {"deep": [1, {"x": null}]}}`,
		`{"id": 1e400, "part": [true, null, 1.5]}`,
		`{"id": {"a": "/"}, "part": {"k": ".."}}`,
		`{"id": ["..", ".."], "part": "..\u0000"}`,
		`{"id": "\u00e9\ud800", "part": ["\ufeff"]}`,
		`{"id": "x", "part": ["y"], "count": "3"}`,
		`{}`, `null`, `[]`, `"id"`, `{"id":`, `{"id": "a", "id": "../b", "part": ["c"]}`,
	} {
		f.Add([]byte(s))
	}
	doc := ctDoc(f, fuzzBuildSpec)
	caller := ctCaller(f, doc, Config{BaseURL: "http://backend.test/base"})
	p, err := caller.plan(ctTool(f, doc, "POST", "/items/{id}/parts/{part}").Binding)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, args []byte) {
		// As CallPooled does before decoding.
		if !utf8.Valid(args) {
			args = bytes.ToValidUTF8(args, []byte("\uFFFD"))
		}
		in, aerr := p.decodeArgs(args)
		if aerr != nil {
			return
		}
		req, publicURL, aerr := caller.buildRequest(context.Background(), p, in)
		if aerr != nil {
			return
		}
		require.Equal(t, "http", req.URL.Scheme)
		require.Equal(t, "backend.test", req.URL.Host)
		require.Equal(t, "backend.test", req.Host)
		require.Empty(t, req.Header.Values("Authorization"))
		uri := req.URL.RequestURI() // what goes on the request line
		require.NotContains(t, uri, "#")
		rawPath, _, _ := strings.Cut(uri, "?")
		segs := strings.Split(rawPath, "/")
		require.Len(t, segs, 6, "path %q", rawPath)
		require.Equal(t, []string{"", "base", "items", "parts"}, []string{segs[0], segs[1], segs[2], segs[4]}, "path %q", rawPath)
		for _, seg := range []string{segs[3], segs[5]} {
			require.NotEmpty(t, seg, "path %q", rawPath)
			require.NotEqual(t, ".", seg, "path %q", rawPath)
			require.NotEqual(t, "..", seg, "path %q", rawPath)
		}
		require.Equal(t, rawPath, path.Clean(rawPath), "a server that cleans the path changes nothing")
		// The server parses the same path back.
		parsed, err := url.ParseRequestURI(uri)
		require.NoError(t, err)
		require.Equal(t, rawPath, parsed.EscapedPath())
		require.True(t, strings.HasPrefix(publicURL, "http://backend.test/base/items/"), publicURL)
		for name, values := range req.Header {
			for _, v := range values {
				require.False(t, strings.ContainsAny(v, "\r\n\x00"), "header %s: %q", name, v)
			}
		}
	})
}
