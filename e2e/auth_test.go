package e2e

// The gateway binary as an OAuth resource server in front of a real
// authorization server (oidc-provider, authserver_test.go): discovery of
// its keys, the protected resource metadata, the challenges, scopes,
// session binding, key rotation and the tokens it must refuse; and the
// gateway's own backend token by client credentials from the same server.
// Throughout, the backend records every request, and none may carry a
// token an MCP client sent.

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
)

// protectedDoc secures one operation per scope with an oauth2 scheme, and
// leaves one open.
const protectedDoc = `openapi: 3.0.3
info: {title: protected notes, version: "1"}
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows:
        clientCredentials:
          tokenUrl: https://auth.invalid/token
          scopes:
            "tools:read": read notes
            "tools:write": write notes
paths:
  /notes:
    get:
      operationId: listNotes
      summary: Lists the notes
      security: [{oauth: ["tools:read"]}]
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
    post:
      operationId: createNote
      summary: Adds a note
      security: [{oauth: ["tools:write"]}]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [text]
              properties:
                text: {type: string}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
  /status:
    get:
      operationId: getStatus
      summary: Says the service is up
      security: []
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
`

// backendRequest is one request the recording backend answered.
type backendRequest struct {
	method, uri string
	header      http.Header
}

// recordingBackend serves protectedDoc's paths and keeps every request.
type recordingBackend struct {
	*httptest.Server
	mu   sync.Mutex
	seen []backendRequest
}

func startRecordingBackend(t *testing.T) *recordingBackend {
	t.Helper()
	b := &recordingBackend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		b.mu.Lock()
		b.seen = append(b.seen, backendRequest{method: r.Method, uri: r.URL.RequestURI(), header: r.Header.Clone()})
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "GET /notes":
			_, _ = io.WriteString(w, `{"notes":[{"id":1,"text":"first"}]}`)
		case "POST /notes":
			_, _ = io.WriteString(w, `{"id":2,"created":true}`)
		case "GET /status":
			_, _ = io.WriteString(w, `{"up":true}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":"not found"}`)
		}
	}))
	t.Cleanup(b.Close)
	return b
}

// requests returns what the backend has answered so far.
func (b *recordingBackend) requests() []backendRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]backendRequest(nil), b.seen...)
}

// last returns the latest request for method and path.
func (b *recordingBackend) last(t *testing.T, method, path string) backendRequest {
	t.Helper()
	seen := b.requests()
	for i := len(seen) - 1; i >= 0; i-- {
		if seen[i].method == method && strings.SplitN(seen[i].uri, "?", 2)[0] == path {
			return seen[i]
		}
	}
	t.Fatalf("the backend saw no %s %s (it saw %d requests)", method, path, len(seen))
	return backendRequest{}
}

// checkNeverSaw fails the test if any header value or request URI the
// backend received contains one of the tokens.
func (b *recordingBackend) checkNeverSaw(t *testing.T, tokens []string) {
	t.Helper()
	for _, r := range b.requests() {
		for _, tok := range tokens {
			if strings.Contains(r.uri, tok) {
				t.Errorf("backend %s %s: an MCP client's token is in the URL", r.method, r.uri)
			}
			for name, values := range r.header {
				for _, v := range values {
					if strings.Contains(v, tok) {
						t.Errorf("backend %s %s: header %s carries an MCP client's token", r.method, r.uri, name)
					}
				}
			}
		}
	}
}

// clientTokens is every bearer token the test sent to a gateway.
type clientTokens struct {
	mu   sync.Mutex
	list []string
}

func (c *clientTokens) add(tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list = append(c.list, tok)
}

func (c *clientTokens) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.list...)
}

// protectedGateway is the gateway binary with authentication on.
type protectedGateway struct {
	url      string // the MCP endpoint, http://ADDR/mcp
	base     string // public_url, http://ADDR
	resource string // the tokens' audience: url
	metadata string // the protected resource metadata named in challenges
	proc     *process
	sent     *clientTokens
}

