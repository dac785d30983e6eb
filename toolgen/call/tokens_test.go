package call

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// Helpers for the backend token tests start with "tk".

const (
	tkClientID = "gw-client"
	tkSecret   = "gw-s3cret-value"
	// tkAliceToken and tkBobToken are the MCP clients' own access tokens.
	tkAliceToken = "alice-mcp-access-token-0001"
	tkBobToken   = "bob-mcp-access-token-0002"
	tkAudience   = "https://backend.test"
)

const tkSpec = `
openapi: 3.0.3
info: {title: tokens, version: "1"}
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows:
        clientCredentials: {tokenUrl: "https://document-says.test/token", scopes: {read: r, write: w}}
    oidc: {type: openIdConnect, openIdConnectUrl: "https://auth.test/.well-known/openid-configuration"}
    bearer: {type: http, scheme: bearer}
    key: {type: apiKey, in: header, name: X-API-Key}
paths:
  /read:
    get:
      operationId: read
      security: [{oauth: [read]}]
      parameters:
        - {name: Authorization, in: header, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
  /read2:
    get:
      operationId: read2
      security: [{oauth: [read, read]}]
      responses: {"200": {description: ok}}
  /write:
    post:
      operationId: write
      security: [{oauth: [write, read]}]
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {note: {type: string}}}
      responses: {"200": {description: ok}}
  /oidc:
    get:
      operationId: oidc
      security: [{oidc: []}]
      responses: {"200": {description: ok}}
  /bearer:
    get:
      operationId: bearer
      security: [{bearer: []}]
      responses: {"200": {description: ok}}
  /key:
    get:
      operationId: key
      security: [{key: []}]
      responses: {"200": {description: ok}}
  /public:
    get:
      operationId: public
      security: []
      parameters:
        - {name: Authorization, in: header, schema: {type: string}}
      responses: {"200": {description: ok}}
`

// tkRequest is what the token endpoint saw.
type tkRequest struct {
	form       url.Values
	user, pass string
	basic      bool
	header     http.Header
}

// tkEndpoint is a token endpoint. By default it issues "<prefix>-<n>" for
// the n-th request, valid for expiresIn seconds.
type tkEndpoint struct {
	*httptest.Server
	prefix    string
	expiresIn atomic.Int64
	mu        sync.Mutex
	reqs      []tkRequest
	// reply, when set, answers instead.
	reply http.HandlerFunc
}

func tkNewEndpoint(t *testing.T, prefix string, reply http.HandlerFunc) *tkEndpoint {
	t.Helper()
	e := &tkEndpoint{prefix: prefix, reply: reply}
	e.expiresIn.Store(3600)
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm() // a bad form shows in the recorded request
		user, pass, ok := r.BasicAuth()
		e.mu.Lock()
		e.reqs = append(e.reqs, tkRequest{form: r.PostForm, user: user, pass: pass, basic: ok, header: r.Header.Clone()})
		n := len(e.reqs)
		e.mu.Unlock()
		if e.reply != nil {
			e.reply(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"access_token":      fmt.Sprintf("%s-%d", e.prefix, n),
			"issued_token_type": tokenTypeAccess,
			"token_type":        "Bearer",
			"expires_in":        e.expiresIn.Load(),
		})
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *tkEndpoint) requests() []tkRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]tkRequest(nil), e.reqs...)
}

func (e *tkEndpoint) count() int { return len(e.requests()) }

// tkCall calls the tool as the given subject ("" for an anonymous caller).
func tkCall(t *testing.T, c *Caller, tool *toolgen.Tool, subjectName, token, args string) *mcp.CallToolResult {
	t.Helper()
	ctx := context.Background()
	if subjectName != "" {
		ctx = WithSubjectToken(ctx, subjectName, token)
	}
	res := c.Call(ctx, tool, json.RawMessage(args))
	require.NotNil(t, res)
	return res
}

// tkAuth is the Authorization header of each request the backend saw.
func tkAuth(b *ctBackend) []string {
	var out []string
	for _, r := range b.requests() {
		out = append(out, strings.Join(r.Header.Values("Authorization"), "|"))
	}
	return out
}

func tkClientConfig(backend *ctBackend, endpoint *tkEndpoint) Config {
	return Config{BaseURL: backend.URL, OAuthTokenURL: endpoint.URL + "/token", OAuthClientID: tkClientID, OAuthClientSecret: tkSecret}
}

