package call

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// Helpers for the Fetch tests start with "ft".

const ftSpec = `
openapi: 3.0.3
info: {title: fetch, version: "1"}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-API-Key}
    queryKey: {type: apiKey, in: query, name: api_key}
    bearer: {type: http, scheme: bearer}
    oidc: {type: openIdConnect, openIdConnectUrl: "https://auth.test/.well-known/openid-configuration"}
paths:
  /items/{id}:
    get:
      operationId: getItem
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {type: object}}}
  /report:
    get:
      operationId: getReport
      parameters:
        - {name: q, in: query, schema: {type: string}}
      responses:
        "200": {description: ok, content: {text/plain: {schema: {type: string}}}}
  /logo:
    get:
      operationId: getLogo
      responses:
        "200": {description: ok, content: {image/png: {schema: {type: string, format: binary}}}}
  /items:
    post:
      operationId: createItem
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {name: {type: string}}}
      responses: {"201": {description: created}}
  /keyed:
    get:
      operationId: keyed
      security: [{queryKey: []}]
      responses: {"200": {description: ok}}
  /both:
    get:
      operationId: both
      security: [{key: [], bearer: []}]
      responses: {"200": {description: ok}}
  /mine:
    get:
      operationId: mine
      security: [{oidc: []}]
      responses: {"200": {description: ok}}
  /slow:
    get:
      operationId: slow
      responses: {"200": {description: ok}}
`

func ftFetch(t *testing.T, c *Caller, tool *toolgen.Tool, args string, cond Conditional) (*Fetched, *FetchError) {
	t.Helper()
	return c.Fetch(context.Background(), tool, json.RawMessage(args), cond)
}

// ftOK fails unless the fetch succeeded: ftOK(t)(caller.Fetch(...)).
func ftOK(t *testing.T) func(*Fetched, *FetchError) *Fetched {
	return func(got *Fetched, ferr *FetchError) *Fetched {
		t.Helper()
		require.Nil(t, ferr, "unexpected fetch error")
		require.NotNil(t, got)
		return got
	}
}

// The body comes back byte for byte with its media type, whatever it is;
// the request is the tool's (path, Accept).
func TestFetchBodies(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
	cases := []struct {
		name, path, args string
		reply            http.HandlerFunc
		wantURI          string
		wantAccept       string
		want             Fetched
	}{
		{"JSON", "/items/{id}", `{"id": 7}`, ctReply(200, "application/json; charset=utf-8", []byte(`{"id":7, "name":"a"}`)),
			"/items/7", "application/json, */*;q=0.1",
			Fetched{Status: 200, MIMEType: "application/json", Body: []byte(`{"id":7, "name":"a"}`)}},
		{"text with parameters", "/report", `{"q": "a b"}`, ctReply(200, "Text/Plain; charset=ISO-8859-1", []byte("caf\xe9\n")),
			"/report?q=a%20b", "text/plain, */*;q=0.1",
			Fetched{Status: 200, MIMEType: "text/plain", Body: []byte("caf\xe9\n")}},
		{"binary", "/logo", `{}`, ctReply(200, "image/png", png),
			"/logo", "image/png, */*;q=0.1",
			Fetched{Status: 200, MIMEType: "image/png", Body: png}},
		{"no Content-Type", "/slow", ``, ctReply(200, "", []byte("plain")),
			"/slow", defaultAccept,
			Fetched{Status: 200, Body: []byte("plain")}},
		{"empty 204", "/slow", `null`, ctReply(204, "", nil),
			"/slow", defaultAccept,
			Fetched{Status: 204, Body: []byte{}}},
	}
	doc := ctDoc(t, ftSpec)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, c.reply)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			got := ftOK(t)(ftFetch(t, caller, ctTool(t, doc, "GET", c.path), c.args, Conditional{}))
			require.Equal(t, c.want, *got)
			req := backend.last(t)
			require.Equal(t, c.wantURI, req.RequestURI)
			require.Equal(t, c.wantAccept, req.Header.Get("Accept"))
		})
	}
}

