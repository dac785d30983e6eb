package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/tools"
	"github.com/mcp-gateway/mcp-gateway/quota"
)

// tokenAuth is an Authenticator for the transport's tests: the bearer
// token names the subject, and scopes follow a colon
// ("alice:read,write"). The token verification itself is gateway/auth's
// and the e2e test's.
type tokenAuth struct{ anonymous bool }

type testChallenge struct{ status int }

func (c testChallenge) Error() string   { return "the token is invalid" }
func (c testChallenge) HTTPStatus() int { return c.status }
func (c testChallenge) WWWAuthenticate() string {
	return `Bearer error="invalid_token", resource_metadata="http://gw/.well-known/oauth-protected-resource/mcp"`
}

func (a tokenAuth) Authenticate(r *http.Request) (*mcp.Principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		if a.anonymous {
			return nil, nil
		}
		return nil, errors.New("no token")
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "bad" {
		return nil, testChallenge{status: http.StatusUnauthorized}
	}
	sub, scopes, _ := strings.Cut(tok, ":")
	p := &mcp.Principal{Subject: sub}
	if scopes != "" {
		p.Scopes = strings.Split(scopes, ",")
	}
	return p, nil
}

// scopedDoc has one read tool needing pets:read, one write tool needing
// pets:write, one needing nothing and one an API key (no scope).
const scopedDoc = `openapi: 3.0.3
info: {title: scoped, version: "1"}
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows:
        clientCredentials:
          tokenUrl: https://as.example/token
          scopes: {"pets:read": read, "pets:write": write}
    key: {type: apiKey, in: header, name: X-Key}
security: [{oauth: ["pets:read"]}]
paths:
  /pets:
    get: {operationId: listPets, summary: list, responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}}
    post: {operationId: addPet, summary: add, security: [{oauth: ["pets:write"]}], responses: {"200": {description: ok}}}
  /open:
    get: {operationId: openThing, summary: open, security: [], responses: {"200": {description: ok}}}
  /keyed:
    get: {operationId: keyedThing, summary: keyed, security: [{key: []}], responses: {"200": {description: ok}}}
`

func newScopedGateway(t *testing.T, cfg Config, deps Deps) *testGateway {
	t.Helper()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			// The MCP client's token never reaches the backend.
			http.Error(w, "client token forwarded", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(backend.Close)
	if deps.Auth == nil {
		deps.Auth = tokenAuth{}
	}
	cfg.Policy.Authorize = true
	return newGatewayWith(t, cfg, deps, []byte(scopedDoc), backend.URL)
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

func (g *testGateway) initializeAs(t *testing.T, tok string) string {
	t.Helper()
	r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		headers: bearer(tok)})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return r.header.Get("Mcp-Session-Id")
}

func (g *testGateway) callAs(t *testing.T, tok, sid, body string) reply {
	t.Helper()
	h := bearer(tok)
	h["Mcp-Session-Id"] = sid
	h["MCP-Protocol-Version"] = "2025-11-25"
	return g.do(t, exchange{body: body, headers: h})
}