func tkExchangeConfig(backend *ctBackend, endpoint *tkEndpoint) Config {
	return Config{BaseURL: backend.URL, TokenExchangeURL: endpoint.URL + "/token", OAuthClientID: tkClientID,
		OAuthClientSecret: tkSecret, TokenExchangeAudience: tkAudience}
}

// The client credentials grant: one token for many calls, sent as a bearer
// token; the document's tokenUrl is not used; Basic client authentication.
func TestClientCredentialsToken(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	backend := ctNewBackend(t, nil)
	issuer := tkNewEndpoint(t, "cc", nil)
	caller := ctCaller(t, doc, tkClientConfig(backend, issuer))
	read := ctTool(t, doc, "GET", "/read")
	for range 5 {
		ctOK(t, tkCall(t, caller, read, "", "", `{"q": "x"}`))
	}
	require.Equal(t, []string{"Bearer cc-1", "Bearer cc-1", "Bearer cc-1", "Bearer cc-1", "Bearer cc-1"}, tkAuth(backend))
	reqs := issuer.requests()
	require.Len(t, reqs, 1, "one token for many calls")
	require.Equal(t, url.Values{"grant_type": {"client_credentials"}, "scope": {"read"}}, reqs[0].form)
	require.True(t, reqs[0].basic)
	require.Equal(t, tkClientID, reqs[0].user)
	require.Equal(t, tkSecret, reqs[0].pass)
	require.Equal(t, "application/x-www-form-urlencoded", reqs[0].header.Get("Content-Type"))
}

// Without configured scopes each operation asks for the scopes its
// requirement lists, one token per distinct set; configured scopes are
// asked for everywhere.
func TestClientCredentialsScopes(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	order := []struct{ method, path string }{{"GET", "/read"}, {"GET", "/read2"}, {"POST", "/write"}, {"GET", "/oidc"}, {"GET", "/bearer"}, {"GET", "/read"}}
	cases := []struct {
		name       string
		scopes     []string
		wantScopes []string // per token request; "-" for none
		wantAuth   []string
	}{
		{"from the document", nil, []string{"read", "read write", "-"},
			[]string{"Bearer cc-1", "Bearer cc-1", "Bearer cc-2", "Bearer cc-3", "Bearer cc-3", "Bearer cc-1"}},
		{"configured", []string{"write", "admin", "write"}, []string{"admin write"},
			[]string{"Bearer cc-1", "Bearer cc-1", "Bearer cc-1", "Bearer cc-1", "Bearer cc-1", "Bearer cc-1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			issuer := tkNewEndpoint(t, "cc", nil)
			cfg := tkClientConfig(backend, issuer)
			cfg.OAuthScopes = c.scopes
			caller := ctCaller(t, doc, cfg)
			for _, op := range order {
				ctOK(t, tkCall(t, caller, ctTool(t, doc, op.method, op.path), "", "", `{}`))
			}
			var scopes []string
			for _, r := range issuer.requests() {
				s, ok := r.form["scope"]
				if !ok {
					scopes = append(scopes, "-")
					continue
				}
				scopes = append(scopes, strings.Join(s, "|"))
			}
			require.Equal(t, c.wantScopes, scopes)
			require.Equal(t, c.wantAuth, tkAuth(backend))
		})
	}
}