// A fetched body is the caller's to keep: it is not a pooled buffer that a
// later call reuses.
func TestFetchBodyIsNotShared(t *testing.T) {
	doc := ctDoc(t, ftSpec)
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(bytes.Repeat([]byte(r.URL.Query().Get("q")), 1000))
	})
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	tool := ctTool(t, doc, "GET", "/report")
	first := ftOK(t)(ftFetch(t, caller, tool, `{"q": "a"}`, Conditional{}))
	for range 10 {
		ftOK(t)(ftFetch(t, caller, tool, `{"q": "b"}`, Conditional{}))
		ctOK(t, ctCall(t, caller, tool, `{"q": "c"}`))
	}
	require.Equal(t, bytes.Repeat([]byte("a"), 1000), first.Body)
}

// ftConditionalBackend serves version "v1" of a document, honouring
// If-None-Match and If-Modified-Since; repeat says whether a 304 repeats
// the validators.
func ftConditionalBackend(t *testing.T, repeat bool) *ctBackend {
	const etag, modified = `"v1"`, "Tue, 01 Dec 2026 10:00:00 GMT"
	return ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if repeat || r.Header.Get("If-None-Match") == "" && r.Header.Get("If-Modified-Since") == "" {
			w.Header().Set("ETag", etag)
			w.Header().Set("Last-Modified", modified)
		}
		if r.Header.Get("If-None-Match") == etag || r.Header.Get("If-None-Match") == "" && r.Header.Get("If-Modified-Since") == modified {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"version":1}`))
	})
}

func TestFetchConditional(t *testing.T) {
	doc := ctDoc(t, ftSpec)
	tool := ctTool(t, doc, "GET", "/items/{id}")
	cases := []struct {
		name   string
		repeat bool
		cond   func(first *Fetched) Conditional
		// sent are the If-None-Match and If-Modified-Since headers of the
		// second request.
		sent [2]string
	}{
		{"ETag", true, func(f *Fetched) Conditional { return Conditional{ETag: f.ETag} }, [2]string{`"v1"`, ""}},
		{"Last-Modified", true, func(f *Fetched) Conditional { return Conditional{LastModified: f.LastModified} },
			[2]string{"", "Tue, 01 Dec 2026 10:00:00 GMT"}},
		{"both", true, func(f *Fetched) Conditional { return Conditional{ETag: f.ETag, LastModified: f.LastModified} },
			[2]string{`"v1"`, "Tue, 01 Dec 2026 10:00:00 GMT"}},
		{"a 304 without validators keeps the request's", false, func(f *Fetched) Conditional { return Conditional{ETag: f.ETag, LastModified: f.LastModified} },
			[2]string{`"v1"`, "Tue, 01 Dec 2026 10:00:00 GMT"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ftConditionalBackend(t, c.repeat)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			first := ftOK(t)(ftFetch(t, caller, tool, `{"id": 1}`, Conditional{}))
			require.Equal(t, Fetched{Status: 200, MIMEType: "application/json", ETag: `"v1"`,
				LastModified: "Tue, 01 Dec 2026 10:00:00 GMT", Body: []byte(`{"version":1}`)}, *first)

			second := ftOK(t)(ftFetch(t, caller, tool, `{"id": 1}`, c.cond(first)))
			require.Equal(t, Fetched{Status: 304, NotModified: true, ETag: `"v1"`, LastModified: "Tue, 01 Dec 2026 10:00:00 GMT"}, *second)

			reqs := backend.requests()
			require.Len(t, reqs, 2)
			require.NotContains(t, reqs[0].Header, "If-None-Match", "an unconditional fetch sends no validators")
			require.NotContains(t, reqs[0].Header, "If-Modified-Since")
			require.Equal(t, c.sent, [2]string{reqs[1].Header.Get("If-None-Match"), reqs[1].Header.Get("If-Modified-Since")})
		})
	}

	t.Run("changed", func(t *testing.T) {
		backend := ftConditionalBackend(t, true)
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		got := ftOK(t)(ftFetch(t, caller, tool, `{"id": 1}`, Conditional{ETag: `"v0"`}))
		require.False(t, got.NotModified)
		require.Equal(t, `{"version":1}`, string(got.Body))
	})
	t.Run("a validator with a line break is not sent", func(t *testing.T) {
		backend := ftConditionalBackend(t, true)
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		got := ftOK(t)(ftFetch(t, caller, tool, `{"id": 1}`, Conditional{ETag: "\"v1\"\r\nX-Evil: 1"}))
		require.False(t, got.NotModified)
		require.NotContains(t, backend.last(t).Header, "If-None-Match")
		require.NotContains(t, backend.last(t).Header, "X-Evil")
	})
}

// A non-2xx answer is a FetchError with the status and what
// Config.ErrorBody lets the body say.
func TestFetchStatusErrors(t *testing.T) {
	doc := ctDoc(t, ftSpec)
	other := ctNewBackend(t, nil)
	leaky := []byte("panic: nil map\ngoroutine 7 [running]:\nmain.go:12\ndial tcp 10.0.3.7:5432: connection refused")
	cases := []struct {
		name      string
		errorBody string
		reply     http.HandlerFunc
		want      FetchError
	}{
		{"404 with an excerpt", "", ctReply(404, "application/json", []byte(`{"error":"no item 7"}`)),
			FetchError{Message: `the backend answered 404 Not Found: {"error":"no item 7"}`, Status: 404, NotFound: true}},
		{"410", "", ctReply(410, "text/plain", nil),
			FetchError{Message: "the backend answered 410 Gone", Status: 410, NotFound: true}},
		{"404 without bodies", ErrorBodyNone, ctReply(404, "application/json", []byte(`{"error":"no item 7"}`)),
			FetchError{Message: "the backend answered 404 Not Found", Status: 404, NotFound: true}},
		{"500: no details", "", ctReply(500, "text/plain", leaky),
			FetchError{Message: "the backend answered 500 Internal Server Error: the backend failed; its error details are not passed on", Status: 500}},
		{"500 with all bodies: leaky lines dropped", ErrorBodyAll, ctReply(500, "text/plain", append([]byte("database down\n"), leaky...)),
			FetchError{Message: "the backend answered 500 Internal Server Error: database down", Status: 500}},
		{"binary error body", "", ctReply(400, "image/png", []byte("\x89PNG")),
			FetchError{Message: "the backend answered 400 Bad Request", Status: 400}},
		{"304 to an unconditional request", "", ctReply(304, "", nil),
			FetchError{Message: "the backend answered 304 Not Modified", Status: 304}},
		{"redirect to another host", "", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
		}, FetchError{Message: "the backend answered 302 Found with a redirect to another host; it was not followed", Status: 302}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, c.reply)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL, ErrorBody: c.errorBody, BearerToken: "tok-123456", BearerAlways: true})
			got, ferr := ftFetch(t, caller, ctTool(t, doc, "GET", "/items/{id}"), `{"id": 7}`, Conditional{})
			require.Nil(t, got)
			require.NotNil(t, ferr)
			require.Equal(t, c.want, *ferr)
			require.Equal(t, c.want.Message, ferr.Error())
		})
	}
	require.Empty(t, other.requests(), "the redirect was not followed")
}

func TestFetchTimeouts(t *testing.T) {
	doc := ctDoc(t, ftSpec)
	tool := ctTool(t, doc, "GET", "/slow")
	for _, headers := range []bool{false, true} {
		t.Run("headers sent: "+strconv.FormatBool(headers), func(t *testing.T) {
			backend, aborted := ctHangingBackend(t, headers)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL, Timeout: 50 * time.Millisecond})
			got, ferr := ftFetch(t, caller, tool, `{}`, Conditional{})
			require.Nil(t, got)
			status := 0
			if headers {
				status = 200
			}
			require.Equal(t, FetchError{Message: "backend timed out after 50ms", Status: status, Timeout: true}, *ferr)
			<-aborted
		})
	}
	t.Run("the caller's deadline", func(t *testing.T) {
		backend, aborted := ctHangingBackend(t, false)
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL, Timeout: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, ferr := caller.Fetch(ctx, tool, nil, Conditional{})
		require.Equal(t, FetchError{Message: "the call ran out of time before the backend answered", Timeout: true}, *ferr)
		<-aborted
	})
	t.Run("cancelled", func(t *testing.T) {
		started := make(chan struct{})
		backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
			close(started)
			<-r.Context().Done()
		})
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan *FetchError)
		go func() {
			_, ferr := caller.Fetch(ctx, tool, nil, Conditional{})
			done <- ferr
		}()
		<-started
		cancel()
		require.Equal(t, FetchError{Message: "the call was cancelled"}, *<-done)
	})
}

// Argument problems are refused with the tool's own words, and nothing is
// sent.
func TestFetchInvalidArguments(t *testing.T) {
	doc := ctDoc(t, ftSpec)
	cases := []struct{ name, path, args, want string }{
		{"path parameter of the wrong type", "/items/{id}", `{"id": "seven"}`, `invalid argument "id": `},
		{"missing path parameter", "/items/{id}", `{}`, `invalid argument "id": a value is required`},
		{"unknown argument", "/items/{id}", `{"id": 1, "ID": 2}`, `invalid arguments: unknown argument "ID"; this tool accepts: id`},
		{"not an object", "/report", `[1]`, `invalid arguments: arguments must be a JSON object, got an array`},
		{"URL too long", "/report", `{"q": "` + strings.Repeat("x", 9000) + `"}`, `invalid argument "q": makes the request URL`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			tool := ctTool(t, doc, "GET", c.path)
			got, ferr := ftFetch(t, caller, tool, c.args, Conditional{})
			require.Nil(t, got)
			require.NotNil(t, ferr)
			require.True(t, strings.HasPrefix(ferr.Message, c.want), ferr.Message)
			require.Equal(t, FetchError{Message: ferr.Message}, *ferr)
			res := ctCall(t, caller, tool, c.args)
			require.True(t, res.IsError)
			require.Equal(t, ctText(res), ferr.Message, "the tool's message")
			require.Empty(t, backend.requests())
		})
	}
}

// The configured credentials reach the backend; none comes back in a
// message, nor in a body that echoes the request.
func TestFetchCredentials(t *testing.T) {
	doc := ctDoc(t, ftSpec)
	const key, bearer = "key-0123456789", "bearer-0123456789"
	echo := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(status)
			_, _ = w.Write([]byte("saw " + r.Header.Get("X-API-Key") + " and " + r.Header.Get("Authorization") + " and " + r.URL.RawQuery))
		}
	}
	cfg := Config{APIKeys: map[string]string{"key": key, "queryKey": key}, BearerToken: bearer}
	for _, status := range []int{200, 401, 403} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			backend := ctNewBackend(t, echo(status))
			cfg.BaseURL = backend.URL
			caller := ctCaller(t, doc, cfg)
			got, ferr := ftFetch(t, caller, ctTool(t, doc, "GET", "/both"), `{}`, Conditional{})
			req := backend.last(t)
			require.Equal(t, key, req.Header.Get("X-API-Key"))
			require.Equal(t, "Bearer "+bearer, req.Header.Get("Authorization"))
			text := ""
			if status == 200 {
				text = string(ftOK(t)(got, ferr).Body)
			} else {
				require.Nil(t, got)
				require.True(t, strings.HasPrefix(ferr.Message, "the backend answered "+statusText(status)+": saw "), ferr.Message)
				text = ferr.Message
			}
			require.Contains(t, text, "saw [redacted] and Bearer [redacted]")
			require.NotContains(t, text, key)
			require.NotContains(t, text, bearer)
		})
	}
	t.Run("query key", func(t *testing.T) {
		backend := ctNewBackend(t, echo(404))
		cfg.BaseURL = backend.URL
		caller := ctCaller(t, doc, cfg)
		_, ferr := ftFetch(t, caller, ctTool(t, doc, "GET", "/keyed"), `{}`, Conditional{})
		require.Equal(t, "api_key="+key, backend.last(t).RawQuery)
		// The line is redacted, and then dropped for setting an api_key.
		require.Equal(t, FetchError{Message: "the backend answered 404 Not Found", Status: 404, NotFound: true}, *ferr)
	})
}

// Backend tokens are fetched as for a tool call: token exchange of the
// caller's token, which itself never reaches the backend.
func TestFetchTokenExchange(t *testing.T) {
	doc := ctDoc(t, ftSpec)
	tool := ctTool(t, doc, "GET", "/mine")
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"auth":"` + r.Header.Get("Authorization") + `"}`))
	})
	issuer := tkNewEndpoint(t, "exchanged-backend-token", nil)
	caller, _ := tkExchangeCaller(t, doc, tkExchangeConfig(backend, issuer))

	ctx := WithSubjectToken(context.Background(), "alice", tkAliceToken)
	got := ftOK(t)(caller.Fetch(ctx, tool, nil, Conditional{}))
	require.Equal(t, `{"auth":"Bearer [redacted]"}`, string(got.Body), "the fetched token is not handed out")
	require.Equal(t, []string{"Bearer exchanged-backend-token-1"}, tkAuth(backend))
	require.Equal(t, tkAliceToken, issuer.requests()[0].form.Get("subject_token"))
	for _, r := range backend.requests() {
		for name, values := range r.Header {
			require.NotContains(t, strings.Join(values, " "), tkAliceToken, name)
		}
	}

	_, ferr := caller.Fetch(context.Background(), tool, nil, Conditional{})
	require.Equal(t, FetchError{Message: "this tool needs an authenticated caller: the gateway calls the backend with the caller's own identity, and this call has none"}, *ferr)
	require.Len(t, backend.requests(), 1, "an anonymous fetch sends nothing")

	failing := tkNewEndpoint(t, "xch", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"invalid_grant","error_description":"token of alice@10.0.0.7 expired"}`, http.StatusBadRequest)
	})
	caller, _ = tkExchangeCaller(t, doc, tkExchangeConfig(backend, failing))
	_, ferr = caller.Fetch(ctx, tool, nil, Conditional{})
	require.Equal(t, FetchError{Message: "the gateway could not exchange the caller's token for a backend token at its authorization server: HTTP 400 Bad Request (invalid_grant)"}, *ferr)
	require.Len(t, backend.requests(), 1)
}

// A body over Config.MaxResponseBytes is an error, whether its length was
// announced or not; one at the bound is whole.
func TestFetchBodyBound(t *testing.T) {
	doc := ctDoc(t, ftSpec)
	tool := ctTool(t, doc, "GET", "/slow")
	const limit = 64
	cases := []struct {
		name    string
		size    int
		chunked bool
		tooBig  bool
	}{
		{"at the bound", limit, false, false},
		{"at the bound, chunked", limit, true, false},
		{"over, announced", limit + 1, false, true},
		{"over, chunked", limit + 1, true, true},
		{"far over, chunked", 100 * limit, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := bytes.Repeat([]byte("z"), c.size)
			backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream")
				if c.chunked {
					w.(http.Flusher).Flush()
				} else {
					w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				}
				_, _ = w.Write(body)
			})
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL, MaxResponseBytes: limit})
			got, ferr := ftFetch(t, caller, tool, `{}`, Conditional{})
			if !c.tooBig {
				require.Equal(t, body, ftOK(t)(got, ferr).Body)
				return
			}
			require.Nil(t, got)
			require.Equal(t, FetchError{Message: caller.tooLargeMessage(), Status: 200}, *ferr)
		})
	}
}

func TestFetchRefusesOtherOperations(t *testing.T) {
	doc := ctDoc(t, ftSpec)
	backend := ctNewBackend(t, nil)
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	got, ferr := ftFetch(t, caller, ctTool(t, doc, "POST", "/items"), `{"name": "x"}`, Conditional{})
	require.Nil(t, got)
	require.Equal(t, FetchError{Message: `the operation of "createItem" is not a GET: only GET operations can be read`}, *ferr)

	_, ferr = ftFetch(t, caller, &toolgen.Tool{Name: "loose"}, `{}`, Conditional{})
	require.Equal(t, FetchError{Message: "this tool is not bound to a backend operation"}, *ferr)
	require.Empty(t, backend.requests())
}

func TestIsTextMIME(t *testing.T) {
	cases := []struct {
		mime string
		text bool
	}{
		{"text/plain", true},
		{"text/html; charset=utf-8", true},
		{"Text/CSV", true},
		{"application/json", true},
		{"application/problem+json", true},
		{"application/ld+json", true},
		{"application/vnd.api+json; charset=utf-8", true},
		{"application/xml", true},
		{"application/atom+xml", true},
		{"image/svg+xml", true},
		{"application/yaml", true},
		{"application/x-yaml", true},
		{"application/javascript", true},
		{"application/x-www-form-urlencoded", true},
		{"application/graphql", true},
		{"application/x-ndjson", true},
		{"image/png", false},
		{"application/octet-stream", false},
		{"application/pdf", false},
		{"audio/mpeg", false},
		{"application/zip", false},
		{"multipart/form-data; boundary=x", false},
		{"", false},
	}
	for _, c := range cases {
		require.Equal(t, c.text, IsTextMIME(c.mime), c.mime)
	}
}
