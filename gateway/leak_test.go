package gateway

// Nothing internal reaches a client. Every failure a client can cause or
// meet is answered in the gateway's own words: no Go error text, no stack
// trace, no address of Redis or of the backend, no credential the gateway
// holds for the backend and no token the client sent. This file drives
// each error path it can reach over HTTP and checks every answer, body
// and headers, against one table.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/tools"
	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// needle is a string no answer may carry, and what it would give away.
type needle struct{ name, value string }

// forbiddenEverywhere is what no answer may carry on any path: Go's own
// error text, stack traces and source paths, and the prefixes of the
// stores' errors (seeing one means an err.Error() got out). Matching is
// case-insensitive.
var forbiddenEverywhere = []needle{
	{"a Go runtime error", "runtime error"},
	{"a goroutine dump", "goroutine "},
	{"a panic", "panic"},
	{"a Go source position", ".go:"},
	{"a build path", "/work/"},
	{"a home path", "/root/"},
	{"the Go root", "/usr/local/go"},
	{"a sessions error", "sessions: "},
	{"a quota error", "quota: "},
	{"Redis", "redis"},
}

// The backend credentials the leak gateways hold. The query and cookie
// keys have characters that their encodings change, so that what goes on
// the wire to the backend differs from the value configured.
const (
	leakBearer    = "sekret-bearer-token-123"
	leakHeaderKey = "sekret-api-key-456"
	leakQueryKey  = "sekret query/key+789&x"
	leakCookieKey = "sekret,cookie/key-321"
	leakStatic    = "sekret-static-header-0xdeadbeef"
)

// leakChecker holds the needles of one test: the table and the test's own
// addresses, credentials and tokens.
type leakChecker struct {
	needles []needle // values lower-cased
	probes  []string // what was checked, in order
}

func newLeakChecker(extra ...needle) *leakChecker {
	c := &leakChecker{}
	for _, n := range append(slices.Clone(forbiddenEverywhere), extra...) {
		if n.value != "" {
			c.needles = append(c.needles, needle{n.name, strings.ToLower(n.value)})
		}
	}
	return c
}

// secretForms are the forms a credential could come back in: as it is,
// escaped for JSON, and each way a URL or a cookie may carry it, among
// them those the caller sends it in (every byte but RFC 3986 unreserved
// ones escaped, a space as %20, in a query; RFC 6265 cookie-octets kept in
// a cookie).
func secretForms(name, v string) []needle {
	js, _ := json.Marshal(v)
	out := []needle{{name, v}}
	for _, f := range []string{
		string(js[1 : len(js)-1]), url.QueryEscape(v), url.PathEscape(v),
		strings.ReplaceAll(url.QueryEscape(v), "+", "%20"), cookieEscape(v),
	} {
		if f != v && !slices.Contains(out, needle{name + " (escaped)", f}) {
			out = append(out, needle{name + " (escaped)", f})
		}
	}
	return out
}

// cookieEscape percent-encodes what a cookie value cannot hold, and "%"
// and ",".
func cookieEscape(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if c := v[i]; c > 0x20 && c < 0x7f && !strings.ContainsRune(`",;\%`, rune(c)) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// find returns the first needle in b that skip does not excuse, and where.
func (c *leakChecker) find(b []byte, skip func(needle) bool) (needle, int, bool) {
	lower := strings.ToLower(string(b))
	for _, n := range c.needles {
		if skip != nil && skip(n) {
			continue
		}
		if i := strings.Index(lower, n.value); i >= 0 {
			return n, i, true
		}
	}
	return needle{}, 0, false
}

// assertClean fails the test, naming the path, when r's body or any of its
// headers carries a needle.
func (c *leakChecker) assertClean(t testing.TB, what string, r reply) {
	t.Helper()
	c.probes = append(c.probes, what)
	c.assertCleanBytes(t, what+": body", r.body)
	for k, vs := range r.header {
		for _, v := range vs {
			c.assertCleanBytes(t, what+": header "+k, []byte(k+": "+v))
		}
	}
}

// assertCleanBytes checks b as it is and, when it is JSON or SSE, every
// string in it as a client decodes it (an escape such as \u0073 hides a
// needle from a byte search, not from a client). Each needle found is
// reported once.
func (c *leakChecker) assertCleanBytes(t testing.TB, where string, b []byte) {
	t.Helper()
	reported := map[needle]bool{}
	report := func(how string, text []byte) {
		t.Helper()
		for _, n := range c.needles {
			if i := strings.Index(strings.ToLower(string(text)), n.value); i >= 0 && !reported[n] {
				reported[n] = true
				t.Errorf("LEAK in %s%s: %s (%q): …%s…", where, how, n.name, n.value, excerptAround(text, i, len(n.value)))
			}
		}
	}
	report("", b)
	for _, s := range decodedStrings(b) {
		report(", once decoded", []byte(s))
	}
}

// decodedStrings are the member names and strings of b as JSON, or of
// each of its SSE data lines; none when it is neither.
func decodedStrings(b []byte) []string {
	docs := [][]byte{b}
	if !json.Valid(b) {
		docs = sseData(b)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				out = append(out, k)
				walk(e)
			}
		}
	}
	for _, d := range docs {
		var v any
		if json.Unmarshal(d, &v) == nil {
			walk(v)
		}
	}
	return out
}

func excerptAround(b []byte, i, n int) []byte {
	return b[max(0, i-120):min(len(b), i+n+120)]
}

// leakDoc has a tool for each way a backend call can go wrong, all behind
// credentials the gateway holds; addItem needs an OAuth scope.
const leakDoc = `openapi: 3.0.3
info: {title: leaky, version: "1"}
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
    key: {type: apiKey, in: header, name: X-Api-Key}
    qkey: {type: apiKey, in: query, name: api_key}
    ckey: {type: apiKey, in: cookie, name: session_key}
    oauth:
      type: oauth2
      flows:
        clientCredentials:
          tokenUrl: https://as.example/token
          scopes: {"items:write": write}
security: [{bearer: [], key: [], qkey: [], ckey: []}]
paths:
  /echo:
    get: {operationId: echoRequest, summary: echoes the request headers, responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}}
  /boom:
    get: {operationId: boom, summary: fails with a stack trace, responses: {"200": {description: ok}}}
  /denied:
    get: {operationId: denied, summary: refuses and echoes the request, responses: {"200": {description: ok}}}
  /moved:
    get: {operationId: moved, summary: redirects to an internal host, responses: {"200": {description: ok}}}
  /slow:
    get: {operationId: slow, summary: never answers in time, responses: {"200": {description: ok}}}
  /limited:
    get: {operationId: limited, summary: rate limited, responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}}
  /metered:
    get: {operationId: metered, summary: under a quota, responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}}
  /items:
    post:
      operationId: addItem
      summary: adds an item
      security: [{oauth: ["items:write"]}]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string, maxLength: 10}
                count: {type: integer, minimum: 0}
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
  /items/{id}:
    get:
      operationId: getItem
      summary: one item
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
`