// A token is renewed before it expires: with the 30s margin, a token that
// lives 20s is never reused; one that lives 3s with a 1s margin is reused
// until the margin, then renewed; one issued without expires_in is not
// kept for ever.
func TestClientCredentialsRenewal(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	read := ctTool(t, doc, "GET", "/read")

	t.Run("inside the margin", func(t *testing.T) {
		backend := ctNewBackend(t, nil)
		issuer := tkNewEndpoint(t, "cc", nil)
		issuer.expiresIn.Store(20)
		caller := ctCaller(t, doc, tkClientConfig(backend, issuer))
		for range 3 {
			ctOK(t, tkCall(t, caller, read, "", "", `{}`))
		}
		require.Equal(t, []string{"Bearer cc-1", "Bearer cc-2", "Bearer cc-3"}, tkAuth(backend))
	})

	t.Run("after expiry", func(t *testing.T) {
		backend := ctNewBackend(t, nil)
		issuer := tkNewEndpoint(t, "cc", nil)
		issuer.expiresIn.Store(3)
		caller := ctCaller(t, doc, tkClientConfig(backend, issuer))
		caller.clientCreds.margin = time.Second
		ctOK(t, tkCall(t, caller, read, "", "", `{}`))
		ctOK(t, tkCall(t, caller, read, "", "", `{}`))
		require.Equal(t, 1, issuer.count(), "reused while valid")
		require.Eventually(t, func() bool {
			ctOK(t, tkCall(t, caller, read, "", "", `{}`))
			return issuer.count() == 2
		}, 10*time.Second, 50*time.Millisecond)
		auth := tkAuth(backend)
		require.Equal(t, "Bearer cc-2", auth[len(auth)-1])
	})

	t.Run("without expires_in", func(t *testing.T) {
		backend := ctNewBackend(t, nil)
		issuer := tkNewEndpoint(t, "cc", nil)
		issuer.expiresIn.Store(0) // x/oauth2 reads 0 as absent
		caller := ctCaller(t, doc, tkClientConfig(backend, issuer))
		caller.clientCreds.margin = defaultTokenTTL - 2*time.Second
		ctOK(t, tkCall(t, caller, read, "", "", `{}`))
		ctOK(t, tkCall(t, caller, read, "", "", `{}`))
		require.Equal(t, 1, issuer.count(), "reused while valid")
		require.Eventually(t, func() bool {
			ctOK(t, tkCall(t, caller, read, "", "", `{}`))
			return issuer.count() == 2
		}, 10*time.Second, 50*time.Millisecond, "not kept for ever")
	})
}

// A token endpoint that fails makes the call a tool error that says why in
// a few words: no secret, no body, no description; nothing reaches the
// backend; the next call tries again. Both token modes explain the same way.
func TestTokenEndpointFailures(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	read := ctTool(t, doc, "GET", "/read")
	jsonReply := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}
	}
	cases := []struct {
		name   string
		reply  http.HandlerFunc // nil: the endpoint is down
		reason string
	}{
		{"down", nil, "unreachable"},
		{"rejected client", jsonReply(401, `{"error":"invalid_client","error_description":"client gw-client with secret gw-s3cret-value is unknown"}`),
			"HTTP 401 Unauthorized (invalid_client)"},
		{"odd error code", jsonReply(400, `{"error":"see https://idp.internal/debug?id=42"}`), "HTTP 400 Bad Request"},
		{"server error page", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "panic: gw-s3cret-value at /srv/idp/token.go:12", http.StatusInternalServerError)
		}, "HTTP 500 Internal Server Error"},
		{"error in a 200", jsonReply(200, `{"error":"invalid_scope"}`), "HTTP 200 OK (invalid_scope)"},
		{"no token", jsonReply(200, `{"token_type":"Bearer","expires_in":60}`), reasonUnusable},
		{"not a bearer token", jsonReply(200, `{"access_token":"abc","token_type":"DPoP","expires_in":60}`), reasonUnusable},
		{"token with a line break", jsonReply(200, `{"access_token":"abc\r\nX-Evil: 1","token_type":"Bearer"}`), reasonUnusable},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://elsewhere.test/token", http.StatusTemporaryRedirect)
		}, "HTTP 307 Temporary Redirect"},
	}
	modes := []struct {
		name   string
		prefix string
		config func(*ctBackend, *tkEndpoint) Config
	}{
		{"client credentials", "the gateway could not obtain a backend token from its authorization server: ", tkClientConfig},
		{"token exchange", "the gateway could not exchange the caller's token for a backend token at its authorization server: ", tkExchangeConfig},
	}
	for _, m := range modes {
		for _, c := range cases {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				backend := ctNewBackend(t, nil)
				issuer := tkNewEndpoint(t, "tok", c.reply)
				if c.reply == nil {
					issuer.Close()
				}
				caller := ctCaller(t, doc, m.config(backend, issuer))
				for range 2 {
					res := tkCall(t, caller, read, "alice", tkAliceToken, `{}`)
					require.True(t, res.IsError)
					require.Equal(t, m.prefix+c.reason, ctText(res))
					require.NotContains(t, ctText(res), tkSecret)
					require.NotContains(t, ctText(res), tkAliceToken)
				}
				require.Empty(t, backend.requests())
				if c.reply != nil {
					require.Equal(t, 2, issuer.count(), "a failure is not cached")
				}
			})
		}
	}
}

// tkClock is a settable clock for the exchange cache.
type tkClock struct{ ns atomic.Int64 }