// startProtectedGateway runs the gateway over protectedDoc and backend,
// trusting issuer; public_url is the address it listens on.
func startProtectedGateway(t *testing.T, issuer string, backend *recordingBackend, sent *clientTokens, extra ...string) *protectedGateway {
	t.Helper()
	doc := filepath.Join(t.TempDir(), "protected.yaml")
	require.NoError(t, os.WriteFile(doc, []byte(protectedDoc), 0o600))
	addr := freeAddr(t)
	base := "http://" + addr
	args := append([]string{"--openapi", doc, "--upstream", backend.URL, "--listen", addr,
		"--public-url", base, "--auth-issuer", issuer}, extra...)
	p := startGateway(t, args...)
	require.Equal(t, base+"/mcp", p.url)
	t.Cleanup(func() {
		logs := stderrOf(p)
		for _, tok := range sent.all() {
			if strings.Contains(logs, tok) {
				t.Errorf("the gateway logged an MCP client's token")
			}
		}
	})
	return &protectedGateway{url: p.url, base: base, resource: base + "/mcp",
		metadata: base + "/.well-known/oauth-protected-resource/mcp", proc: p, sent: sent}
}

// do sends one request to the MCP endpoint, with token as the bearer
// credential (none when empty), and reads the whole answer. Every token
// sent is remembered for the backend check.
func (g *protectedGateway) do(t *testing.T, method, query, token string, header map[string]string, body string) *rawResponse {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, g.url+query, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		g.sent.add(token)
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return &rawResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

const authSessionVersion = "2025-11-25"

// post sends a session-era message, in session sid unless it is empty.
func (g *protectedGateway) post(t *testing.T, token, sid, body string) *rawResponse {
	t.Helper()
	var h map[string]string
	if sid != "" {
		h = map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": authSessionVersion}
	}
	return g.do(t, http.MethodPost, "", token, h, body)
}

const authInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + authSessionVersion +
	`","capabilities":{},"clientInfo":{"name":"e2e-auth","version":"1"}}}`

// initialize opens a session with token and completes the handshake.
func (g *protectedGateway) initialize(t *testing.T, token string) string {
	t.Helper()
	r := g.post(t, token, "", authInitialize)
	require.Equal(t, http.StatusOK, r.status, "initialize: %s", r.body)
	require.Nil(t, onlyResponse(t, r, "1").Error, "%s", r.body)
	sid := r.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	n := g.post(t, token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, n.status, "%s", n.body)
	return sid
}

// stateless sends a 2026-07-28 request: no session, the revision and the
// client in _meta, the method (and the tool's name) mirrored in headers.
func (g *protectedGateway) stateless(t *testing.T, token, method, params string) *rawResponse {
	t.Helper()
	p := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"e2e-auth","version":"1"}}`
	if params != "" {
		p += "," + params
	}
	p += "}"
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if method == "tools/call" {
		var named struct{ Name string }
		require.NoError(t, json.Unmarshal([]byte(p), &named))
		h["Mcp-Name"] = named.Name
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": json.RawMessage(p)})
	require.NoError(t, err)
	return g.do(t, http.MethodPost, "", token, h, string(body))
}

func listBody(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`
}

func callBody(id, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

// listedTools is the names in a tools/list answer with the given id.
func listedTools(t *testing.T, r *rawResponse, id string) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "tools/list: %s", r.body)
	m := onlyResponse(t, r, id)
	require.Nil(t, m.Error, "%s", r.body)
	var res struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &res), "%s", m.Result)
	names := make([]string, 0, len(res.Tools))
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// requireToolSucceeded checks a tools/call answer is a result that is not
// a tool error, with structured content.
func requireToolSucceeded(t *testing.T, r *rawResponse, id string) map[string]any {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "tools/call: %s", r.body)
	m := onlyResponse(t, r, id)
	require.Nil(t, m.Error, "%s", r.body)
	var res struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &res), "%s", m.Result)
	require.False(t, res.IsError, "tool error: %s", m.Result)
	return res.StructuredContent
}

