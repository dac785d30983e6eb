package call

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/stretchr/testify/require"
)

const ctResponseSpec = `
openapi: 3.0.3
info: {title: responses, version: "1"}
paths:
  /things/{id}:
    get:
      operationId: getThing
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses:
        "200": {description: anything}
`

// ctReply answers with a status, a content type and a body.
func ctReply(status int, contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		} else {
			w.Header()["Content-Type"] = nil // no sniffing: send none
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

func ctStructured(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	if r.StructuredContent == nil {
		return ""
	}
	b, err := json.Marshal(r.StructuredContent)
	require.NoError(t, err)
	return string(b)
}

func TestCallResponseMapping(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x01")
	pdf := []byte("%PDF-1.7\n\x00\xff")
	doc := ctDoc(t, ctResponseSpec)
	type want struct {
		content    []mcp.Content // URIs are checked with the backend URL prefixed
		structured string
	}
	cases := []struct {
		name       string
		reply      http.HandlerFunc
		output     string // "", "object" or "wrapped"
		want       want
		wantURISfx []string
	}{
		{"json object", ctReply(200, "application/json", []byte(`{"a": 1, "big": 12345678901234567890}`)), "",
			want{[]mcp.Content{{Type: "text", Text: `{"a": 1, "big": 12345678901234567890}`}}, `{"a":1,"big":12345678901234567890}`}, nil},
		{"json array is wrapped", ctReply(200, "application/json; charset=utf-8", []byte(`[1,2]`)), "",
			want{[]mcp.Content{{Type: "text", Text: `[1,2]`}}, `{"result":[1,2]}`}, nil},
		{"json string is wrapped", ctReply(200, "application/json", []byte(` "hi" `)), "",
			want{[]mcp.Content{{Type: "text", Text: ` "hi" `}}, `{"result":"hi"}`}, nil},
		{"+json", ctReply(200, "application/hal+json", []byte(`{"_links":{}}`)), "",
			want{[]mcp.Content{{Type: "text", Text: `{"_links":{}}`}}, `{"_links":{}}`}, nil},
		{"no content type, JSON sniffed", ctReply(200, "", []byte(`{"x":true}`)), "",
			want{[]mcp.Content{{Type: "text", Text: `{"x":true}`}}, `{"x":true}`}, nil},
		{"invalid JSON without output schema is text", ctReply(200, "application/json", []byte(`{oops`)), "",
			want{[]mcp.Content{{Type: "text", Text: `{oops`}}, ""}, nil},
		{"output schema object", ctReply(200, "application/json", []byte(`{"a":1}`)), "object",
			want{[]mcp.Content{{Type: "text", Text: `{"a":1}`}}, `{"a":1}`}, nil},
		{"wrapped output schema wraps objects too", ctReply(200, "application/json", []byte(`{"a":1}`)), "wrapped",
			want{[]mcp.Content{{Type: "text", Text: `{"a":1}`}}, `{"result":{"a":1}}`}, nil},
		{"JSON labelled text/plain, output schema", ctReply(200, "text/plain; charset=utf-8", []byte(`{"a":1}`)), "object",
			want{[]mcp.Content{{Type: "text", Text: `{"a":1}`}}, `{"a":1}`}, nil},
		{"JSON labelled text/plain, no output schema", ctReply(200, "text/plain; charset=utf-8", []byte(`{"a":1}`)), "",
			want{[]mcp.Content{{Type: "text", Text: `{"a":1}`}}, ""}, nil},
		{"wrapped output schema", ctReply(200, "application/json", []byte(`[{"a":1}]`)), "wrapped",
			want{[]mcp.Content{{Type: "text", Text: `[{"a":1}]`}}, `{"result":[{"a":1}]}`}, nil},
		{"text", ctReply(200, "text/plain", []byte("line 1\nline 2")), "",
			want{[]mcp.Content{{Type: "text", Text: "line 1\nline 2"}}, ""}, nil},
		{"latin-1 text", ctReply(200, "text/html; charset=ISO-8859-1", []byte("caf\xe9")), "",
			want{[]mcp.Content{{Type: "text", Text: "café"}}, ""}, nil},
		{"invalid UTF-8 is replaced", ctReply(200, "text/plain", []byte("a\xffb")), "",
			want{[]mcp.Content{{Type: "text", Text: "a\uFFFDb"}}, ""}, nil},
		{"xml", ctReply(200, "application/xml", []byte("<a/>")), "",
			want{[]mcp.Content{{Type: "text", Text: "<a/>"}}, ""}, nil},
		{"image", ctReply(200, "image/png", png), "",
			want{[]mcp.Content{{Type: "image", Data: base64.StdEncoding.EncodeToString(png), MimeType: "image/png"}}, ""}, nil},
		{"audio", ctReply(200, "audio/mpeg", []byte("ID3")), "",
			want{[]mcp.Content{{Type: "audio", Data: base64.StdEncoding.EncodeToString([]byte("ID3")), MimeType: "audio/mpeg"}}, ""}, nil},
		{"binary is an embedded resource", ctReply(200, "application/pdf", pdf), "",
			want{[]mcp.Content{{Type: "resource", Resource: &mcp.ResourceContents{MimeType: "application/pdf", Blob: base64.StdEncoding.EncodeToString(pdf)}}}, ""},
			[]string{"/things/a%2Fb?q=x%20y"}},
		{"204", ctReply(204, "", nil), "", want{[]mcp.Content{{Type: "text", Text: "204 No Content"}}, ""}, nil},
		{"empty 200", ctReply(200, "application/json", nil), "", want{[]mcp.Content{{Type: "text", Text: "200 OK"}}, ""}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, c.reply)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			tool := ctTool(t, doc, "GET", "/things/{id}", func(b *toolgen.Binding) {
				b.HasOutputSchema = c.output != ""
				b.OutputIsWrapped = c.output == "wrapped"
			})
			res := ctCall(t, caller, tool, `{"id": "a/b", "q": "x y"}`)
			ctOK(t, res)
			wantContent := c.want.content
			for i, sfx := range c.wantURISfx {
				r := *wantContent[i].Resource
				r.URI = backend.URL + sfx
				wantContent[i].Resource = &r
			}
			require.Equal(t, wantContent, res.Content)
			require.Equal(t, c.want.structured, ctStructured(t, res))
			out, err := json.Marshal(res)
			require.NoError(t, err)
			require.True(t, json.Valid(out) && utf8.Valid(out))
		})
	}
}