func (c *tkClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *tkClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func tkExchangeCaller(t *testing.T, doc *openapi.Document, cfg Config) (*Caller, *tkClock) {
	t.Helper()
	caller := ctCaller(t, doc, cfg)
	clock := &tkClock{}
	clock.ns.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	caller.exchange.now = clock.now
	return caller, clock
}

// Token exchange sends the caller's token, the audience, the grant and
// token types and the configured scopes, with Basic client
// authentication; the exchanged token goes to the backend.
func TestTokenExchangeRequest(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	backend := ctNewBackend(t, nil)
	issuer := tkNewEndpoint(t, "xch", nil)
	cfg := tkExchangeConfig(backend, issuer)
	cfg.OAuthScopes = []string{"read", "write"}
	caller, _ := tkExchangeCaller(t, doc, cfg)
	ctOK(t, tkCall(t, caller, ctTool(t, doc, "GET", "/read"), "alice", tkAliceToken, `{}`))
	require.Equal(t, []string{"Bearer xch-1"}, tkAuth(backend))
	reqs := issuer.requests()
	require.Len(t, reqs, 1)
	require.Equal(t, url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token":        {tkAliceToken},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:access_token"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
		"audience":             {tkAudience},
		"scope":                {"read write"},
	}, reqs[0].form)
	require.True(t, reqs[0].basic)
	require.Equal(t, tkClientID, reqs[0].user)
	require.Equal(t, tkSecret, reqs[0].pass)
	require.Equal(t, "application/x-www-form-urlencoded", reqs[0].header.Get("Content-Type"))
	require.Len(t, reqs[0].header.Values("Authorization"), 1, "one Authorization header: the client's")

	// Without audience and scopes, neither parameter is sent.
	issuer2 := tkNewEndpoint(t, "xch", nil)
	cfg = tkExchangeConfig(backend, issuer2)
	cfg.TokenExchangeAudience = ""
	caller, _ = tkExchangeCaller(t, doc, cfg)
	ctOK(t, tkCall(t, caller, ctTool(t, doc, "GET", "/oidc"), "alice", tkAliceToken, `{}`))
	form := issuer2.requests()[0].form
	require.NotContains(t, form, "audience")
	require.NotContains(t, form, "scope")
}

// Exchanged tokens are cached per caller and subject token until shortly
// before they expire.
func TestTokenExchangeCache(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	read, write := ctTool(t, doc, "GET", "/read"), ctTool(t, doc, "POST", "/write")
	backend := ctNewBackend(t, nil)
	issuer := tkNewEndpoint(t, "xch", nil)
	caller, clock := tkExchangeCaller(t, doc, tkExchangeConfig(backend, issuer))

	ctOK(t, tkCall(t, caller, read, "alice", tkAliceToken, `{}`))
	ctOK(t, tkCall(t, caller, read, "bob", tkBobToken, `{}`))
	for range 3 {
		ctOK(t, tkCall(t, caller, read, "alice", tkAliceToken, `{}`))
		ctOK(t, tkCall(t, caller, write, "bob", tkBobToken, `{"note": "n"}`))
	}
	require.Equal(t, 2, issuer.count(), "two subjects, two exchanges; repeated calls none")
	require.Equal(t, []string{"Bearer xch-1", "Bearer xch-2", "Bearer xch-1", "Bearer xch-2", "Bearer xch-1", "Bearer xch-2", "Bearer xch-1", "Bearer xch-2"}, tkAuth(backend))
	subjects := func() []string {
		var out []string
		for _, r := range issuer.requests() {
			out = append(out, r.form.Get("subject_token"))
		}
		return out
	}
	require.Equal(t, []string{tkAliceToken, tkBobToken}, subjects())

	// A renewed client token is exchanged anew.
	ctOK(t, tkCall(t, caller, read, "alice", tkAliceToken+"-renewed", `{}`))
	require.Equal(t, 3, issuer.count())

	// Shortly before the exchanged token expires (3600s less the 30s
	// margin), it is exchanged again.
	clock.advance(3569 * time.Second)
	ctOK(t, tkCall(t, caller, read, "alice", tkAliceToken, `{}`))
	require.Equal(t, 3, issuer.count())
	clock.advance(time.Second)
	ctOK(t, tkCall(t, caller, read, "alice", tkAliceToken, `{}`))
	require.Equal(t, 4, issuer.count())

	// A token that lives less than the margin is used once, not kept.
	issuer.expiresIn.Store(10)
	ctOK(t, tkCall(t, caller, read, "carol", "carol-mcp-access-token", `{}`))
	ctOK(t, tkCall(t, caller, read, "carol", "carol-mcp-access-token", `{}`))
	require.Equal(t, 6, issuer.count())

	// The cache keeps hashes of subject tokens, never the tokens.
	caller.exchange.cache.mu.Lock()
	for key := range caller.exchange.cache.entries {
		require.NotContains(t, key, tkAliceToken)
		require.NotContains(t, key, tkBobToken)
	}
	caller.exchange.cache.mu.Unlock()
}