// leakBackend answers leakDoc's operations the worst way each can: stack
// traces, echoed credentials, its own address.
func leakBackend() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"headers": r.Header, "query": r.URL.RawQuery})
	})
	mux.HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Backend-Host", r.Host)
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "panic: runtime error: invalid memory address or nil pointer dereference\n"+
			"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a2b1c]\n\n"+
			"goroutine 42 [running]:\nmain.(*api).boom(0xc000120000)\n\t/work/backend/api.go:97 +0x1d\n"+
			"net/http.HandlerFunc.ServeHTTP(...)\n\t/usr/local/go/src/net/http/server.go:2294\n"+
			"request to http://%s%s with Authorization: %s, X-Api-Key: %s, X-Internal-Secret: %s\n"+
			"dial tcp %s: redis: connection refused\n",
			r.Host, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Internal-Secret"), r.Host)
	})
	mux.HandleFunc("GET /denied", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("WWW-Authenticate", `Bearer realm="http://`+r.Host+`"`)
		w.WriteHeader(http.StatusUnauthorized)
		b, _ := json.MarshalIndent(map[string]any{
			"error":         "unauthorized",
			"authorization": r.Header.Get("Authorization"),
			"headers":       r.Header,
			"query":         r.URL.RawQuery,
			"host":          r.Host,
		}, "", "  ")
		_, _ = w.Write(b)
	})
	mux.HandleFunc("GET /moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.1.2.3:8443/internal?token="+url.QueryEscape(r.Header.Get("Authorization")), http.StatusFound)
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	ok := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}
	mux.HandleFunc("GET /limited", ok)
	mux.HandleFunc("GET /metered", ok)
	mux.HandleFunc("POST /items", ok)
	mux.HandleFunc("GET /items/{id}", ok)
	return mux
}

// leakCaller is the caller configuration of the leak gateways: every kind
// of backend credential, a short timeout for slow.
func leakCaller(baseURL string) call.Config {
	return call.Config{
		BaseURL:      baseURL,
		BearerToken:  leakBearer,
		APIKeys:      map[string]string{"key": leakHeaderKey, "qkey": leakQueryKey, "ckey": leakCookieKey},
		Headers:      map[string]string{"X-Internal-Secret": leakStatic},
		ToolTimeouts: map[string]time.Duration{"slow": 300 * time.Millisecond},
	}
}

// leakNeedles are the needles of a gateway in front of backendURL.
func leakNeedles(backendURL string) []needle {
	u, _ := url.Parse(backendURL)
	out := []needle{{"the backend's URL", backendURL}, {"the backend's address", u.Host}}
	for _, s := range []struct{ name, v string }{
		{"the backend bearer token", leakBearer}, {"the backend header API key", leakHeaderKey},
		{"the backend query API key", leakQueryKey}, {"the backend cookie API key", leakCookieKey},
		{"a static backend header", leakStatic},
	} {
		out = append(out, secretForms(s.name, s.v)...)
	}
	return out
}

// newLeakServer is newGatewayWith for any testing.TB (a fuzz target's
// too) and a caller configured with callCfg; it serves no HTTP itself.
func newLeakServer(tb testing.TB, cfg Config, deps Deps, doc []byte, callCfg call.Config) *Server {
	tb.Helper()
	ctx := context.Background()
	d, err := openapi.LoadData(ctx, doc, "test/openapi.yaml", openapi.LoadOptions{})
	require.NoError(tb, err)
	set, err := toolgen.Generate(d, toolgen.Options{})
	require.NoError(tb, err)
	caller, err := call.NewCaller(d, callCfg)
	require.NoError(tb, err)
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = "127.0.0.1:0"
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := New(cfg, deps)
	require.NoError(tb, err)
	srv.SetCatalog(Catalog{Doc: d, Tools: set, Caller: caller})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = srv.Run(runCtx); close(done) }()
	tb.Cleanup(func() { stop(); <-done })
	require.Eventually(tb, srv.isListening, 10*time.Second, 5*time.Millisecond)
	return srv
}

func newLeakGateway(t *testing.T, cfg Config, deps Deps, callCfg call.Config) *testGateway {
	t.Helper()
	srv := newLeakServer(t, cfg, deps, []byte(leakDoc), callCfg)
	hs := httptest.NewServer(srv.Handler(nil))
	t.Cleanup(hs.Close)
	return &testGateway{srv: srv, url: hs.URL + srv.cfg.MountPath, hs: hs}
}

// hit is one HTTP exchange with any endpoint of a gateway.
type hit struct {
	method  string            // default POST
	path    string            // default the MCP endpoint; may carry a query
	body    string            //
	headers map[string]string // over the defaults; "" removes one
	chunked bool              // send the body without a Content-Length
	stream  time.Duration     // an answer that may be a stream is read this long
}