func TestCallResponseMultipart(t *testing.T) {
	png := []byte("\x89PNG\x00")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	add := func(ct string, data []byte) {
		h := textproto.MIMEHeader{}
		if ct != "" {
			h.Set("Content-Type", ct)
		}
		w, err := mw.CreatePart(h)
		require.NoError(t, err)
		_, _ = w.Write(data)
	}
	add("application/json", []byte(`{"id":1}`))
	add("", []byte("plain part"))
	add("image/png", png)
	add("application/zip", []byte("PK\x03\x04"))
	require.NoError(t, mw.Close())

	doc := ctDoc(t, ctResponseSpec)
	backend := ctNewBackend(t, ctReply(200, "multipart/mixed; boundary="+mw.Boundary(), body.Bytes()))
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	res := ctCall(t, caller, ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1"}`)
	ctOK(t, res)
	require.Nil(t, res.StructuredContent)
	require.Equal(t, []mcp.Content{
		{Type: "text", Text: `{"id":1}`},
		{Type: "text", Text: "plain part"},
		{Type: "image", Data: base64.StdEncoding.EncodeToString(png), MimeType: "image/png"},
		{Type: "resource", Resource: &mcp.ResourceContents{
			URI: backend.URL + "/things/1#part-4", MimeType: "application/zip",
			Blob: base64.StdEncoding.EncodeToString([]byte("PK\x03\x04")),
		}},
	}, res.Content)

	t.Run("malformed", func(t *testing.T) {
		backend := ctNewBackend(t, ctReply(200, "multipart/mixed; boundary=xyz", []byte("--xyz\r\nbroken")))
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		res := ctCall(t, caller, ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1"}`)
		require.Equal(t, "The backend sent a malformed multipart/mixed response.", ctText(res))
	})
}

// TestCallOutputSchemaContract: when an outputSchema is advertised, a 2xx
// response that cannot give conforming structuredContent is an error result
// that says the call succeeded and quotes the response.
func TestCallOutputSchemaContract(t *testing.T) {
	doc := ctDoc(t, ctResponseSpec)
	cases := []struct {
		name  string
		reply http.HandlerFunc
		want  string
	}{
		{"array for an object schema", ctReply(200, "application/json", []byte(`[1,2]`)),
			"The backend call succeeded (200 OK), but its response does not fit this tool's output schema: the schema expects a JSON object but the response is an array. The response was:\n[1,2]"},
		// GitHub's description gives null as the example of its
		// empty-object responses, and Prism sends it.
		{"null for an object schema", ctReply(201, "application/json", []byte(`null`)),
			"The backend call succeeded (201 Created), but its response does not fit this tool's output schema: the schema expects a JSON object but the response is null. The response was:\nnull"},
		{"text", ctReply(200, "text/plain", []byte("fine")),
			"The backend call succeeded (200 OK), but its response does not fit this tool's output schema: the response is text/plain, not JSON. The response was:\nfine"},
		{"binary", ctReply(200, "image/png", []byte("\x89PNG")),
			"The backend call succeeded (200 OK), but its response does not fit this tool's output schema: the response is image/png, not JSON. The response was 4 bytes of image/png."},
		{"invalid JSON", ctReply(200, "application/json", []byte(`{"a":`)),
			"The backend call succeeded (200 OK), but its response does not fit this tool's output schema: the response is not valid JSON. The response was:\n{\"a\":"},
		{"empty", ctReply(204, "", nil),
			"The backend call succeeded (204 No Content), but its response does not fit this tool's output schema: the response has no body."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, c.reply)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			tool := ctTool(t, doc, "GET", "/things/{id}", func(b *toolgen.Binding) { b.HasOutputSchema = true })
			res := ctCall(t, caller, tool, `{"id": "1"}`)
			require.True(t, res.IsError)
			require.Nil(t, res.StructuredContent)
			require.Equal(t, c.want, ctText(res))
		})
	}
}