// Concurrent calls of one caller wait for one exchange.
func TestTokenExchangeConcurrent(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	read := ctTool(t, doc, "GET", "/read")
	backend := ctNewBackend(t, nil)
	release := make(chan struct{})
	var issuer *tkEndpoint
	issuer = tkNewEndpoint(t, "xch", func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"access_token":"xch-%d","token_type":"Bearer","expires_in":3600}`, issuer.count())
	})
	caller, _ := tkExchangeCaller(t, doc, tkExchangeConfig(backend, issuer))
	var waiting atomic.Int32
	caller.exchange.joining = func() { waiting.Add(1) }

	const n = 20
	results := make(chan *mcp.CallToolResult, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			results <- caller.Call(WithSubjectToken(context.Background(), "alice", tkAliceToken), read, json.RawMessage(`{}`))
		})
	}
	require.Eventually(t, func() bool { return waiting.Load() == n }, 10*time.Second, 5*time.Millisecond)
	close(release)
	wg.Wait()
	close(results)
	for res := range results {
		ctOK(t, res)
	}
	require.Equal(t, 1, issuer.count())
	auth := tkAuth(backend)
	require.Len(t, auth, n)
	for _, a := range auth {
		require.Equal(t, "Bearer xch-1", a)
	}
}

// A call that is cancelled while its exchange runs returns at once; the
// exchange goes on for the others and its token is kept.
func TestTokenExchangeCancelledWait(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	read := ctTool(t, doc, "GET", "/read")
	backend := ctNewBackend(t, nil)
	release := make(chan struct{})
	issuer := tkNewEndpoint(t, "xch", func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"xch-1","token_type":"Bearer","expires_in":3600}`)
	})
	caller, _ := tkExchangeCaller(t, doc, tkExchangeConfig(backend, issuer))
	ctx, cancel := context.WithCancel(WithSubjectToken(context.Background(), "alice", tkAliceToken))
	caller.exchange.joining = cancel
	res := caller.Call(ctx, read, json.RawMessage(`{}`))
	require.True(t, res.IsError)
	require.Equal(t, "the call was cancelled", ctText(res))
	close(release)
	require.Eventually(t, func() bool { return caller.exchange.cache.len() == 1 }, 10*time.Second, 5*time.Millisecond)
	caller.exchange.joining = nil
	ctOK(t, tkCall(t, caller, read, "alice", tkAliceToken, `{}`))
	require.Equal(t, 1, issuer.count())
	require.Equal(t, []string{"Bearer xch-1"}, tkAuth(backend))
}

// With token exchange configured, a call without the caller's token is a
// tool error and nothing is sent anywhere; tools whose schemes need no
// token still work.
func TestTokenExchangeAnonymous(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	backend := ctNewBackend(t, nil)
	issuer := tkNewEndpoint(t, "xch", nil)
	cfg := tkExchangeConfig(backend, issuer)
	cfg.APIKeys = map[string]string{"key": "api-key-value"}
	caller, _ := tkExchangeCaller(t, doc, cfg)
	for _, tok := range []string{"", "-"} {
		subjectName, token := "", ""
		if tok == "-" {
			subjectName = "alice" // a subject without a token
		}
		res := tkCall(t, caller, ctTool(t, doc, "GET", "/read"), subjectName, token, `{}`)
		require.True(t, res.IsError)
		require.Equal(t, "this tool needs an authenticated caller: the gateway calls the backend with the caller's own identity, and this call has none", ctText(res))
	}
	require.Zero(t, issuer.count())
	require.Empty(t, backend.requests())
	ctOK(t, tkCall(t, caller, ctTool(t, doc, "GET", "/key"), "", "", `{}`))
	ctOK(t, tkCall(t, caller, ctTool(t, doc, "GET", "/public"), "", "", `{}`))
	require.Len(t, backend.requests(), 2)
}