// sendHit makes the exchange: POSTs get JSON Content-Type and Accept, and
// every request carries tok unless headers say otherwise.
func sendHit(t *testing.T, g *testGateway, tok string, h hit) reply {
	t.Helper()
	m := h.method
	if m == "" {
		m = http.MethodPost
	}
	path := h.path
	if path == "" {
		path = g.srv.cfg.MountPath
	}
	var body io.Reader = strings.NewReader(h.body)
	if h.chunked {
		body = io.MultiReader(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, m, g.hs.URL+path, body)
	require.NoError(t, err)
	if m == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range h.headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if v, ok := h.headers["Host"]; ok {
		req.Host = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "%s %s", m, path)
	defer resp.Body.Close()
	if h.stream > 0 {
		timer := time.AfterFunc(h.stream, cancel)
		defer timer.Stop()
	}
	b, err := io.ReadAll(resp.Body)
	if h.stream == 0 {
		require.NoError(t, err, "%s %s", m, path)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// probe is one error path: what is sent, the status it must get (so that
// the path is known to be reached; 0 when it depends on timing) and, when
// not 0, the JSON-RPC code.
type probe struct {
	what   string
	hit    hit
	status int
	code   int
}

// runProbes sends each probe as tok and checks its answer.
func (c *leakChecker) runProbes(t *testing.T, g *testGateway, tok string, probes ...probe) {
	t.Helper()
	for _, p := range probes {
		r := sendHit(t, g, tok, p.hit)
		c.assertClean(t, p.what, r)
		if p.status == 0 {
			continue
		}
		if !assert.Equal(t, p.status, r.status, "%s: %s", p.what, r.body) {
			continue
		}
		if p.code != 0 {
			var m struct {
				Error *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			data := r.body
			if evs := sseData(r.body); strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") && len(evs) > 0 {
				data = evs[len(evs)-1]
			}
			if assert.NoError(t, json.Unmarshal(data, &m), "%s: %s", p.what, r.body) && assert.NotNil(t, m.Error, "%s: %s", p.what, r.body) {
				assert.Equal(t, p.code, m.Error.Code, "%s: %s", p.what, r.body)
			}
		}
	}
}

// checkedStream is a 2024-11-05 event stream whose every event is checked.
type checkedStream struct {
	c        *sseClient
	endpoint string // path and query of the messages endpoint
}

func openCheckedStream(t *testing.T, c *leakChecker, g *testGateway, tok string) *checkedStream {
	t.Helper()
	sc, req := openSSE(t, g.hs.URL+g.srv.cfg.LegacySSEPath, map[string]string{"Authorization": "Bearer " + tok})
	c.assertClean(t, "2024-11-05: stream headers", reply{status: sc.resp.StatusCode, header: sc.resp.Header})
	ev := sc.next(t)
	c.assertCleanBytes(t, "2024-11-05: endpoint event", []byte(ev.id+"\n"+ev.name+"\n"+ev.data))
	require.Equal(t, "endpoint", ev.name)
	ep, err := req.URL.Parse(ev.data)
	require.NoError(t, err)
	return &checkedStream{c: sc, endpoint: ep.RequestURI()}
}

func (s *checkedStream) sessionID() string {
	_, sid, _ := strings.Cut(s.endpoint, "sessionId=")
	return sid
}

// await checks every event up to the response with the given id, which it
// returns.
func (s *checkedStream) await(t *testing.T, c *leakChecker, what string, id int) map[string]any {
	t.Helper()
	for {
		ev := s.c.next(t)
		c.assertCleanBytes(t, "2024-11-05 stream: "+what, []byte(ev.id+"\n"+ev.name+"\n"+ev.data))
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(ev.data), &m), ev.data)
		if got, ok := m["id"].(float64); ok && int(got) == id {
			return m
		}
	}
}

// rawExchange writes a request's head and the first bytes of its body on
// a raw connection and reads the whole answer: for a body that never
// arrives.
func rawExchange(t *testing.T, g *testGateway, head, firstBytes string) reply {
	t.Helper()
	conn, err := net.Dial("tcp", g.hs.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte(head + firstBytes))
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

func initBody(version string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"leak","version":"1"}}}`
}

func toolCall(id int, name, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
}

// modernBody is a 2026-07-28 request; params is added after the _meta.
func modernBody(id int, method, params string) string {
	p := "{" + modernMeta
	if params != "" {
		p += "," + params
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p+"}")
}

// modernHeaders are the mirrored headers of a 2026-07-28 request.
func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

func sessionHeaders(sid, version string) map[string]string {
	return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": version}
}

// withHeaders returns h with the extra headers (h is not changed).
func withHeaders(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// The test's callers. The token names the subject and its scopes
// (tokenAuth); each is a needle.
const (
	tokAlice   = "leaktok-alice-7f3a:items:write"
	tokRita    = "leaktok-rita-91c2"
	tokMallory = "leaktok-mallory-55e1:items:write"
	tokHog     = "leaktok-hog-0b7d"
	basicCreds = "bGVha3VzZXI6c2VrcmV0LWJhc2ljLXB3ZA==" // leakuser:sekret-basic-pwd
)

// Two replicas share a real Redis for sessions, bus, limits, quotas and
// session counts, authenticate with tokenAuth and call a backend through
// leakCaller's credentials. Every error path reachable over HTTP is
// driven, with the backend up, then down, then with Redis stalled, then
// with Redis gone; every answer is checked for the needles.
func TestNoInternalDetailReachesClients(t *testing.T) {
	rsrv := redistest.Standalone(t)
	// As the command configures it (failing fast), with the client's own
	// read and write timeouts short too: they end the calls the gateway
	// leaves without a deadline (releasing a session's count) within a
	// second or two rather than go-redis's 3s per attempt.
	rdb := redis.NewClient(&redis.Options{Addr: rsrv.Addr, ContextTimeoutEnabled: true, MaxRetries: 1, DialTimeout: time.Second,
		ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	// The server is thrown away whole at the end (and left stopped), so
	// its keys need no SCAN+DEL; the prefix keeps the stores apart.
	prefix := redistest.Prefix(t)
	backend := httptest.NewServer(leakBackend())
	t.Cleanup(backend.Close)

	cfg := Config{
		StoreTimeout:         300 * time.Millisecond,
		ReadTimeout:          500 * time.Millisecond,
		MaxBodyBytes:         64 << 10,
		MaxBatch:             5,
		MaxSessionsPerClient: 4,
		Policy: Policy{
			Authorize:  true,
			ToolLimits: []ToolLimit{{Tools: []string{"limited"}, Limit: quota.Limit{Rate: 0.001, Burst: 1}}},
			Quotas:     []QuotaRule{{Name: "tiny", Tools: []string{"metered"}, Limit: 1, Window: time.Hour, Per: tools.PerPrincipal}},
		},
	}
	deps := func() Deps {
		return Deps{
			Store:    sessions.NewRedis(rdb, prefix, sessions.Limits{TTL: time.Hour}),
			Bus:      pubsub.NewRedis(rdb, prefix),
			Gate:     quota.NewRedisGate(rdb, prefix+"q:"),
			Sessions: quota.NewRedisSessionCounter(rdb, prefix+"sc:"),
			Auth:     tokenAuth{},
		}
	}
	a := newLeakGateway(t, cfg, deps(), leakCaller(backend.URL))
	b := newLeakGateway(t, cfg, deps(), leakCaller(backend.URL)) // touches no session before Redis stalls

	needles := append(leakNeedles(backend.URL), needle{"the Redis address", rsrv.Addr}, needle{"the Redis URL", rsrv.URL},
		needle{"HTTP Basic credentials", basicCreds})
	for _, tok := range []string{tokAlice, tokRita, tokMallory, tokHog} {
		needles = append(needles, needle{"a client token", tok}, needle{"a client Authorization header", "Bearer " + tok})
	}
	c := newLeakChecker(needles...)
	defer func() { t.Logf("%d answers checked:\n  %s", len(c.probes), strings.Join(c.probes, "\n  ")) }()

	open := func(g *testGateway, tok, version string) string {
		t.Helper()
		r := sendHit(t, g, tok, hit{body: initBody(version)})
		c.assertClean(t, "initialize "+version, r)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		sid := r.header.Get(headerSessionID)
		require.NotEmpty(t, sid)
		r = sendHit(t, g, tok, hit{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers: sessionHeaders(sid, version)})
		require.Equal(t, http.StatusAccepted, r.status)
		return sid
	}
	s25 := open(a, tokAlice, "2025-11-25")
	s0325 := open(a, tokAlice, "2025-03-26")
	sRita := open(a, tokRita, "2025-11-25")
	in25 := sessionHeaders(s25, "2025-11-25")
	in0325 := sessionHeaders(s0325, "2025-03-26")
	unknownSID := strings.Repeat("A", 43)
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 80<<10) + `"}}`

	r := sendHit(t, a, tokAlice, hit{body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, headers: in25})
	c.assertClean(t, "tools/list", r)
	require.ElementsMatch(t, []string{"echoRequest", "boom", "denied", "moved", "slow", "limited", "metered", "addItem", "getItem"}, toolNames(t, r))

	// The transport: envelope, headers, bounds, in the session era and
	// without a session.
	for _, era := range []struct {
		name    string
		headers map[string]string
	}{{"session", in25}, {"no session", nil}} {
		h := era.headers
		c.runProbes(t, a, tokAlice,
			probe{era.name + ": malformed JSON", hit{body: `{"jsonrpc":"2.0","id":1,`, headers: h}, 400, -32700},
			probe{era.name + ": not JSON at all", hit{body: "\x00\xff garbage", headers: h}, 400, -32700},
			probe{era.name + ": JSON-RPC 1.0", hit{body: `{"jsonrpc":"1.0","id":1,"method":"ping"}`, headers: h}, 400, -32600},
			probe{era.name + ": jsonrpc of the wrong type", hit{body: `{"jsonrpc":2,"id":1,"method":"ping"}`, headers: h}, 400, -32600},
			probe{era.name + ": method of the wrong type", hit{body: `{"jsonrpc":"2.0","id":1,"method":["ping"]}`, headers: h}, 400, -32600},
			probe{era.name + ": an object id", hit{body: `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, headers: h}, 400, -32600},
			probe{era.name + ": a huge id", hit{body: `{"jsonrpc":"2.0","id":"` + strings.Repeat("9", 1000) + `","method":"ping"}`, headers: h}, 400, -32600},
			probe{era.name + ": an invalid UTF-8 id", hit{body: "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"ping\"}", headers: h}, 400, -32600},
			probe{era.name + ": no method", hit{body: `{"jsonrpc":"2.0","id":1}`, headers: h}, 400, -32600},
			probe{era.name + ": method and result", hit{body: `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, headers: h}, 400, -32600},
			probe{era.name + ": params a string", hit{body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, headers: h}, 400, -32600},
			probe{era.name + ": a JSON string", hit{body: `"ping"`, headers: h}, 400, -32600},
			probe{era.name + ": wrong Content-Type", hit{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: withHeaders(h, "Content-Type", "text/plain")}, 415, -32600},
			probe{era.name + ": a malformed Content-Type", hit{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: withHeaders(h, "Content-Type", "application/json; charset=\"")}, 415, -32600},
			probe{era.name + ": wrong Accept", hit{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: withHeaders(h, "Accept", "text/html")}, 406, -32600},
			probe{era.name + ": huge body", hit{body: big, headers: h}, 413, -32600},
			probe{era.name + ": huge body, chunked", hit{body: big, headers: h, chunked: true}, 413, -32600},
			probe{era.name + ": PUT", hit{method: http.MethodPut, body: `{}`, headers: h}, 405, -32600},
			probe{era.name + ": a Host not allowed", hit{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: withHeaders(h, "Host", "evil.example")}, 403, -32600},
			probe{era.name + ": an Origin not allowed", hit{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: withHeaders(h, "Origin", "https://evil.example")}, 403, -32600},
		)
	}
	for _, p := range []probe{
		{"no session: a request", hit{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`}, 400, -32600},
		{"no session: initialize as a notification", hit{body: `{"jsonrpc":"2.0","method":"initialize","params":{}}`}, 400, -32600},
		{"initialize: params of the wrong type", hit{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5,"capabilities":[]}}`}, 200, -32602},
		{"initialize: params an array", hit{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":[1,2]}`}, 200, -32602},
		{"initialize: no params", hit{body: `{"jsonrpc":"2.0","id":1,"method":"initialize"}`}, 200, -32602},
		{"unknown session", hit{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, headers: sessionHeaders(unknownSID, "2025-11-25")}, 404, -32001},
		{"a session id not minted here", hit{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, headers: sessionHeaders("../../etc/passwd", "2025-11-25")}, 404, -32001},
		{"session: unsupported MCP-Protocol-Version", hit{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, headers: sessionHeaders(s25, "1999-01-01")}, 400, -32600},
		{"session: unknown method", hit{body: `{"jsonrpc":"2.0","id":3,"method":"nope/nothing"}`, headers: in25}, 200, -32601},
		{"session: a stateless-only method", hit{body: `{"jsonrpc":"2.0","id":3,"method":"server/discover"}`, headers: in25}, 200, -32601},
		{"session: tools/list with a bad cursor", hit{body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"!!not-a-cursor"}}`, headers: in25}, 200, -32602},
		{"session: tools/call without a name", hit{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}`, headers: in25}, 200, -32602},
		{"session: tools/call with a numeric name", hit{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}`, headers: in25}, 200, -32602},
		{"session: tools/call with array arguments", hit{body: toolCall(3, "getItem", `[1]`), headers: in25}, 200, -32602},
		{"session: unknown tool", hit{body: toolCall(3, "noSuchTool", `{}`), headers: in25}, 200, -32602},
		{"session: invalid tool arguments (type)", hit{body: toolCall(3, "getItem", `{"id":"abc"}`), headers: in25}, 200, 0},
		{"session: invalid tool arguments (missing)", hit{body: toolCall(3, "addItem", `{"count":-1}`), headers: in25}, 200, 0},
		{"session: invalid tool arguments (body)", hit{body: toolCall(3, "addItem", `{"body":{"name":"far too long a name","count":"x"}}`), headers: in25}, 200, 0},
		{"session: backend echoes the request", hit{body: toolCall(3, "echoRequest", `{}`), headers: in25}, 200, 0},
		{"session: backend 500 with a stack trace", hit{body: toolCall(3, "boom", `{}`), headers: in25}, 200, 0},
		{"session: backend 401 echoing credentials", hit{body: toolCall(3, "denied", `{}`), headers: in25}, 200, 0},
		{"session: backend redirects inside", hit{body: toolCall(3, "moved", `{}`), headers: in25}, 200, 0},
		{"session: backend times out", hit{body: toolCall(3, "slow", `{}`), headers: in25}, 200, 0},
		{"session: backend error, with debug log and progress", hit{body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"boom","arguments":{},"_meta":{"progressToken":"p1"}}}`, headers: in25}, 200, 0},
		{"session: resources/read of an unknown URI", hit{body: `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}`, headers: in25}, 200, 0},
		{"session: resources/read without a URI", hit{body: `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{}}`, headers: in25}, 200, -32602},
		{"session: prompts/get of an unknown prompt", hit{body: `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"nope"}}`, headers: in25}, 200, 0},
		{"session: completion/complete with bad params", hit{body: `{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":7}}`, headers: in25}, 200, 0},
		{"session: logging/setLevel to an unknown level", hit{body: `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"loud"}}`, headers: in25}, 200, -32602},
		{"session: a second initialize", hit{body: initBody("2025-11-25"), headers: in25}, 200, 0},
		{"session: a response nobody asked for", hit{body: `{"jsonrpc":"2.0","id":99,"error":{"code":1,"message":"x"}}`, headers: in25}, 202, 0},
		{"session: notifications/cancelled of garbage", hit{body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":[]}}}`, headers: in25}, 202, 0},
		{"session: rate limit (1st)", hit{body: toolCall(5, "limited", `{}`), headers: in25}, 200, 0},
		{"session: rate limit denial", hit{body: toolCall(6, "limited", `{}`), headers: in25}, 200, 0},
		{"session: quota (1st)", hit{body: toolCall(7, "metered", `{}`), headers: in25}, 200, 0},
		{"session: quota denial", hit{body: toolCall(8, "metered", `{}`), headers: in25}, 200, 0},
		{"session: GET stream of an unknown session", hit{method: http.MethodGet, headers: withHeaders(sessionHeaders(unknownSID, "2025-11-25"), "Accept", "text/event-stream")}, 404, -32001},
		{"session: GET stream without Accept", hit{method: http.MethodGet, headers: in25}, 406, -32600},
		{"session: GET stream with a bad Last-Event-ID", hit{method: http.MethodGet, headers: withHeaders(in25, "Accept", "text/event-stream", "Last-Event-ID", "garbage:xyz"), stream: time.Second}, 400, 0},
		{"DELETE of an unknown session", hit{method: http.MethodDelete, headers: sessionHeaders(unknownSID, "2025-11-25")}, 404, -32001},
		{"DELETE of a session id not minted here", hit{method: http.MethodDelete, headers: sessionHeaders("nope", "2025-11-25")}, 404, -32001},
		{"DELETE without a session", hit{method: http.MethodDelete}, 405, -32600},
	} {
		c.runProbes(t, a, tokAlice, p)
	}
	// The tool errors are tool errors, not transport ones.
	r = sendHit(t, a, tokAlice, hit{body: toolCall(9, "boom", `{}`), headers: in25})
	require.Equal(t, true, r.result(t)["isError"], "%s", r.body)
	r = sendHit(t, a, tokAlice, hit{body: toolCall(9, "metered", `{}`), headers: in25})
	require.Equal(t, "quota_exceeded", denialOf(t, r)["kind"])

	// Authentication and authorization.
	c.runProbes(t, a, "",
		probe{"no token", hit{body: initBody("2025-11-25")}, 401, -32600},
		probe{"a bad token", hit{body: initBody("2025-11-25"), headers: map[string]string{"Authorization": "Bearer bad"}}, 401, -32600},
		probe{"HTTP Basic credentials", hit{body: initBody("2025-11-25"), headers: map[string]string{"Authorization": "Basic " + basicCreds}}, 401, -32600},
		probe{"no token: GET stream", hit{method: http.MethodGet, headers: withHeaders(in25, "Accept", "text/event-stream")}, 401, -32600},
		probe{"no token: DELETE", hit{method: http.MethodDelete, headers: in25}, 401, -32600},
		probe{"no token: 2024-11-05 stream", hit{method: http.MethodGet, path: a.srv.cfg.LegacySSEPath, headers: map[string]string{"Accept": "text/event-stream"}}, 401, -32600},
		probe{"no token: 2024-11-05 message", hit{path: a.srv.cfg.LegacyMessagesPath + "?sessionId=" + s25, body: `{}`}, 401, -32600},
		probe{"no token: stateless", hit{body: modernBody(1, "tools/list", ""), headers: modernHeaders("tools/list", "")}, 401, -32600},
	)
	c.runProbes(t, a, tokRita,
		probe{"insufficient scope", hit{body: toolCall(3, "addItem", `{"body":{"name":"a"}}`), headers: sessionHeaders(sRita, "2025-11-25")}, 403, 0},
		probe{"insufficient scope: stateless", hit{body: modernBody(3, "tools/call", `"name":"addItem","arguments":{"body":{"name":"a"}}`), headers: modernHeaders("tools/call", "addItem")}, 403, 0},
	)
	c.runProbes(t, a, tokMallory,
		probe{"another principal's session", hit{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, headers: in25}, 403, -32600},
		probe{"another principal's session: GET stream", hit{method: http.MethodGet, headers: withHeaders(in25, "Accept", "text/event-stream")}, 403, -32600},
		probe{"another principal's session: DELETE", hit{method: http.MethodDelete, headers: in25}, 403, -32600},
		probe{"another principal's session: batch", hit{body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, headers: in0325}, 403, -32600},
	)
	for range 4 {
		sendHit(t, a, tokHog, hit{body: initBody("2025-11-25")})
	}
	c.runProbes(t, a, tokHog, probe{"too many sessions", hit{body: initBody("2025-11-25")}, 429, -32600})

	// Batches (2025-03-26) with bad members.
	c.runProbes(t, a, tokAlice,
		probe{"batch: empty", hit{body: `[]`, headers: in0325}, 400, -32600},
		probe{"batch: malformed", hit{body: `[{"jsonrpc":"2.0",`, headers: in0325}, 400, -32700},
		probe{"batch: too many members", hit{body: batchOf(6, func(i int) string { return `{"jsonrpc":"2.0","id":1,"method":"ping"}` }), headers: in0325}, 400, -32600},
		probe{"batch: members that are not messages", hit{body: `[1,"x",null,{},[]]`, headers: in0325}, 200, 0},
		probe{"batch: bad members", hit{body: `[{"jsonrpc":"1.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"nope/nothing"},` +
			`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}},{"jsonrpc":"2.0","id":{"x":1},"method":"ping"},` +
			`{"jsonrpc":"2.0","id":"` + strings.Repeat("z", 300) + `","method":"ping"}]`, headers: in0325}, 200, 0},
		probe{"batch: failing tool calls", hit{body: "[" + toolCall(1, "boom", `{}`) + "," + toolCall(2, "denied", `{}`) + "," +
			toolCall(3, "slow", `{}`) + "," + toolCall(4, "getItem", `{"id":"x"}`) + "," + toolCall(5, "noSuchTool", `{}`) + "]", headers: in0325}, 200, 0},
		probe{"batch: outside a session", hit{body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`}, 400, -32600},
		probe{"batch: in a 2025-11-25 session", hit{body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, headers: in25}, 400, -32600},
		probe{"batch: in an unknown session", hit{body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, headers: sessionHeaders(unknownSID, "2025-03-26")}, 404, -32001},
	)

	// The stateless era (2026-07-28).
	c.runProbes(t, a, tokAlice,
		probe{"stateless: unknown method", hit{body: modernBody(1, "nope/nothing", ""), headers: modernHeaders("nope/nothing", "")}, 404, -32601},
		probe{"stateless: a session-only method", hit{body: modernBody(1, "ping", ""), headers: modernHeaders("ping", "")}, 404, -32601},
		probe{"stateless: no MCP-Protocol-Version", hit{body: modernBody(1, "tools/list", ""), headers: map[string]string{"Mcp-Method": "tools/list"}}, 400, -32020},
		probe{"stateless: mismatched MCP-Protocol-Version", hit{body: modernBody(1, "tools/list", ""), headers: withHeaders(modernHeaders("tools/list", ""), "MCP-Protocol-Version", "2025-11-25")}, 400, -32020},
		probe{"stateless: unsupported version", hit{body: strings.Replace(modernBody(1, "tools/list", ""), "2026-07-28", "2099-01-01", 1), headers: withHeaders(modernHeaders("tools/list", ""), "MCP-Protocol-Version", "2099-01-01")}, 400, -32022},
		probe{"stateless: no Mcp-Method", hit{body: modernBody(1, "tools/list", ""), headers: map[string]string{"MCP-Protocol-Version": "2026-07-28"}}, 400, -32020},
		probe{"stateless: mismatched Mcp-Method", hit{body: modernBody(1, "tools/list", ""), headers: modernHeaders("tools/call", "")}, 400, -32020},
		probe{"stateless: no Mcp-Name", hit{body: modernBody(1, "tools/call", `"name":"boom","arguments":{}`), headers: modernHeaders("tools/call", "")}, 400, -32020},
		probe{"stateless: mismatched Mcp-Name", hit{body: modernBody(1, "tools/call", `"name":"boom","arguments":{}`), headers: modernHeaders("tools/call", "echoRequest")}, 400, -32020},
		probe{"stateless: a badly encoded Mcp-Name", hit{body: modernBody(1, "tools/call", `"name":"boom","arguments":{}`), headers: modernHeaders("tools/call", "=?base64?!!!?=")}, 400, -32020},
		probe{"stateless: modern headers without _meta", hit{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, headers: modernHeaders("tools/list", "")}, 400, -32602},
		probe{"stateless: clientCapabilities not an object", hit{body: strings.Replace(modernBody(1, "tools/list", ""), `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":7`, 1), headers: modernHeaders("tools/list", "")}, 400, -32602},
		probe{"stateless: unknown log level", hit{body: strings.Replace(modernBody(1, "tools/list", ""), `"_meta":{`, `"_meta":{"io.modelcontextprotocol/logLevel":"loud",`, 1), headers: modernHeaders("tools/list", "")}, 200, -32602},
		probe{"stateless: a response", hit{body: `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, headers: modernHeaders("", "")}, 400, 0},
		probe{"stateless: a notification", hit{body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{` + modernMeta + `}}`, headers: modernHeaders("notifications/cancelled", "")}, 202, 0},
		probe{"stateless: unknown tool", hit{body: modernBody(1, "tools/call", `"name":"noSuchTool","arguments":{}`), headers: modernHeaders("tools/call", "noSuchTool")}, 200, -32602},
		probe{"stateless: invalid tool arguments", hit{body: modernBody(1, "tools/call", `"name":"getItem","arguments":{"id":{"deep":[1]}}`), headers: modernHeaders("tools/call", "getItem")}, 200, 0},
		probe{"stateless: backend 500 with a stack trace", hit{body: modernBody(1, "tools/call", `"name":"boom","arguments":{}`), headers: modernHeaders("tools/call", "boom")}, 200, 0},
		probe{"stateless: backend 401 echoing credentials", hit{body: modernBody(1, "tools/call", `"name":"denied","arguments":{}`), headers: modernHeaders("tools/call", "denied")}, 200, 0},
		probe{"stateless: backend echoes the request", hit{body: modernBody(1, "tools/call", `"name":"echoRequest","arguments":{}`), headers: modernHeaders("tools/call", "echoRequest")}, 200, 0},
		probe{"stateless: backend times out", hit{body: modernBody(1, "tools/call", `"name":"slow","arguments":{}`), headers: modernHeaders("tools/call", "slow")}, 200, 0},
		probe{"stateless: backend error, debug log", hit{body: strings.Replace(modernBody(1, "tools/call", `"name":"boom","arguments":{}`), `"_meta":{`, `"_meta":{"io.modelcontextprotocol/logLevel":"debug","progressToken":"p",`, 1), headers: modernHeaders("tools/call", "boom")}, 200, 0},
		probe{"stateless: rate limit (1st)", hit{body: modernBody(1, "tools/call", `"name":"limited","arguments":{}`), headers: modernHeaders("tools/call", "limited")}, 200, 0},
		probe{"stateless: rate limit denial", hit{body: modernBody(1, "tools/call", `"name":"limited","arguments":{}`), headers: modernHeaders("tools/call", "limited")}, 200, 0},
		probe{"stateless: quota denial", hit{body: modernBody(1, "tools/call", `"name":"metered","arguments":{}`), headers: modernHeaders("tools/call", "metered")}, 200, 0},
		probe{"stateless: resources/read of an unknown URI", hit{body: modernBody(1, "resources/read", `"uri":"file:///etc/passwd"`), headers: modernHeaders("resources/read", "file:///etc/passwd")}, 200, 0},
		probe{"stateless: prompts/get of an unknown prompt", hit{body: modernBody(1, "prompts/get", `"name":"nope"`), headers: modernHeaders("prompts/get", "nope")}, 200, 0},
		probe{"stateless: huge body", hit{body: big, headers: modernHeaders("ping", "")}, 413, -32600},
		probe{"stateless: wrong Accept", hit{body: modernBody(1, "tools/list", ""), headers: withHeaders(modernHeaders("tools/list", ""), "Accept", "application/json")}, 406, -32600},
	)

	// An operator may forward every backend error body: what gives the
	// backend away is still cut out.
	verbose := leakCaller(backend.URL)
	verbose.ErrorBody = call.ErrorBodyAll
	v := newLeakGateway(t, Config{}, Deps{}, verbose)
	vsid := open(v, "", "2025-11-25")
	for _, tool := range []string{"boom", "denied", "moved", "echoRequest"} {
		c.runProbes(t, v, "",
			probe{"all error bodies: " + tool, hit{body: toolCall(1, tool, `{}`), headers: sessionHeaders(vsid, "2025-11-25")}, 200, 0},
			probe{"all error bodies, stateless: " + tool, hit{body: modernBody(1, "tools/call", `"name":"`+tool+`","arguments":{}`), headers: modernHeaders("tools/call", tool)}, 200, 0},
		)
	}

	// The 2024-11-05 transport, refusing on the POST and answering on the
	// stream.
	legacy := openCheckedStream(t, c, a, tokAlice)
	msgs := a.srv.cfg.LegacyMessagesPath
	ct := map[string]string{"Accept": ""}
	c.runProbes(t, a, tokAlice,
		probe{"2024-11-05: stream without Accept", hit{method: http.MethodGet, path: a.srv.cfg.LegacySSEPath, headers: map[string]string{"Accept": "application/json"}}, 406, -32600},
		probe{"2024-11-05: POST to the stream", hit{path: a.srv.cfg.LegacySSEPath, body: `{}`}, 405, -32600},
		probe{"2024-11-05: a Last-Event-ID not issued here", hit{method: http.MethodGet, path: a.srv.cfg.LegacySSEPath, headers: map[string]string{"Accept": "text/event-stream", "Last-Event-ID": "nonsense"}}, 400, -32600},
		probe{"2024-11-05: a Last-Event-ID of an unknown session", hit{method: http.MethodGet, path: a.srv.cfg.LegacySSEPath, headers: map[string]string{"Accept": "text/event-stream", "Last-Event-ID": unknownSID + ":1"}}, 404, -32001},
		probe{"2024-11-05: a Last-Event-ID of a Streamable HTTP session", hit{method: http.MethodGet, path: a.srv.cfg.LegacySSEPath, headers: map[string]string{"Accept": "text/event-stream", "Last-Event-ID": s25 + ":1"}}, 400, -32600},
		probe{"2024-11-05: no sessionId", hit{path: msgs, body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: ct}, 400, -32600},
		probe{"2024-11-05: unknown sessionId", hit{path: msgs + "?sessionId=" + unknownSID, body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: ct}, 404, -32001},
		probe{"2024-11-05: a Streamable HTTP session", hit{path: msgs + "?sessionId=" + s25, body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: ct}, 400, -32600},
		probe{"2024-11-05: malformed JSON", hit{path: legacy.endpoint, body: `{"jsonrpc":`, headers: ct}, 400, -32700},
		probe{"2024-11-05: wrong JSON-RPC", hit{path: legacy.endpoint, body: `{"jsonrpc":"1.0","id":1,"method":"ping"}`, headers: ct}, 400, -32600},
		probe{"2024-11-05: a batch", hit{path: legacy.endpoint, body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, headers: ct}, 400, -32600},
		probe{"2024-11-05: wrong Content-Type", hit{path: legacy.endpoint, body: `{}`, headers: map[string]string{"Content-Type": "text/plain"}}, 415, -32600},
		probe{"2024-11-05: unsupported MCP-Protocol-Version", hit{path: legacy.endpoint, body: `{}`, headers: map[string]string{"MCP-Protocol-Version": "1999-01-01"}}, 400, -32600},
		probe{"2024-11-05: GET messages", hit{method: http.MethodGet, path: legacy.endpoint}, 405, -32600},
		probe{"2024-11-05: huge body", hit{path: legacy.endpoint, body: big, headers: ct}, 413, -32600},
		probe{"2024-11-05: huge body, chunked", hit{path: legacy.endpoint, body: big, headers: ct, chunked: true}, 413, -32600},
	)
	c.runProbes(t, a, tokMallory, probe{"2024-11-05: another principal's session", hit{path: legacy.endpoint, body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: ct}, 403, -32600})
	onStream := []struct {
		what, body string
	}{
		{"a request before initialize", `{"jsonrpc":"2.0","id":101,"method":"tools/list"}`},
		{"initialize with bad params", `{"jsonrpc":"2.0","id":102,"method":"initialize","params":{"protocolVersion":[]}}`},
		{"initialize", strings.Replace(initBody("2024-11-05"), `"id":1`, `"id":103`, 1)},
		{"a second initialize", strings.Replace(initBody("2024-11-05"), `"id":1`, `"id":104`, 1)},
		{"unknown method", `{"jsonrpc":"2.0","id":105,"method":"nope/nothing"}`},
		{"unknown tool", toolCall(106, "noSuchTool", `{}`)},
		{"invalid tool arguments", toolCall(107, "getItem", `{"id":"abc"}`)},
		{"backend 500 with a stack trace", toolCall(108, "boom", `{}`)},
		{"backend 401 echoing credentials", toolCall(109, "denied", `{}`)},
		{"backend times out", toolCall(110, "slow", `{}`)},
		{"backend echoes the request", toolCall(111, "echoRequest", `{}`)},
		{"invalid params", `{"jsonrpc":"2.0","id":112,"method":"tools/call","params":{"name":7}}`},
		{"quota denial", toolCall(113, "metered", `{}`)},
	}
	for i, m := range onStream {
		r := sendHit(t, a, tokAlice, hit{path: legacy.endpoint, body: m.body, headers: ct})
		c.assertClean(t, "2024-11-05 POST: "+m.what, r)
		require.Equal(t, http.StatusAccepted, r.status, "%s: %s", m.what, r.body)
		if i == 2 {
			require.Equal(t, http.StatusAccepted, sendHit(t, a, tokAlice, hit{path: legacy.endpoint, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers: ct}).status)
		}
		legacy.await(t, c, m.what, 101+i)
	}

	// Other routes of the same listener.
	c.runProbes(t, a, "",
		probe{"an unknown route", hit{method: http.MethodGet, path: "/nope"}, 404, 0},
		probe{"readyz", hit{method: http.MethodGet, path: "/readyz"}, 200, 0},
	)
	// A body that never arrives.
	c.assertClean(t, "a body that trickles (408)", rawExchange(t, a, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nAuthorization: Bearer "+tokAlice+"\r\nContent-Length: 100\r\n\r\n", `{"jsonrpc":`))
	c.assertClean(t, "a declared length over the bound (413)", rawExchange(t, a, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nAuthorization: Bearer "+tokAlice+"\r\nContent-Length: 2000000000\r\n\r\n", ""))

	// The backend is down.
	backend.Close()
	c.runProbes(t, a, tokAlice,
		probe{"backend down", hit{body: toolCall(20, "echoRequest", `{}`), headers: in25}, 200, 0},
		probe{"backend down: batch", hit{body: "[" + toolCall(21, "echoRequest", `{}`) + "]", headers: in0325}, 200, 0},
		probe{"backend down: stateless", hit{body: modernBody(22, "tools/call", `"name":"boom","arguments":{}`), headers: modernHeaders("tools/call", "boom")}, 200, 0},
	)
	r = sendHit(t, a, tokAlice, hit{path: legacy.endpoint, body: toolCall(120, "echoRequest", `{}`), headers: ct})
	c.assertClean(t, "backend down: 2024-11-05 POST", r)
	legacy.await(t, c, "backend down", 120)

	// Redis stalls, then goes: what needs the store is a 503, the quota
	// fails closed; what replica a has cached goes on while its broadcast
	// subscription holds (cached: 0 once the subscription may have seen
	// Redis go), and replica b has cached nothing.
	storeDown := func(phase string, cached int) {
		c.runProbes(t, a, tokAlice,
			probe{phase + ": initialize", hit{body: initBody("2025-11-25")}, 503, -32003},
			probe{phase + ": a cached session's quota", hit{body: toolCall(30, "metered", `{}`), headers: in25}, cached, 0},
			probe{phase + ": a cached session's rate limit", hit{body: toolCall(31, "limited", `{}`), headers: in25}, cached, 0},
			probe{phase + ": stateless quota", hit{body: modernBody(32, "tools/call", `"name":"metered","arguments":{}`), headers: modernHeaders("tools/call", "metered")}, 200, 0},
			probe{phase + ": 2024-11-05 stream", hit{method: http.MethodGet, path: a.srv.cfg.LegacySSEPath, headers: map[string]string{"Accept": "text/event-stream"}, stream: 2 * time.Second}, 503, -32003},
			probe{phase + ": readyz", hit{method: http.MethodGet, path: "/readyz"}, 503, 0},
		)
		c.runProbes(t, b, tokAlice,
			probe{phase + ": an uncached session", hit{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, headers: in25}, 503, -32003},
			probe{phase + ": an uncached session's batch", hit{body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, headers: in0325}, 503, -32003},
			probe{phase + ": an uncached session's GET stream", hit{method: http.MethodGet, headers: withHeaders(in25, "Accept", "text/event-stream"), stream: 2 * time.Second}, 503, -32003},
			probe{phase + ": DELETE of an uncached session", hit{method: http.MethodDelete, headers: in25}, 503, -32003},
			probe{phase + ": an uncached 2024-11-05 session", hit{path: legacy.endpoint, body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: ct}, 503, -32003},
			probe{phase + ": resuming a 2024-11-05 stream", hit{method: http.MethodGet, path: b.srv.cfg.LegacySSEPath, headers: map[string]string{"Accept": "text/event-stream", "Last-Event-ID": legacy.sessionID() + ":-"}, stream: 2 * time.Second}, 503, -32003},
			probe{phase + ": initialize", hit{body: initBody("2025-11-25")}, 503, -32003},
		)
		r := sendHit(t, a, tokAlice, hit{path: legacy.endpoint, body: toolCall(130, "metered", `{}`), headers: ct})
		c.assertClean(t, phase+": 2024-11-05 POST", r)
	}
	rsrv.Pause()
	storeDown("Redis stalled", http.StatusOK)
	rsrv.Resume()
	rsrv.Stop()
	storeDown("Redis stopped", 0)
}

// errorRecorder is a testing.TB that notes Errorf instead of failing.
type errorRecorder struct {
	testing.TB
	failed bool
}

func (r *errorRecorder) Errorf(string, ...any) { r.failed = true }
func (r *errorRecorder) Helper()               {}

// The checker finds a needle whatever its case, in a header, and behind a
// JSON escape, in a body or an SSE event; it passes the gateway's words.
func TestLeakCheckerFindsNeedles(t *testing.T) {
	c := newLeakChecker(needle{"the Redis address", "127.0.0.1:6379"})
	for _, r := range []reply{
		{body: []byte(`{"error":"REDIS: connection refused"}`)},
		{body: []byte(`{}`), header: http.Header{"X-Debug": {"dial tcp 127.0.0.1:6379"}}},
		{body: []byte(`{"message":"\u0070anic"}`)},
		{body: []byte("event: message\ndata: {\"message\":\"127.0.0.1\\u003a6379\"}\n\n")},
	} {
		rec := &errorRecorder{TB: t}
		c.assertClean(rec, "x", r)
		require.True(t, rec.failed, "%s %v", r.body, r.header)
	}
	rec := &errorRecorder{TB: t}
	c.assertClean(rec, "clean", reply{header: http.Header{"Content-Type": {"application/json"}},
		body: []byte(`{"jsonrpc":"2.0","error":{"code":-32003,"message":"Service Unavailable: the session store is unavailable"}}`)})
	require.False(t, rec.failed)
}