func toolNames(t *testing.T, r reply) []string {
	t.Helper()
	var names []string
	for _, tool := range r.result(t)["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	return names
}

// No token, or a bad one: 401 with the challenge, on every MCP endpoint,
// before anything else is read.
func TestAuthRefusesMissingAndBadTokens(t *testing.T) {
	g := newScopedGateway(t, Config{}, Deps{})
	for _, c := range []exchange{
		{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`,
			headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}},
		{method: http.MethodGet, headers: map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": "x"}},
		{method: http.MethodDelete, headers: map[string]string{"Mcp-Session-Id": "x"}},
		{body: `not json`},
	} {
		r := g.do(t, c)
		require.Equal(t, http.StatusUnauthorized, r.status, "%s %s", c.method, c.body)
		require.Equal(t, "Bearer", r.header.Get("WWW-Authenticate"))
		require.Equal(t, mcp.CodeInvalidRequest, r.errCode(t))
	}
	c := exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, headers: bearer("bad")}
	r := g.do(t, c)
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Contains(t, r.header.Get("WWW-Authenticate"), `error="invalid_token"`)
	require.Contains(t, string(r.body), "the token is invalid")

	// The 2024-11-05 endpoints too.
	resp, err := http.Get(g.hs.URL + "/mcp/sse")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, err = http.Post(g.hs.URL+"/mcp/messages?sessionId=x", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// A session id is not a credential: another subject's token on it is a
// 403, for calls, streams and DELETE; its own subject goes on.
func TestSessionIsBoundToItsPrincipal(t *testing.T) {
	g := newScopedGateway(t, Config{}, Deps{})
	sid := g.initializeAs(t, "alice:pets:read")
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	require.Equal(t, http.StatusOK, g.callAs(t, "alice:pets:read", sid, list).status)

	r := g.callAs(t, "mallory:pets:read,pets:write", sid, list)
	require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	require.Contains(t, string(r.body), "another principal")
	h := bearer("mallory")
	h["Mcp-Session-Id"] = sid
	require.Equal(t, http.StatusForbidden, g.do(t, exchange{method: http.MethodDelete, headers: h}).status)
	h["Accept"] = "text/event-stream"
	require.Equal(t, http.StatusForbidden, g.do(t, exchange{method: http.MethodGet, headers: h}).status)

	// Still alice's.
	require.Equal(t, http.StatusOK, g.callAs(t, "alice:pets:read", sid, list).status)
	h = bearer("alice")
	h["Mcp-Session-Id"] = sid
	require.Equal(t, http.StatusOK, g.do(t, exchange{method: http.MethodDelete, headers: h}).status)
}

// The document's OAuth scopes decide what a principal sees and calls;
// a call without them is a 403 asking for the scope (step-up).
func TestScopesFilterListAndGateCalls(t *testing.T) {
	g := newScopedGateway(t, Config{}, Deps{})
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

	reader := g.initializeAs(t, "rita:pets:read")
	require.ElementsMatch(t, []string{"listPets", "openThing", "keyedThing"}, toolNames(t, g.callAs(t, "rita:pets:read", reader, list)))
	writer := g.initializeAs(t, "wes:pets:read,pets:write")
	require.ElementsMatch(t, []string{"listPets", "addPet", "openThing", "keyedThing"}, toolNames(t, g.callAs(t, "wes:pets:read,pets:write", writer, list)))
	none := g.initializeAs(t, "nina")
	require.ElementsMatch(t, []string{"openThing", "keyedThing"}, toolNames(t, g.callAs(t, "nina", none, list)))

	r := g.callAs(t, "rita:pets:read", reader, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"addPet","arguments":{}}}`)
	require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	require.Equal(t, `Bearer error="insufficient_scope", scope="pets:write"`, r.header.Get("WWW-Authenticate"))
	require.Contains(t, string(r.body), `needs the scopes pets:write`)

	r = g.callAs(t, "rita:pets:read", reader, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"listPets","arguments":{}}}`)
	require.Equal(t, http.StatusOK, r.status)
	require.NotEqual(t, true, r.result(t)["isError"], "%s", r.body)

	// Stateless: every request authenticated on its own; the list is
	// private to the caller.
	m := g.modern(t, 5, "tools/list", "", bearer("rita:pets:read"))
	require.Equal(t, http.StatusOK, m.status, "%s", m.body)
	require.Equal(t, "private", m.result(t)["cacheScope"])
	require.ElementsMatch(t, []string{"listPets", "openThing", "keyedThing"}, toolNames(t, m))
}

// Anonymous access, when allowed, sees only what needs no scope.
func TestAnonymousSeesOnlyUnscopedTools(t *testing.T) {
	g := newScopedGateway(t, Config{}, Deps{Auth: tokenAuth{anonymous: true}})
	r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`})
	require.Equal(t, http.StatusOK, r.status)
	sid := r.header.Get("Mcp-Session-Id")
	r = g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.ElementsMatch(t, []string{"openThing", "keyedThing"}, toolNames(t, r))
	r = g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"listPets","arguments":{}}}`)
	require.Equal(t, http.StatusUnauthorized, r.status, "an anonymous caller needs a token first")
	// A token on an anonymous session is another principal.
	require.Equal(t, http.StatusForbidden, g.callAs(t, "rita:pets:read", sid, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`).status)
}

// YAML scope_rules add requirements to a document that declares none.
func TestScopeRulesAddRequirements(t *testing.T) {
	cfg := Config{Policy: tools.Policy{ScopeRules: []tools.ScopeRule{{Tools: []string{"openThing", "keyed*"}, Scopes: []string{"admin"}}}}}
	g := newScopedGateway(t, cfg, Deps{})
	sid := g.initializeAs(t, "rita:pets:read")
	require.ElementsMatch(t, []string{"listPets"}, toolNames(t, g.callAs(t, "rita:pets:read", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)))
	sid = g.initializeAs(t, "ada:admin")
	require.ElementsMatch(t, []string{"openThing", "keyedThing"}, toolNames(t, g.callAs(t, "ada:admin", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)))
}