// Which credential serves which scheme when several are configured.
func TestTokenPrecedence(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	ops := []struct{ method, path string }{{"GET", "/read"}, {"GET", "/oidc"}, {"GET", "/bearer"}, {"GET", "/public"}}
	cases := []struct {
		name     string
		exchange bool // TokenExchangeURL
		client   bool // OAuthTokenURL
		bearer   string
		always   bool
		want     []string // Authorization per op
		wantCC   int      // client credentials token requests
		wantXch  int      // exchange requests
	}{
		{"exchange beats client credentials", true, true, "", false, []string{"Bearer xch-1", "Bearer xch-1", "Bearer xch-1", ""}, 0, 1},
		{"static bearer keeps http bearer", true, false, "static-token", false, []string{"Bearer xch-1", "Bearer xch-1", "Bearer static-token", ""}, 0, 1},
		{"client credentials beat static bearer for oauth2", false, true, "static-token", true,
			[]string{"Bearer cc-1", "Bearer cc-2", "Bearer static-token", "Bearer static-token"}, 2, 0},
		{"static bearer alone", false, false, "static-token", false, []string{"Bearer static-token", "Bearer static-token", "Bearer static-token", ""}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			cc := tkNewEndpoint(t, "cc", nil)
			xch := tkNewEndpoint(t, "xch", nil)
			cfg := Config{BaseURL: backend.URL, BearerToken: c.bearer, BearerAlways: c.always}
			if c.exchange || c.client {
				cfg.OAuthClientID, cfg.OAuthClientSecret = tkClientID, tkSecret
			}
			if c.exchange {
				cfg.TokenExchangeURL = xch.URL
			}
			if c.client {
				cfg.OAuthTokenURL = cc.URL
			}
			caller := ctCaller(t, doc, cfg)
			for _, op := range ops {
				ctOK(t, tkCall(t, caller, ctTool(t, doc, op.method, op.path), "alice", tkAliceToken, `{}`))
			}
			require.Equal(t, c.want, tkAuth(backend))
			require.Equal(t, c.wantCC, cc.count())
			require.Equal(t, c.wantXch, xch.count())
		})
	}
}

// The MCP client's token, given with WithSubjectToken and as an
// Authorization argument, never reaches the backend in any credential
// mode: not in a header, the URL or the body.
func TestSubjectTokenNeverReachesBackend(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	ops := []struct{ method, path, args string }{
		{"GET", "/read", `{"Authorization": "Bearer ` + tkAliceToken + `", "q": "x"}`},
		{"POST", "/write", `{"note": "n"}`},
		{"GET", "/oidc", `{}`},
		{"GET", "/bearer", `{}`},
		{"GET", "/key", `{}`},
		{"GET", "/public", `{"Authorization": "Bearer ` + tkAliceToken + `"}`},
	}
	modes := []struct {
		name string
		cfg  func(backend *ctBackend, cc, xch *tkEndpoint) Config
	}{
		{"no credentials", func(b *ctBackend, _, _ *tkEndpoint) Config { return Config{BaseURL: b.URL} }},
		{"static bearer", func(b *ctBackend, _, _ *tkEndpoint) Config {
			return Config{BaseURL: b.URL, BearerToken: "static-token", BearerAlways: true}
		}},
		{"api key", func(b *ctBackend, _, _ *tkEndpoint) Config {
			return Config{BaseURL: b.URL, APIKeys: map[string]string{"key": "api-key-value"}}
		}},
		{"static headers", func(b *ctBackend, _, _ *tkEndpoint) Config {
			return Config{BaseURL: b.URL, Headers: map[string]string{"Authorization": "Basic eDp5", "X-Tenant": "t1"}}
		}},
		{"client credentials", func(b *ctBackend, cc, _ *tkEndpoint) Config { return tkClientConfig(b, cc) }},
		{"token exchange", func(b *ctBackend, _, xch *tkEndpoint) Config { return tkExchangeConfig(b, xch) }},
		{"everything", func(b *ctBackend, cc, xch *tkEndpoint) Config {
			cfg := tkExchangeConfig(b, xch)
			cfg.OAuthTokenURL = cc.URL
			cfg.BearerToken, cfg.BearerAlways = "static-token", true
			cfg.APIKeys = map[string]string{"key": "api-key-value"}
			cfg.Headers = map[string]string{"X-Tenant": "t1"}
			return cfg
		}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			cc, xch := tkNewEndpoint(t, "cc", nil), tkNewEndpoint(t, "xch", nil)
			caller := ctCaller(t, doc, m.cfg(backend, cc, xch))
			for _, op := range ops {
				ctOK(t, tkCall(t, caller, ctTool(t, doc, op.method, op.path), "alice", tkAliceToken, op.args))
			}
			reqs := backend.requests()
			require.Len(t, reqs, len(ops))
			for _, r := range reqs {
				for name, values := range r.Header {
					for _, v := range values {
						require.NotContains(t, v, tkAliceToken, "header %s of %s", name, r.RequestURI)
					}
				}
				require.NotContains(t, r.RequestURI, tkAliceToken)
				require.NotContains(t, string(r.Body), tkAliceToken)
			}
			for _, r := range cc.requests() {
				require.NotContains(t, r.form.Encode(), url.QueryEscape(tkAliceToken), "the client credentials grant does not send it either")
			}
		})
	}
}