func TestCallErrorResponses(t *testing.T) {
	doc := ctDoc(t, ctResponseSpec)
	long := strings.Repeat("é", 3000) // 6000 bytes
	cases := []struct {
		name  string
		reply http.HandlerFunc
		want  string
	}{
		{"404 with JSON", ctReply(404, "application/json", []byte(`{"error":"no such thing"}`)),
			`backend returned HTTP 404 Not Found for GET /things/a%2Fb: {"error":"no such thing"}`},
		{"control characters stripped", ctReply(422, "text/plain", []byte("bad\x1b[31m thing\r\n\tline 1\u202e\x00")),
			"backend returned HTTP 422 Unprocessable Entity for GET /things/a%2Fb: bad[31m thing\n\tline 1"},
		{"5xx body not passed on", ctReply(500, "text/plain", []byte("boom")),
			"backend returned HTTP 500 Internal Server Error for GET /things/a%2Fb: the backend failed; its error details are not passed on"},
		{"binary body not quoted", ctReply(415, "application/octet-stream", []byte("\x00\x01")),
			"backend returned HTTP 415 Unsupported Media Type for GET /things/a%2Fb"},
		{"unknown status", ctReply(599, "", nil), "backend returned HTTP 599 for GET /things/a%2Fb: the backend failed; its error details are not passed on"},
		{"long body is capped", ctReply(400, "text/plain", []byte(long)),
			"backend returned HTTP 400 Bad Request for GET /things/a%2Fb: " + strings.Repeat("é", 1024) + " … (truncated)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, c.reply)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			res := ctCall(t, caller, ctTool(t, doc, "GET", "/things/{id}"), `{"id": "a/b", "q": "secret-ish"}`)
			require.True(t, res.IsError)
			require.Equal(t, c.want, ctText(res))
			require.NotContains(t, ctText(res), "127.0.0.1", "no backend address in messages")
		})
	}
}