// requireRPCError checks the body is one JSON-RPC error (never a result)
// and that it does not echo the token.
func requireRPCError(t *testing.T, r *rawResponse, token string) {
	t.Helper()
	require.True(t, strings.HasPrefix(r.header.Get("Content-Type"), "application/json"), "Content-Type %q: %s", r.header.Get("Content-Type"), r.body)
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.body, &m), "a JSON-RPC error: %s", r.body)
	require.Equal(t, "2.0", m.JSONRPC, "%s", r.body)
	require.Nil(t, m.Result, "%s", r.body)
	require.NotNil(t, m.Error, "%s", r.body)
	require.NotZero(t, m.Error.Code, "%s", r.body)
	require.NotEmpty(t, m.Error.Message, "%s", r.body)
	if token != "" {
		require.NotContains(t, string(r.body), token, "the answer echoes the token")
	}
}

// bearerChallenge parses a Bearer WWW-Authenticate value into its
// parameters (auth-params with quoted values, RFC 9110 §11.2).
func bearerChallenge(t *testing.T, h string) map[string]string {
	t.Helper()
	rest, ok := strings.CutPrefix(h, "Bearer")
	require.True(t, ok, "a Bearer challenge: %q", h)
	params := map[string]string{}
	rest = strings.TrimSpace(rest)
	for rest != "" {
		name, after, ok := strings.Cut(rest, "=")
		require.True(t, ok, "auth-param in %q", h)
		require.True(t, strings.HasPrefix(after, `"`), "quoted value in %q", h)
		var v strings.Builder
		i := 1
		for ; i < len(after) && after[i] != '"'; i++ {
			if after[i] == '\\' && i+1 < len(after) {
				i++
			}
			v.WriteByte(after[i])
		}
		require.Less(t, i, len(after), "unterminated value in %q", h)
		params[strings.TrimSpace(name)] = v.String()
		rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(after[i+1:]), ","))
	}
	return params
}

// requireInvalidToken checks a refusal of a bad token: 401, the
// invalid_token challenge naming the metadata, a JSON-RPC error body.
// It returns the error_description.
func (g *protectedGateway) requireInvalidToken(t *testing.T, r *rawResponse, token string) string {
	t.Helper()
	require.Equal(t, http.StatusUnauthorized, r.status, "%s", r.body)
	c := bearerChallenge(t, r.header.Get("WWW-Authenticate"))
	require.Equal(t, "invalid_token", c["error"], "%v", c)
	require.Equal(t, g.metadata, c["resource_metadata"], "%v", c)
	require.NotContains(t, r.header.Get("WWW-Authenticate"), token, "the challenge echoes the token")
	requireRPCError(t, r, token)
	return c["error_description"]
}

// The JWS compact token's three parts.
func jwtParts(t *testing.T, token string) []string {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	return parts
}

// signWithForeignKey signs claims with a fresh RSA key the issuer never
// published, under the given kid.
func signWithForeignKey(t *testing.T, claims map[string]any, kid string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims(claims))
	tok.Header["typ"] = "at+jwt"
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