// A token endpoint satisfies oauth2, openIdConnect and http bearer schemes
// for MissingCredentials, the same rule the call applies.
func TestMissingCredentialsTokenEndpoints(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	set, err := toolgen.Generate(doc, toolgen.Options{})
	require.NoError(t, err)
	missing := func(cfg Config) []string {
		cfg.BaseURL = "http://backend.test"
		c, err := NewCaller(doc, cfg)
		require.NoError(t, err)
		var out []string
		for _, m := range c.MissingCredentials(set.Tools()) {
			out = append(out, m.Scheme)
		}
		return out
	}
	require.Equal(t, []string{"bearer", "key", "oauth", "oidc"}, missing(Config{}))
	for _, cfg := range []Config{
		{OAuthTokenURL: "https://idp.test/token", OAuthClientID: tkClientID, OAuthClientSecret: tkSecret},
		{TokenExchangeURL: "https://idp.test/token", OAuthClientID: tkClientID, OAuthClientSecret: tkSecret},
	} {
		require.Equal(t, []string{"key"}, missing(cfg))
	}

	gaps := ctDocFile(t, "security-gaps.yaml")
	gapSet, err := toolgen.Generate(gaps, toolgen.Options{})
	require.NoError(t, err)
	c := ctCaller(t, gaps, Config{BaseURL: "http://backend.test", OAuthTokenURL: "https://idp.test/token", OAuthClientID: tkClientID, OAuthClientSecret: tkSecret})
	require.Equal(t, []MissingCredential{
		{Scheme: "basic", Type: "http", HTTPScheme: "basic", Tools: []string{"e"}},
		{Scheme: "key", Type: "apiKey", In: "header", Name: "X-API-Key", Tools: []string{"a", "e"}},
	}, c.MissingCredentials(gapSet.Tools()), "tok (http bearer) is served by the token endpoint")
}

func TestNewCallerRejectsBadTokenConfig(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	ok := Config{OAuthTokenURL: "https://idp.test/token", OAuthClientID: tkClientID, OAuthClientSecret: tkSecret}
	with := func(mod func(*Config)) Config {
		cfg := ok
		mod(&cfg)
		return cfg
	}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"client id without a URL", Config{OAuthClientID: "x"}, "need OAuthTokenURL or TokenExchangeURL"},
		{"audience without a URL", Config{TokenExchangeAudience: "x"}, "need OAuthTokenURL or TokenExchangeURL"},
		{"relative URL", with(func(c *Config) { c.OAuthTokenURL = "/token" }), "OAuthTokenURL must be an absolute http or https URL"},
		{"exchange URL scheme", with(func(c *Config) { c.TokenExchangeURL = "ftp://idp.test/x" }), "TokenExchangeURL must be an absolute http or https URL"},
		{"URL with user", with(func(c *Config) { c.OAuthTokenURL = "https://u:p@idp.test/token" }), "OAuthTokenURL must not contain credentials"},
		{"URL without host", with(func(c *Config) { c.OAuthTokenURL = "https:///token" }), "OAuthTokenURL has no host"},
		{"no client id", with(func(c *Config) { c.OAuthClientID = "" }), "OAuthClientID is required"},
		{"no secret", with(func(c *Config) { c.OAuthClientSecret = "" }), "OAuthClientSecret is required"},
		{"secret with newline", with(func(c *Config) { c.OAuthClientSecret = "a\nb" }), "OAuthClientSecret contains control characters"},
		{"scope with a space", with(func(c *Config) { c.OAuthScopes = []string{"read write"} }), `OAuthScopes[0] "read write" is not a scope`},
		{"empty scope", with(func(c *Config) { c.OAuthScopes = []string{""} }), `OAuthScopes[0] "" is not a scope`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.BaseURL = "http://backend.test"
			_, err := NewCaller(doc, c.cfg)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
			require.NotContains(t, err.Error(), tkSecret)
		})
	}
	ok.BaseURL = "http://backend.test"
	_, err := NewCaller(doc, ok)
	require.NoError(t, err)
}