func TestCallResponseSizeCap(t *testing.T) {
	doc := ctDoc(t, ctResponseSpec)
	const limit = 100
	cases := []struct {
		name    string
		size    int
		chunked bool
		wantErr bool
	}{
		{"at the cap", limit, false, false},
		{"over the cap", limit + 1, false, true},
		{"at the cap, chunked", limit, true, false},
		{"over the cap, chunked", 10 * limit, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := []byte(`"` + strings.Repeat("x", c.size-2) + `"`)
			backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if c.chunked {
					w.WriteHeader(200)
					for i := range body {
						_, _ = w.Write(body[i : i+1])
						w.(http.Flusher).Flush()
					}
					return
				}
				w.Header().Set("Content-Length", fmt.Sprint(len(body)))
				_, _ = w.Write(body)
			})
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL, MaxResponseBytes: limit})
			res := ctCall(t, caller, ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1"}`)
			if !c.wantErr {
				ctOK(t, res)
				require.Equal(t, string(body), ctText(res))
				return
			}
			require.True(t, res.IsError)
			require.True(t, strings.HasPrefix(ctText(res), "the backend response exceeded 100 bytes"), ctText(res))
		})
	}
}

func TestCallReadCapped(t *testing.T) {
	got, err := readCapped(strings.NewReader("abc"), 3, -1)
	require.NoError(t, err)
	require.Equal(t, "abc", string(got))
	_, err = readCapped(strings.NewReader("abcd"), 3, 4)
	require.ErrorIs(t, err, errTooLarge)
	_, err = readCapped(io.MultiReader(strings.NewReader("ab"), iotest{}), 3, -1)
	require.Error(t, err)

	// Bodies larger than the first buffer, with and without a length hint,
	// read one byte at a time or in large pieces.
	big := strings.Repeat("0123456789", 300)
	for _, hint := range []int64{-1, 10, int64(len(big)), 5000} {
		for _, r := range []io.Reader{strings.NewReader(big), iotestOneByte{strings.NewReader(big)}} {
			got, err := readCapped(r, 3000, hint)
			require.NoError(t, err, "hint %d", hint)
			require.Equal(t, big, string(got))
		}
		_, err := readCapped(strings.NewReader(big+"x"), 3000, hint)
		require.ErrorIs(t, err, errTooLarge, "hint %d", hint)
	}
	// With the length known, the body is read into one pooled buffer with
	// room for it and the EOF read.
	got, err = readCapped(strings.NewReader(big), 1<<20, int64(len(big)))
	require.NoError(t, err)
	require.Equal(t, bodyClassBytes, cap(got))
	// Past the largest class, a buffer of the body's own size.
	huge := strings.Repeat("x", 2<<20)
	got, err = readCapped(strings.NewReader(huge), 4<<20, int64(len(huge)))
	require.NoError(t, err)
	require.Equal(t, len(huge)+1, cap(got))
}