// initialize beyond max_sessions_per_client is a 429 with Retry-After;
// ending a session frees its place; another client is not affected.
func TestSessionCapsPerClient(t *testing.T) {
	g := newScopedGateway(t, Config{MaxSessionsPerClient: 3, MaxSessions: 4}, Deps{})
	var sids []string
	for range 3 {
		sids = append(sids, g.initializeAs(t, "cy"))
	}
	r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		headers: bearer("cy")})
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
	require.Equal(t, "60", r.header.Get("Retry-After"))
	require.Contains(t, string(r.body), "holds 3 open sessions")
	require.Empty(t, r.header.Get("Mcp-Session-Id"))

	h := bearer("cy")
	h["Mcp-Session-Id"] = sids[0]
	require.Equal(t, http.StatusOK, g.do(t, exchange{method: http.MethodDelete, headers: h}).status)
	g.initializeAs(t, "cy")

	// The deployment cap: 3 held by cy, one more for dee, then none.
	g.initializeAs(t, "dee")
	r = g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		headers: bearer("eve")})
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
	require.Contains(t, string(r.body), "the most sessions it allows")
}

// An anonymous client looping initialize stops at its cap: the store
// holds no more than the cap, however long it loops.
func TestInitializeLoopIsBounded(t *testing.T) {
	g := newTestGateway(t, Config{MaxSessionsPerClient: 100})
	refused := 0
	for range 1000 {
		r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`})
		if r.status == http.StatusTooManyRequests {
			refused++
		}
	}
	require.Equal(t, 900, refused)
}

func callBody(id int, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool)
}

// denialOf reads the structured denial of a refused call.
func denialOf(t *testing.T, r reply) map[string]any {
	t.Helper()
	res := r.result(t)
	require.Equal(t, true, res["isError"], "%s", r.body)
	sc, ok := res["structuredContent"].(map[string]any)
	require.True(t, ok, "%s", r.body)
	meta := res["_meta"].(map[string]any)
	require.Equal(t, sc["kind"], meta["kind"])
	require.Equal(t, sc["retryAfterSeconds"], meta["retryAfterSeconds"])
	return sc
}

// The per-client limit holds across the sessions one client cycles
// through; per-tool limits count each tool apart; a denial says which.
func TestRateLimitsPerClientAndPerTool(t *testing.T) {
	cfg := Config{Policy: tools.Policy{
		PerClient: quota.Limit{Rate: 0.001, Burst: 3},
		PerTool:   quota.Limit{Rate: 0.001, Burst: 2},
	}}
	g := newScopedGateway(t, cfg, Deps{})
	tok := "rita:pets:read"
	s1 := g.initializeAs(t, tok)
	require.NotEqual(t, true, g.callAs(t, tok, s1, callBody(1, "listPets")).result(t)["isError"])
	require.NotEqual(t, true, g.callAs(t, tok, s1, callBody(2, "listPets")).result(t)["isError"])
	d := denialOf(t, g.callAs(t, tok, s1, callBody(3, "listPets")))
	require.Equal(t, "rate_limited", d["kind"])
	require.Equal(t, "per_tool", d["scope"])

	// A new session: the per-tool bucket is new, the client's is not.
	s2 := g.initializeAs(t, tok)
	require.NotEqual(t, true, g.callAs(t, tok, s2, callBody(4, "openThing")).result(t)["isError"])
	d = denialOf(t, g.callAs(t, tok, s2, callBody(5, "openThing")))
	require.Equal(t, "per_client", d["scope"])
	require.GreaterOrEqual(t, d["retryAfterSeconds"].(float64), 1.0)

	// Another client is not affected.
	s3 := g.initializeAs(t, "wes:pets:read")
	require.NotEqual(t, true, g.callAs(t, "wes:pets:read", s3, callBody(6, "listPets")).result(t)["isError"])
}

// A quota admits exactly its limit and then says when it resets.
func TestQuotaDeniesBeyondItsLimit(t *testing.T) {
	cfg := Config{Policy: tools.Policy{Quotas: []tools.QuotaRule{{Name: "daily", Tools: []string{"list*"}, Limit: 2, Window: 24 * time.Hour, Per: tools.PerPrincipal}}}}
	g := newScopedGateway(t, cfg, Deps{})
	tok := "rita:pets:read"
	sid := g.initializeAs(t, tok)
	for i := range 2 {
		require.NotEqual(t, true, g.callAs(t, tok, sid, callBody(i, "listPets")).result(t)["isError"])
	}
	d := denialOf(t, g.callAs(t, tok, g.initializeAs(t, tok), callBody(9, "listPets")))
	require.Equal(t, "quota_exceeded", d["kind"])
	require.Equal(t, "daily", d["quota"])
	require.Greater(t, d["retryAfterSeconds"].(float64), 0.0)
	// Other tools are not counted.
	require.NotEqual(t, true, g.callAs(t, tok, sid, callBody(10, "openThing")).result(t)["isError"])
}

// The policy hook is asked after the limits; its denial reaches the
// model sanitized; a dead or confused hook denies (fail closed).
func TestQuotaWebhook(t *testing.T) {
	var asks atomic.Int32
	var answer atomic.Value
	answer.Store(`{"allowed": true}`)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asks.Add(1)
		var ask map[string]any
		if json.NewDecoder(r.Body).Decode(&ask) != nil || ask["tool"] == nil || ask["identity"] != "sub:rita" || ask["principal"] != "rita" {
			http.Error(w, "bad ask", http.StatusBadRequest)
			return
		}
		if s, _ := ask["session"].(string); len(s) == 43 {
			http.Error(w, "raw session id", http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(answer.Load().(string)))
	}))
	defer hook.Close()
	cfg := Config{Policy: tools.Policy{Webhook: &tools.Webhook{URL: hook.URL, Timeout: time.Second, HashSession: func(s string) string { return "h" + s[:8] }}}}
	g := newScopedGateway(t, cfg, Deps{})
	tok := "rita:pets:read"
	sid := g.initializeAs(t, tok)
	require.NotEqual(t, true, g.callAs(t, tok, sid, callBody(1, "listPets")).result(t)["isError"])

	answer.Store(`{"allowed": false, "message": "over budget\u0000\nfor today", "retryAfterSeconds": 30}`)
	r := g.callAs(t, tok, sid, callBody(2, "listPets"))
	d := denialOf(t, r)
	require.Equal(t, "policy_denied", d["kind"])
	require.Equal(t, 30.0, d["retryAfterSeconds"])
	require.Contains(t, string(r.body), "denied by the gateway's policy: over budget for today")

	for _, bad := range []string{`{"allowed": "yes"}`, `not json`, `{}`} {
		answer.Store(bad)
		d = denialOf(t, g.callAs(t, tok, sid, callBody(3, "listPets")))
		require.Equal(t, "policy_denied", d["kind"], bad)
	}
	hook.Close()
	r = g.callAs(t, tok, sid, callBody(4, "listPets"))
	require.Equal(t, "policy_denied", denialOf(t, r)["kind"])
	require.NotContains(t, string(r.body), "127.0.0.1", "the hook's address is not shown")
	require.Equal(t, int32(5), asks.Load())
}

// Every tools/call leaves one audit line: admitted, refused by scope or
// rate, refused for want of a token, or failed; arguments redacted.
func TestAuditRecordsEveryToolCall(t *testing.T) {
	var buf syncBuffer
	w, err := audit.New(audit.Config{Output: &buf, Replica: "r1"})
	require.NoError(t, err)
	cfg := Config{Policy: tools.Policy{PerTool: quota.Limit{Rate: 0.001, Burst: 1}}}
	g := newScopedGateway(t, cfg, Deps{Audit: w})
	tok := "rita:pets:read"
	sid := g.initializeAs(t, tok)
	g.callAs(t, tok, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"listPets","arguments":{"password":"hunter22"}}}`)
	g.callAs(t, tok, sid, callBody(2, "openThing"))
	g.callAs(t, tok, sid, callBody(3, "listPets"))
	g.callAs(t, tok, sid, callBody(6, "addPet"))
	g.do(t, exchange{body: callBody(4, "listPets"), headers: map[string]string{"Mcp-Session-Id": sid}})
	g.callAs(t, tok, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	g.callAs(t, "mallory:pets:read", sid, callBody(7, "listPets"))
	require.NoError(t, w.Close())

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		lines = append(lines, m)
	}
	require.Len(t, lines, 6, "one line per tools/call, none for tools/list:\n%s", buf.String())
	byOutcome := func(i int) string { return fmt.Sprint(lines[i]["outcome"], "/", lines[i]["reason"]) }
	// An argument the tool does not take: a tool error, nothing sent.
	require.Equal(t, "tool_error/<nil>", byOutcome(0))
	require.Nil(t, lines[0]["backend_status"])
	require.Equal(t, map[string]any{"password": "[REDACTED]"}, lines[0]["arguments"])
	require.NotContains(t, buf.String(), "hunter22")
	require.Equal(t, "ok/<nil>", byOutcome(1))
	require.Equal(t, "rita", lines[1]["principal"])
	require.Equal(t, "sub:rita", lines[1]["client"])
	require.Equal(t, "openThing", lines[1]["tool"])
	require.Equal(t, "r1", lines[1]["replica"])
	require.EqualValues(t, 200, lines[1]["backend_status"])
	require.Len(t, lines[1]["session"], 16, "a hash, never the id")
	require.NotContains(t, buf.String(), sid)
	require.Equal(t, "denied/rate_limited", byOutcome(2))
	require.Equal(t, "denied/insufficient_scope", byOutcome(3))
	require.Equal(t, "denied/unauthenticated", byOutcome(4))
	require.Equal(t, "denied/forbidden_session", byOutcome(5))
	require.Equal(t, "mallory", lines[5]["principal"])
}