// The exchange cache stays within its bound: a full cache drops expired
// entries first, then the least recently used.
func TestExchangeCacheBound(t *testing.T) {
	now := time.Unix(1000, 0)
	later, soon := now.Add(time.Hour), now.Add(time.Second)
	c := exchangeCache{max: 3}
	c.put("a", "ta", later, now)
	c.put("b", "tb", later, now)
	c.put("c", "tc", later, now)
	_, ok := c.get("a", now) // a is now the most recently used
	require.True(t, ok)
	c.put("d", "td", later, now)
	require.Equal(t, 3, c.len())
	_, ok = c.get("b", now)
	require.False(t, ok, "b was the least recently used")
	for _, k := range []string{"a", "c", "d"} {
		_, ok := c.get(k, now)
		require.True(t, ok, k)
	}

	c = exchangeCache{max: 3}
	c.put("a", "ta", later, now)
	c.put("b", "tb", soon, now)
	c.put("c", "tc", later, now)
	c.put("d", "td", later, now.Add(2*time.Second)) // b has expired
	for _, k := range []string{"a", "c", "d"} {
		_, ok := c.get(k, now)
		require.True(t, ok, k)
	}
	require.Equal(t, 3, c.len())

	// An entry is gone once it expires, and a replaced one is not counted twice.
	c.put("a", "ta2", soon, now)
	require.Equal(t, 3, c.len())
	tok, ok := c.get("a", now)
	require.True(t, ok)
	require.Equal(t, "ta2", tok)
	_, ok = c.get("a", soon)
	require.False(t, ok)
	require.Equal(t, 2, c.len())

	// A full cache frees a sixteenth of itself at once.
	big := exchangeCache{max: maxExchangedTokens}
	for i := range 3 * maxExchangedTokens {
		big.put(fmt.Sprint(i), "t", later, now)
		require.LessOrEqual(t, big.len(), maxExchangedTokens)
	}
	require.Greater(t, big.len(), maxExchangedTokens-maxExchangedTokens/16)
	_, ok = big.get(fmt.Sprint(3*maxExchangedTokens-1), now)
	require.True(t, ok, "the newest entry is kept")
}

func TestExpiresIn(t *testing.T) {
	cases := map[string]time.Duration{
		``: defaultTokenTTL, `null`: defaultTokenTTL, `"abc"`: defaultTokenTTL,
		`3600`: time.Hour, `"60"`: time.Minute, `1.5`: 1500 * time.Millisecond,
		`0`: 0, `-5`: 0, `1e300`: 100 * 365 * 24 * time.Hour,
	}
	for in, want := range cases {
		require.Equal(t, want, expiresIn(json.RawMessage(in)), in)
	}
}

// A backend that echoes its request (the Authorization header, in a body
// or in an error) does not hand the client the gateway's fetched token:
// it is redacted like a configured credential, in both modes.
func TestFetchedTokensAreRedactedFromAnswers(t *testing.T) {
	doc := ctDoc(t, tkSpec)
	for _, status := range []int{http.StatusOK, http.StatusBadRequest} {
		backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]string{"echo": r.Header.Get("Authorization")})
		})
		issuer := tkNewEndpoint(t, "backend-token-of-the-gateway", nil)
		read := ctTool(t, doc, "GET", "/read")
		res := tkCall(t, ctCaller(t, doc, tkClientConfig(backend, issuer)), read, "", "", `{"q": "x"}`)
		require.Equal(t, []string{"Bearer backend-token-of-the-gateway-1"}, tkAuth(backend))
		out, err := json.Marshal(res)
		require.NoError(t, err)
		require.NotContains(t, string(out), "backend-token-of-the-gateway", "status %d", status)
		require.Contains(t, string(out), "[redacted]", "status %d", status)
	}
}