// A JSON result is its body's buffer: released, the buffer serves a later
// body; unreleased, it stays the result's own; and a copy taken at the
// boundary (what an audit record or a batch keeps) shares nothing with it.
// Run with -race: a copy that still viewed the buffer would race with the
// later calls' reads into it.
func TestPooledResultRelease(t *testing.T) {
	doc := ctDoc(t, `
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /n/{n}:
    get:
      parameters: [{name: n, in: path, required: true, schema: {type: integer}}]
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
`)
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"n":"` + strings.Repeat(strings.TrimPrefix(r.URL.Path, "/n/"), 3000) + `"}`))
	})
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	tool := ctTool(t, doc, "GET", "/n/{n}")
	want := `{"n":"` + strings.Repeat("1", 3000) + `"}`
	call := func(n int) *mcp.PooledResult {
		return caller.CallPooled(context.Background(), tool, json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), nil)
	}

	kept := call(1) // never released: stays its own
	first := call(1)
	held := first.Copy()
	first.Release()
	require.Empty(t, first.Copy().Content, "a released result is empty, never another call's bytes")

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if ctText(held) != want || string(held.StructuredContent) != want {
				t.Error("a copy changed after its result was released")
				return
			}
		}
	})
	for i := range 300 {
		n := 2 + i%7
		res := call(n)
		got := res.Copy()
		require.Equal(t, `{"n":"`+strings.Repeat(strconv.Itoa(n), 3000)+`"}`, ctText(got))
		require.Equal(t, ctText(got), string(got.StructuredContent))
		res.Release()
	}
	close(stop)
	wg.Wait()
	require.Equal(t, want, ctText(held))
	require.Equal(t, want, ctText(kept.Copy()), "an unreleased result is not reused")
	require.Equal(t, want, string(kept.Copy().StructuredContent))

	var nilResult *mcp.PooledResult
	nilResult.Release()
	mcp.Pooled(mcp.ErrorResult("x")).Release()
}

// iotestOneByte reads one byte per call.
type iotestOneByte struct{ r io.Reader }

func (o iotestOneByte) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

// iotest is a reader that fails.
type iotest struct{}

func (iotest) Read([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestSanitizeExcerpt(t *testing.T) {
	require.Equal(t, "ok", sanitizeExcerpt([]byte("  ok \r\n"), 100))
	// A cut in the middle of a rune drops the partial rune.
	require.Equal(t, "a … (truncated)", sanitizeExcerpt([]byte("aé"), 2))
	require.Equal(t, "a\uFFFDb", sanitizeExcerpt([]byte("a\xffb"), 100))
	require.Equal(t, "ab", sanitizeExcerpt([]byte("a\u0085\u2066b\x7f"), 100))
}

// A backend that echoes its request (headers in an error page or a 200)
// never hands the configured credentials to the client, and backend
// errors keep their stack traces, paths and internal addresses to
// themselves: 5xx bodies are not passed on by default, and an excerpt
// that is passed on loses the lines that leak.
func TestNothingSecretComesBack(t *testing.T) {
	doc := ctDoc(t, ctResponseSpec)
	const token, key, static = "tok-3f9a8c7e1d", "key-77aa55bb33", "static-value-9x"
	echo := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = fmt.Fprintf(w, `{"seen":%q,"also":%q}`, r.Header.Get("Authorization")+" "+r.Header.Get("X-Static"), r.Header.Get("X-Api-Key"))
		}
	}
	cfg := func(url, mode string) Config {
		return Config{BaseURL: url, BearerToken: token, BearerAlways: true, Headers: map[string]string{"X-Static": static, "X-Api-Key": key, "X-Short": "v2"}, ErrorBody: mode}
	}
	for _, status := range []int{200, 401, 403} {
		backend := ctNewBackend(t, echo(status))
		caller := ctCaller(t, doc, cfg(backend.URL, ErrorBodyAll))
		res := ctCall(t, caller, ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1"}`)
		text := ctText(res) + string(res.StructuredContent)
		for _, secret := range []string{token, key, static} {
			require.NotContains(t, text, secret, "HTTP %d", status)
		}
		require.Contains(t, text, "[redacted]", "HTTP %d: %s", status, text)
	}

	traces := map[string]string{
		"go":     "panic: runtime error: invalid memory address\n\ngoroutine 1 [running]:\nmain.handler(0x0)\n\t/home/build/app/main.go:42 +0x1d\ncreated by net/http.(*Server).Serve",
		"java":   "java.lang.NullPointerException: boom\n\tat com.example.Orders.get(Orders.java:17)\n\tat com.example.Api.handle(Api.java:88)\n\t... 42 more\nCaused by: java.sql.SQLException: password=hunter2 at db.internal:5432",
		"python": "Traceback (most recent call last):\n  File \"/srv/app/views.py\", line 10, in get\n    raise ValueError(\"x\")\nValueError: connect to 10.1.2.3:6379 failed",
	}
	for name, trace := range traces {
		backend := ctNewBackend(t, ctReply(500, "text/plain", []byte("Something went wrong\n"+trace)))
		res := ctCall(t, ctCaller(t, doc, cfg(backend.URL, "")), ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1"}`)
		require.Equal(t, "backend returned HTTP 500 Internal Server Error for GET /things/1: the backend failed; its error details are not passed on", ctText(res), name)
		res = ctCall(t, ctCaller(t, doc, cfg(backend.URL, ErrorBodyAll)), ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1"}`)
		text := ctText(res)
		require.Contains(t, text, "Something went wrong", name)
		for _, leak := range []string{".go:42", "goroutine", "Orders.java", "hunter2", "db.internal", "/srv/app", "10.1.2.3", "Traceback"} {
			require.NotContains(t, text, leak, "%s: %s", name, text)
		}
	}
	backend := ctNewBackend(t, ctReply(404, "application/json", []byte(`{"error":"no such thing"}`)))
	res := ctCall(t, ctCaller(t, doc, cfg(backend.URL, ErrorBodyNone)), ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1"}`)
	require.Equal(t, "backend returned HTTP 404 Not Found for GET /things/1", ctText(res))

	// The forms a backend may echo a value in: URL-escaped, JSON-escaped,
	// the credential of a static "Bearer X" header alone; and a secret
	// across the excerpt's cut.
	const odd = "k+y/9=z&q<1"
	forms := map[string]string{
		"url":   url.QueryEscape(odd),
		"json":  `k+y\/9=z\u0026q\u003c1`,
		"token": "only-the-token-part",
	}
	for name, echoed := range forms {
		body := `{"x":"` + echoed + `"}`
		backend := ctNewBackend(t, ctReply(400, "application/json", []byte(body)))
		c := Config{BaseURL: backend.URL, Headers: map[string]string{"X-Odd": odd, "Authorization": "Bearer only-the-token-part"}}
		res := ctCall(t, ctCaller(t, doc, c), ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1"}`)
		require.NotContains(t, ctText(res), echoed, name)
		require.Contains(t, ctText(res), "[redacted]", name)
	}
	padded := strings.Repeat("p", errorExcerptBytes-5) + token + " tail"
	backend = ctNewBackend(t, ctReply(400, "text/plain", []byte(padded)))
	res = ctCall(t, ctCaller(t, doc, cfg(backend.URL, "")), ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1"}`)
	require.NotContains(t, ctText(res), token[:5], "no prefix of a secret across the cut")
}

// A request line or header set over the bounds is a tool error naming the
// argument that makes it so, and nothing is sent.
func TestRequestBounds(t *testing.T) {
	doc := ctDoc(t, ctResponseSpec)
	called := false
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) { called = true })
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL, MaxRequestURLBytes: 1024})
	res := ctCall(t, caller, ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1", "q": "`+strings.Repeat("a", 2000)+`"}`)
	require.True(t, res.IsError)
	require.Contains(t, ctText(res), `invalid argument "q": makes the request URL`)
	require.Contains(t, ctText(res), "over the 1024")
	require.False(t, called, "nothing is sent")
	res = ctCall(t, caller, ctTool(t, doc, "GET", "/things/{id}"), `{"id": "`+strings.Repeat("b", 2000)+`", "q": "x"}`)
	require.Contains(t, ctText(res), `invalid argument "id": makes the request URL`)
	require.False(t, called)
	res = ctCall(t, caller, ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1", "q": "x"}`)
	require.False(t, res.IsError, ctText(res))
	require.True(t, called)
}

// Argument headers over the 16 KiB bound are an isError naming the
// biggest argument, and nothing is sent.
func TestRequestHeaderBound(t *testing.T) {
	doc := ctDoc(t, `openapi: 3.0.3
info: {title: h, version: "1"}
paths:
  /h:
    get:
      operationId: withHeaders
      parameters:
        - {name: X-Small, in: header, schema: {type: string}}
        - {name: X-Big, in: header, schema: {type: string}}
      responses:
        '200': {description: ok}
`)
	called := false
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) { called = true })
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	tool := ctTool(t, doc, "GET", "/h")
	res := ctCall(t, caller, tool, `{"X-Small": "`+strings.Repeat("s", 9<<10)+`", "X-Big": "`+strings.Repeat("b", 10<<10)+`"}`)
	require.True(t, res.IsError)
	require.Contains(t, ctText(res), `invalid argument "X-Big": makes the request headers`)
	require.Contains(t, ctText(res), "over the 16384")
	require.False(t, called, "nothing is sent")
	res = ctCall(t, caller, tool, `{"X-Small": "s", "X-Big": "`+strings.Repeat("b", 10<<10)+`"}`)
	require.False(t, res.IsError, ctText(res))
	require.True(t, called)
}