func TestAuthWithRealAuthorizationServer(t *testing.T) {
	as := startAuthServer(t, authServerOptions{})

	t.Run("resource server", func(t *testing.T) {
		backend := startRecordingBackend(t)
		sent := &clientTokens{}
		t.Cleanup(func() { backend.checkNeverSaw(t, sent.all()) })
		g := startProtectedGateway(t, as.Issuer(), backend, sent)
		mint := func(t *testing.T, c authClient, scope string) string {
			t.Helper()
			return as.Token(t, c.ID, c.Secret, scope, g.resource)
		}

		// The expired token's clock runs while the other subtests do:
		// another issuer whose tokens live 1s, trusted by a second gateway
		// with 1s of clock skew. Its fresh token is accepted there.
		brief := startAuthServer(t, authServerOptions{TokenTTL: time.Second})
		briefGateway := startProtectedGateway(t, brief.Issuer(), backend, sent, "--auth-clock-skew", "1s")
		briefToken := brief.Token(t, authReader.ID, authReader.Secret, "tools:read", briefGateway.resource)
		briefGateway.initialize(t, briefToken)

		t.Run("protected resource metadata", func(t *testing.T) {
			for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
				resp, err := http.Get(g.base + path)
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
				require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"), "%s: %s", path, resp.Header.Get("Content-Type"))
				var prm struct {
					Resource               string   `json:"resource"`
					AuthorizationServers   []string `json:"authorization_servers"`
					ScopesSupported        []string `json:"scopes_supported"`
					BearerMethodsSupported []string `json:"bearer_methods_supported"`
				}
				require.NoError(t, json.Unmarshal(body, &prm), "%s: %s", path, body)
				require.Equal(t, g.resource, prm.Resource, path)
				require.Equal(t, []string{as.Issuer()}, prm.AuthorizationServers, path)
				require.ElementsMatch(t, []string{"tools:read", "tools:write"}, prm.ScopesSupported, path)
				require.Equal(t, []string{"header"}, prm.BearerMethodsSupported, path)
			}
		})

		t.Run("no token", func(t *testing.T) {
			for name, r := range map[string]*rawResponse{
				"initialize": g.post(t, "", "", authInitialize),
				"stateless":  g.stateless(t, "", "tools/list", ""),
			} {
				require.Equal(t, http.StatusUnauthorized, r.status, "%s: %s", name, r.body)
				// No credentials: no error code (RFC 6750 §3.1), only where
				// to learn how to get a token.
				require.Equal(t, map[string]string{"resource_metadata": g.metadata}, bearerChallenge(t, r.header.Get("WWW-Authenticate")), name)
				requireRPCError(t, r, "")
				require.Empty(t, r.header.Get("Mcp-Session-Id"), name)
			}
			// The session era's stream and DELETE, and the 2024-11-05
			// transport's stream, all ask for a token first.
			sid := map[string]string{"Mcp-Session-Id": "made-up", "MCP-Protocol-Version": authSessionVersion}
			for _, method := range []string{http.MethodGet, http.MethodDelete} {
				r := g.do(t, method, "", "", sid, "")
				require.Equal(t, http.StatusUnauthorized, r.status, "%s: %s", method, r.body)
				require.Equal(t, map[string]string{"resource_metadata": g.metadata}, bearerChallenge(t, r.header.Get("WWW-Authenticate")), method)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.url+"/sse", nil)
			require.NoError(t, err)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "GET /mcp/sse")
			require.Equal(t, map[string]string{"resource_metadata": g.metadata}, bearerChallenge(t, resp.Header.Get("WWW-Authenticate")))

			// A client follows the challenge: metadata, then the
			// authorization server's metadata, to its token endpoint.
			var prm struct {
				Resource             string   `json:"resource"`
				AuthorizationServers []string `json:"authorization_servers"`
			}
			authGetJSON(t, g.metadata, &prm)
			require.Equal(t, g.resource, prm.Resource)
			require.Len(t, prm.AuthorizationServers, 1)
			var asMeta struct {
				Issuer        string `json:"issuer"`
				TokenEndpoint string `json:"token_endpoint"`
			}
			authGetJSON(t, prm.AuthorizationServers[0]+"/.well-known/oauth-authorization-server", &asMeta)
			require.Equal(t, as.Issuer(), asMeta.Issuer)
			require.Equal(t, as.TokenURL(), asMeta.TokenEndpoint)
		})

		t.Run("reader", func(t *testing.T) {
			tok := mint(t, authReader, "tools:read")
			sid := g.initialize(t, tok)
			require.ElementsMatch(t, []string{"listNotes", "getStatus"}, listedTools(t, g.post(t, tok, sid, listBody("2")), "2"))

			// Step-up: the write tool needs a scope the token lacks.
			r := g.post(t, tok, sid, callBody("3", "createNote", `{"text":"hi"}`))
			require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
			require.Equal(t, map[string]string{"error": "insufficient_scope", "scope": "tools:write", "resource_metadata": g.metadata},
				bearerChallenge(t, r.header.Get("WWW-Authenticate")))
			requireRPCError(t, r, tok)
			for _, req := range backend.requests() {
				require.NotEqual(t, http.MethodPost, req.method, "a refused call reached the backend: %s", req.uri)
			}

			got := requireToolSucceeded(t, g.post(t, tok, sid, callBody("4", "listNotes", `{}`)), "4")
			require.NotEmpty(t, got["notes"], "%v", got)
			// No backend credential is configured: nothing to send.
			require.Empty(t, backend.last(t, http.MethodGet, "/notes").header.Values("Authorization"))
			requireToolSucceeded(t, g.post(t, tok, sid, callBody("5", "getStatus", `{}`)), "5")
			require.Empty(t, backend.last(t, http.MethodGet, "/status").header.Values("Authorization"))
		})

		t.Run("writer", func(t *testing.T) {
			tok := mint(t, authWriter, "tools:read tools:write")
			sid := g.initialize(t, tok)
			require.ElementsMatch(t, []string{"listNotes", "createNote", "getStatus"}, listedTools(t, g.post(t, tok, sid, listBody("2")), "2"))
			got := requireToolSucceeded(t, g.post(t, tok, sid, callBody("3", "createNote", `{"text":"hi"}`)), "3")
			require.Equal(t, true, got["created"], "%v", got)
			require.Empty(t, backend.last(t, http.MethodPost, "/notes").header.Values("Authorization"))
		})

		t.Run("stateless request", func(t *testing.T) {
			reader := mint(t, authReader, "tools:read")
			require.ElementsMatch(t, []string{"listNotes", "getStatus"}, listedTools(t, g.stateless(t, reader, "tools/list", ""), "7"))
			requireToolSucceeded(t, g.stateless(t, reader, "tools/call", `"name":"listNotes","arguments":{}`), "7")
			r := g.stateless(t, reader, "tools/call", `"name":"createNote","arguments":{"text":"hi"}`)
			require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
			require.Equal(t, map[string]string{"error": "insufficient_scope", "scope": "tools:write", "resource_metadata": g.metadata},
				bearerChallenge(t, r.header.Get("WWW-Authenticate")))
			requireRPCError(t, r, reader)

			writer := mint(t, authWriter, "tools:read tools:write")
			requireToolSucceeded(t, g.stateless(t, writer, "tools/call", `"name":"createNote","arguments":{"text":"hi"}`), "7")

			bad := reader[:len(reader)-4] + "AAAA"
			g.requireInvalidToken(t, g.stateless(t, bad, "tools/list", ""), bad)
		})

		t.Run("session is bound to its subject", func(t *testing.T) {
			reader := mint(t, authReader, "tools:read")
			sid := g.initialize(t, reader)
			other := mint(t, authOther, "tools:read")
			r := g.post(t, other, sid, listBody("2"))
			require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
			requireRPCError(t, r, other)
			r = g.post(t, other, sid, callBody("3", "listNotes", `{}`))
			require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
			r = g.do(t, http.MethodDelete, "", other, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": authSessionVersion}, "")
			require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)

			// Still the reader's, also with a fresh token of the same subject.
			require.ElementsMatch(t, []string{"listNotes", "getStatus"}, listedTools(t, g.post(t, reader, sid, listBody("4")), "4"))
			again := mint(t, authReader, "tools:read")
			require.NotEqual(t, reader, again)
			require.ElementsMatch(t, []string{"listNotes", "getStatus"}, listedTools(t, g.post(t, again, sid, listBody("5")), "5"))
		})

		t.Run("token in the query string", func(t *testing.T) {
			tok := mint(t, authReader, "tools:read")
			g.sent.add(tok)
			for _, query := range []string{"?access_token=" + tok, "?x=1&access_token=" + tok} {
				r := g.do(t, http.MethodPost, query, "", nil, authInitialize)
				require.Contains(t, []int{http.StatusBadRequest, http.StatusUnauthorized}, r.status, "%s: %s", query, r.body)
				require.Empty(t, r.header.Get("Mcp-Session-Id"), query)
				require.NotEmpty(t, r.header.Get("WWW-Authenticate"), query)
				requireRPCError(t, r, tok)
			}
		})

		// Refusals whose kid the gateway knows: none of them makes it
		// fetch the JWKS, so the rotation below is the first unknown kid
		// it sees (it refreshes for one at most every 10s).
		t.Run("refused tokens", func(t *testing.T) {
			good := mint(t, authReader, "tools:read")
			parts := jwtParts(t, good)
			_, claims := decodeJWT(t, good)

			sig, err := base64.RawURLEncoding.DecodeString(parts[2])
			require.NoError(t, err)
			sig[len(sig)/2] ^= 0x01
			flipped := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)

			none := authB64([]byte(`{"alg":"none","typ":"at+jwt","kid":"`+as.Kid()+`"}`)) + "." + parts[1] + "."

			// Algorithm confusion: HS256 keyed with the issuer's public
			// RSA modulus, under its kid.
			var set struct {
				Keys []map[string]string `json:"keys"`
			}
			authGetJSON(t, as.JWKSURL(), &set)
			require.Len(t, set.Keys, 1)
			modulus, err := base64.RawURLEncoding.DecodeString(set.Keys[0]["n"])
			require.NoError(t, err)
			hs := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims(claims))
			hs.Header["typ"], hs.Header["kid"] = "at+jwt", as.Kid()
			confused, err := hs.SignedString(modulus)
			require.NoError(t, err)

			for _, c := range []struct {
				name, token, why string
			}{
				{"another audience", as.Token(t, authReader.ID, authReader.Secret, "tools:read", "http://other.example/mcp"), "the token is not meant for this resource"},
				{"a flipped signature byte", flipped, "the token's signature is invalid"},
				{"signed by an unpublished key under the issuer's kid", signWithForeignKey(t, claims, as.Kid()), "the token's signature is invalid"},
				{"alg none", none, "the token's signing algorithm is not accepted"},
				{"HS256 keyed with the public key", confused, "the token's signing algorithm is not accepted"},
			} {
				why := g.requireInvalidToken(t, g.post(t, c.token, "", authInitialize), c.token)
				require.Equal(t, c.why, why, c.name)
			}
			// The genuine token still works, and so does one for the
			// other default audience, public_url itself.
			g.initialize(t, good)
			g.initialize(t, as.Token(t, authReader.ID, authReader.Secret, "tools:read", g.base))
		})

		t.Run("key rotation", func(t *testing.T) {
			old := mint(t, authReader, "tools:read")
			sid := g.initialize(t, old)
			oldKid := as.Kid()

			as.Rotate(t)
			fresh := mint(t, authReader, "tools:read")
			header, _ := decodeJWT(t, fresh)
			require.NotEqual(t, oldKid, header["kid"])
			require.Equal(t, as.Kid(), header["kid"])

			// The new kid makes the running gateway fetch the new keys.
			require.ElementsMatch(t, []string{"listNotes", "getStatus"}, listedTools(t, g.post(t, fresh, sid, listBody("2")), "2"))
			g.initialize(t, fresh)
			// The old key is gone with that refresh, even for a token the
			// gateway had accepted (and remembered).
			why := g.requireInvalidToken(t, g.post(t, old, sid, listBody("3")), old)
			require.Equal(t, "the token's signing key is unknown", why)
			why = g.requireInvalidToken(t, g.post(t, old, "", authInitialize), old)
			require.Equal(t, "the token's signing key is unknown", why)
		})

		// Kids the issuer does not publish (these may start a JWKS
		// refresh, so they come after the rotation).
		t.Run("unknown keys and issuers", func(t *testing.T) {
			_, claims := decodeJWT(t, mint(t, authReader, "tools:read"))
			foreign := signWithForeignKey(t, claims, "made-up-kid")
			require.Equal(t, "the token's signing key is unknown", g.requireInvalidToken(t, g.post(t, foreign, "", authInitialize), foreign))

			// A real token from another authorization server, for this
			// very resource, with the same client and subject.
			elsewhere := startAuthServer(t, authServerOptions{})
			tok := elsewhere.Token(t, authReader.ID, authReader.Secret, "tools:read", g.resource)
			_, claims = decodeJWT(t, tok)
			require.Equal(t, g.resource, claims["aud"])
			require.Equal(t, elsewhere.Issuer(), claims["iss"])
			why := g.requireInvalidToken(t, g.post(t, tok, "", authInitialize), tok)
			require.Equal(t, "the token is from another issuer", why, "refused before its kid is looked up")
		})

		t.Run("expired token", func(t *testing.T) {
			_, claims := decodeJWT(t, briefToken)
			exp := time.Unix(int64(claims["exp"].(float64)), 0)
			var r *rawResponse
			// Polled statelessly: a poll opens no session.
			require.Eventually(t, func() bool {
				r = briefGateway.stateless(t, briefToken, "tools/list", "")
				return r.status != http.StatusOK
			}, 10*time.Second, 50*time.Millisecond, "the 1s token is refused once it has expired")
			require.True(t, time.Now().After(exp), "refused before its exp")
			require.Equal(t, "the token has expired", briefGateway.requireInvalidToken(t, r, briefToken))
			r = briefGateway.post(t, briefToken, "", authInitialize)
			require.Equal(t, "the token has expired", briefGateway.requireInvalidToken(t, r, briefToken))
			// An equally fresh one is accepted again.
			briefGateway.initialize(t, brief.Token(t, authReader.ID, authReader.Secret, "tools:read", briefGateway.resource))
		})
	})

	t.Run("backend credentials by client credentials", func(t *testing.T) {
		backend := startRecordingBackend(t)
		sent := &clientTokens{}
		t.Cleanup(func() { backend.checkNeverSaw(t, sent.all()) })
		secret := filepath.Join(t.TempDir(), "backend-client-secret")
		require.NoError(t, os.WriteFile(secret, []byte(authAdmin.Secret+"\n"), 0o600))
		g := startProtectedGateway(t, as.Issuer(), backend, sent,
			"--backend-oauth-token-url", as.TokenURL(),
			"--backend-oauth-client-id", authAdmin.ID,
			"--backend-oauth-client-secret-file", secret)
		require.NotContains(t, stderrOf(g.proc), "backend credentials:", "the oauth2 scheme has a credential")

		// backendToken is the gateway's own token on the backend request.
		backendToken := func(t *testing.T, req backendRequest, client string) (string, map[string]any) {
			t.Helper()
			values := req.header.Values("Authorization")
			require.Len(t, values, 1, "%s %s", req.method, req.uri)
			tok, ok := strings.CutPrefix(values[0], "Bearer ")
			require.True(t, ok, "a bearer token: %q", values[0])
			require.NotEqual(t, client, tok, "the MCP client's token reached the backend")
			claims, err := verifyJWT(tok, as.JWKSURL())
			require.NoError(t, err, "issued by the authorization server")
			require.Equal(t, authAdmin.ID, claims["client_id"])
			require.Equal(t, authAdmin.ID, claims["sub"])
			require.Equal(t, as.Issuer(), claims["iss"])
			return tok, claims
		}

		reader := as.Token(t, authReader.ID, authReader.Secret, "tools:read", g.resource)
		sid := g.initialize(t, reader)
		requireToolSucceeded(t, g.post(t, reader, sid, callBody("2", "listNotes", `{}`)), "2")
		first, claims := backendToken(t, backend.last(t, http.MethodGet, "/notes"), reader)
		require.Equal(t, "tools:read", claims["scope"], "the operation's scopes")
		requireToolSucceeded(t, g.post(t, reader, sid, callBody("3", "listNotes", `{}`)), "3")
		again, _ := backendToken(t, backend.last(t, http.MethodGet, "/notes"), reader)
		require.Equal(t, first, again, "the backend token is reused while it lives")

		writer := as.Token(t, authWriter.ID, authWriter.Secret, "tools:read tools:write", g.resource)
		requireToolSucceeded(t, g.stateless(t, writer, "tools/call", `"name":"createNote","arguments":{"text":"hi"}`), "7")
		_, claims = backendToken(t, backend.last(t, http.MethodPost, "/notes"), writer)
		require.Equal(t, "tools:write", claims["scope"])

		// An operation with no security gets no credential at all.
		requireToolSucceeded(t, g.post(t, reader, sid, callBody("4", "getStatus", `{}`)), "4")
		require.Empty(t, backend.last(t, http.MethodGet, "/status").header.Values("Authorization"))
	})
}