// syncBuffer is a bytes.Buffer safe for the audit writer's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// An operation secured by an OAuth scheme that lists no scope still
// needs a token: an anonymous caller neither sees nor calls it.
func TestOAuthWithoutScopesNeedsAToken(t *testing.T) {
	doc := strings.Replace(scopedDoc, `post: {operationId: addPet, summary: add, security: [{oauth: ["pets:write"]}]`,
		`post: {operationId: addPet, summary: add, security: [{oauth: []}]`, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	defer backend.Close()
	g := newGatewayWith(t, Config{Policy: tools.Policy{Authorize: true}}, Deps{Auth: tokenAuth{anonymous: true}}, []byte(doc), backend.URL)
	r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`})
	sid := r.header.Get("Mcp-Session-Id")
	require.ElementsMatch(t, []string{"openThing", "keyedThing"}, toolNames(t, g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)))
	require.Equal(t, http.StatusUnauthorized, g.sessionCall(t, sid, "2025-11-25", callBody(3, "addPet")).status)
	// Any token will do.
	s2 := g.initializeAs(t, "nina")
	require.Contains(t, toolNames(t, g.callAs(t, "nina", s2, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)), "addPet")
}

// A session's limits are its own: a request of it that comes with
// another forwarded address still counts against the session's opener.
func TestSessionLimitsFollowTheSession(t *testing.T) {
	g := newTestGateway(t, Config{IdentityHeader: "X-Forwarded-For",
		Policy: tools.Policy{PerClient: quota.Limit{Rate: 0.001, Burst: 1}}})
	r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		headers: map[string]string{"X-Forwarded-For": "198.51.100.1"}})
	sid := r.header.Get("Mcp-Session-Id")
	call := func(id int, xff string) reply {
		return g.do(t, exchange{body: callBody(id, "listNotes"), headers: map[string]string{
			"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25", "X-Forwarded-For": xff}})
	}
	require.NotEqual(t, true, call(2, "198.51.100.1").result(t)["isError"])
	require.Equal(t, "per_client", denialOf(t, call(3, "203.0.113.9, 10.0.0.1"))["scope"])
	// Outside the session the header names the client.
	m := g.modern(t, 4, "tools/call", `"name":"listNotes","arguments":{}`, map[string]string{"X-Forwarded-For": "203.0.113.9", "Mcp-Name": "listNotes"})
	require.NotEqual(t, true, m.result(t)["isError"], "%s", m.body)
}

func TestClientAddressGroupsIPv6By64(t *testing.T) {
	require.Equal(t, "2001:db8:1:2::/64", clientAddress("2001:db8:1:2:aaaa::1"))
	require.Equal(t, clientAddress("2001:db8:1:2::1"), clientAddress("2001:db8:1:2:ffff:ffff:ffff:ffff"))
	require.Equal(t, "192.0.2.7", clientAddress("192.0.2.7"))
	require.Equal(t, "::ffff:192.0.2.7", clientAddress("::ffff:192.0.2.7"))
	require.Equal(t, "not-an-ip", clientAddress("not-an-ip"))
}
