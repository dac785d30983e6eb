package gateway

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/resources"
	"github.com/mcp-gateway/mcp-gateway/gateway/watch"
	"github.com/mcp-gateway/mcp-gateway/sessions/subscriptions"
)

// stockDoc's GET operations are REST-backed resources: one polled every
// second at its default URI, one the backend fails (500), one it does not
// have (404), and one that needs the vault:read scope.
const stockDoc = `openapi: 3.0.3
info: {title: stock, version: "1"}
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows:
        clientCredentials:
          tokenUrl: https://as.example/token
          scopes: {"vault:read": read the vault}
paths:
  /stock:
    get:
      operationId: getStock
      summary: Stock level
      x-mcp-resource: {pollInterval: "1s"}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
  /broken:
    get:
      operationId: getBroken
      x-mcp-resource: {uri: "shop://broken"}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
  /missing:
    get:
      operationId: getMissing
      x-mcp-resource: {uri: "shop://missing"}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
  /vault:
    get:
      operationId: getVault
      security: [{oauth: ["vault:read"]}]
      x-mcp-resource: {uri: "shop://vault"}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
`

const (
	stockURI  = "rest://api/stock"
	vaultURI  = "shop://vault"
	notesURI  = "notes://hello"
	stockMIME = "application/vnd.shop+json"
	// brokenDetail is what the failing backend's 500 says: nothing of it
	// may reach a client.
	brokenDetail = "panic: dial db-internal.corp:5432 (password=hunter2)"
)

// stockBackend serves stockDoc; the stock level is the test's to change.
type stockBackend struct {
	mu    sync.Mutex
	level int
	polls int // GETs of /stock
}

func (b *stockBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/stock":
		b.mu.Lock()
		level := b.level
		b.polls++ // counted once the answer is chosen
		b.mu.Unlock()
		w.Header().Set("Content-Type", stockMIME)
		fmt.Fprintf(w, `{"level":%d}`, level)
	case "/vault":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"gold":1}`))
	case "/broken":
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(brokenDetail))
	default:
		http.NotFound(w, r)
	}
}

func (b *stockBackend) setLevel(n int) {
	b.mu.Lock()
	b.level = n
	b.mu.Unlock()
}

func (b *stockBackend) stockGETs() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.polls
}

// newStockGateway serves stockDoc and the declared notes://hello through
// a gateway whose subscription leases are short.
func newStockGateway(t *testing.T, cfg Config, deps Deps) (*testGateway, *stockBackend) {
	t.Helper()
	b := &stockBackend{level: 1}
	hs := httptest.NewServer(b)
	t.Cleanup(hs.Close)
	hello := "hello"
	cfg.Resources = append(cfg.Resources, resources.Declared{URI: notesURI, Text: &hello})
	if cfg.SubscriptionLeaseTTL == 0 {
		cfg.SubscriptionLeaseTTL = 300 * time.Millisecond
	}
	return newGatewayWith(t, cfg, deps, []byte(stockDoc), hs.URL), b
}

// rpc is a JSON-RPC request body.
func rpc(t *testing.T, id int, method string, params any) string {
	t.Helper()
	return string(mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

func uriParams(uri string) map[string]string { return map[string]string{"uri": uri} }

// eventMessage decodes one SSE event as a JSON-RPC message.
func eventMessage(t *testing.T, ev sseEvent) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(ev.data), &m), "event: %s", ev.data)
	return m
}

// nextMessage is the next message c carries.
func (c *sseClient) nextMessage(t *testing.T) map[string]any {
	t.Helper()
	return eventMessage(t, c.next(t))
}

// methodsBefore reads c up to the log message carrying marker (push) and returns
// the methods of the messages before it. A session's log is ordered, so
// whatever was appended before the marker shows here.
func (c *sseClient) methodsBefore(t *testing.T, marker string) []string {
	t.Helper()
	var methods []string
	for {
		m := c.nextMessage(t)
		method, _ := m["method"].(string)
		if method == "notifications/message" {
			if p, _ := m["params"].(map[string]any); p != nil && p["data"] == marker {
				return methods
			}
		}
		methods = append(methods, method)
	}
}

func count(items []string, want string) int {
	n := 0
	for _, it := range items {
		if it == want {
			n++
		}
	}
	return n
}

func TestSubscribeParamsAndUnsubscribe(t *testing.T) {
	subs := subscriptions.NewMemory(subscriptions.Limits{})
	g, _ := newStockGateway(t, Config{}, Deps{Subscriptions: subs})
	const v = "2025-11-25"
	sid := g.initialize(t, v)
	long := "notes://" + strings.Repeat("x", maxSubscribedURI)

	for _, c := range []struct {
		name   string
		method string
		params any
		code   int
	}{
		{"unknown uri", "resources/subscribe", uriParams("notes://nobody"), mcp.CodeResourceNotFound},
		{"missing uri", "resources/subscribe", map[string]any{}, mcp.CodeInvalidParams},
		{"empty uri", "resources/subscribe", uriParams(""), mcp.CodeInvalidParams},
		{"uri not a string", "resources/subscribe", map[string]any{"uri": 7}, mcp.CodeInvalidParams},
		{"uri over 4 KiB", "resources/subscribe", uriParams(long), mcp.CodeInvalidParams},
		{"unsubscribe without uri", "resources/unsubscribe", map[string]any{}, mcp.CodeInvalidParams},
		{"unsubscribe uri over 4 KiB", "resources/unsubscribe", uriParams(long), mcp.CodeInvalidParams},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := g.sessionCall(t, sid, v, rpc(t, 2, c.method, c.params))
			require.Equal(t, c.code, r.errCode(t), "%s", r.body)
			require.NotContains(t, string(r.body), strings.Repeat("x", 600), "the error does not echo a huge uri")
		})
	}
	mine := watch.SessionSubscriber(sid)
	of, err := subs.Of(context.Background(), mine)
	require.NoError(t, err)
	require.Empty(t, of, "refused subscriptions are not kept")

	// A declared static resource: accepted (it is never notified).
	r := g.sessionCall(t, sid, v, rpc(t, 3, "resources/subscribe", uriParams(notesURI)))
	require.Equal(t, map[string]any{}, r.result(t), "%s", r.body)
	of, err = subs.Of(context.Background(), mine)
	require.NoError(t, err)
	require.Equal(t, []string{notesURI}, of)

	r = g.sessionCall(t, sid, v, rpc(t, 4, "resources/unsubscribe", uriParams(notesURI)))
	require.Equal(t, map[string]any{}, r.result(t), "%s", r.body)
	of, err = subs.Of(context.Background(), mine)
	require.NoError(t, err)
	require.Empty(t, of)

	// Unsubscribing from what the session is not subscribed to is fine,
	// even from a URI the gateway does not know.
	for _, uri := range []string{notesURI, stockURI, "notes://nobody"} {
		r = g.sessionCall(t, sid, v, rpc(t, 5, "resources/unsubscribe", uriParams(uri)))
		require.Equal(t, map[string]any{}, r.result(t), "%s: %s", uri, r.body)
	}

	// Session era only: 2026-07-28 has subscriptions/listen instead.
	r = g.modern(t, 6, "resources/subscribe", `"uri":"`+notesURI+`"`, nil)
	require.Equal(t, mcp.CodeMethodNotFound, r.errCode(t), "%s", r.body)
}

func TestSubscribedResourceChangeNotifiesOnce(t *testing.T) {
	subs := subscriptions.NewMemory(subscriptions.Limits{})
	g, backend := newStockGateway(t, Config{}, Deps{Subscriptions: subs})
	const v = "2025-11-25"
	sid := g.initialize(t, v)
	stream := g.openGET(t, sid, "")

	r := g.sessionCall(t, sid, v, rpc(t, 2, "resources/subscribe", uriParams(stockURI)))
	require.Equal(t, map[string]any{}, r.result(t), "%s", r.body)
	mine := watch.SessionSubscriber(sid)
	of, err := subs.Of(context.Background(), mine)
	require.NoError(t, err)
	require.Equal(t, []string{stockURI}, of)

	// Subscribing read it once; the first poll records what it is: only a change after it
	// is news.
	require.Eventually(t, func() bool { return backend.stockGETs() >= 2 }, 10*time.Second, 20*time.Millisecond,
		"the subscribed resource is polled")
	backend.setLevel(2)

	m := stream.nextMessage(t)
	require.Equal(t, "notifications/resources/updated", m["method"], "%v", m)
	require.Equal(t, map[string]any{"uri": stockURI}, m["params"])

	// Two more polls of the changed resource: a poll that reported the
	// same change again would have been delivered before the second of
	// them (the coalescing window is shorter than the poll interval).
	seen := backend.stockGETs()
	require.Eventually(t, func() bool { return backend.stockGETs() >= seen+2 }, 10*time.Second, 20*time.Millisecond)
	push(t, g, sid, "after two polls")
	require.Empty(t, stream.methodsBefore(t, "after two polls"), "one change, one notification")

	// Ending the session drops its subscriptions; nobody is left to poll for.
	r = g.do(t, exchange{method: http.MethodDelete, headers: map[string]string{"Mcp-Session-Id": sid}})
	require.Equal(t, http.StatusOK, r.status)
	of, err = subs.Of(context.Background(), mine)
	require.NoError(t, err)
	require.Empty(t, of)
	subscribers, err := subs.Subscribers(context.Background(), stockURI)
	require.NoError(t, err)
	require.Empty(t, subscribers)
	require.Eventually(t, func() bool { return len(g.srv.watch.Polling()) == 0 }, 10*time.Second, 20*time.Millisecond,
		"polling stops with the last subscription")
}

func TestSubscribableResourceReadsThroughTheBackend(t *testing.T) {
	g, _ := newStockGateway(t, Config{}, Deps{})
	const v = "2025-11-25"
	sid := g.initialize(t, v)

	r := g.sessionCall(t, sid, v, rpc(t, 2, "resources/read", uriParams(stockURI)))
	contents := r.result(t)["contents"].([]any)
	require.Len(t, contents, 1)
	require.Equal(t, map[string]any{"uri": stockURI, "mimeType": stockMIME, "text": `{"level":1}`}, contents[0],
		"the backend's JSON as text, with the backend's media type")

	r = g.sessionCall(t, sid, v, rpc(t, 3, "resources/read", uriParams("shop://missing")))
	require.Equal(t, mcp.CodeResourceNotFound, r.errCode(t), "a 404 from the backend is not found: %s", r.body)

	r = g.sessionCall(t, sid, v, rpc(t, 4, "resources/read", uriParams("shop://broken")))
	e, ok := r.msg(t)["error"].(map[string]any)
	require.True(t, ok, "a 500 from the backend is a JSON-RPC error: %s", r.body)
	require.Equal(t, float64(mcp.CodeInternalError), e["code"])
	require.Contains(t, e["message"], "Reading the resource failed")
	for _, leak := range []string{"hunter2", "db-internal", "5432", "panic"} {
		require.NotContains(t, string(r.body), leak, "the backend's error details stay behind")
	}
	require.Equal(t, "backend_error", e["data"].(map[string]any)["kind"])
}

func resourceURIs(t *testing.T, r reply) []string {
	t.Helper()
	var uris []string
	for _, res := range r.result(t)["resources"].([]any) {
		uris = append(uris, res.(map[string]any)["uri"].(string))
	}
	return uris
}

// What a principal may not use does not exist for it: not listed, not
// read, not subscribed to.
func TestSubscribableResourceNeedsItsOperationsScope(t *testing.T) {
	cfg := Config{}
	cfg.Policy.Authorize = true
	g, _ := newStockGateway(t, cfg, Deps{Auth: tokenAuth{}})
	list := rpc(t, 2, "resources/list", map[string]any{})

	alice := g.initializeAs(t, "alice")
	uris := resourceURIs(t, g.callAs(t, "alice", alice, list))
	require.Contains(t, uris, stockURI)
	require.NotContains(t, uris, vaultURI)
	r := g.callAs(t, "alice", alice, rpc(t, 3, "resources/read", uriParams(vaultURI)))
	require.Equal(t, mcp.CodeResourceNotFound, r.errCode(t), "%s", r.body)
	r = g.callAs(t, "alice", alice, rpc(t, 4, "resources/subscribe", uriParams(vaultURI)))
	require.Equal(t, mcp.CodeResourceNotFound, r.errCode(t), "%s", r.body)

	const bobTok = "bob:vault:read"
	bob := g.initializeAs(t, bobTok)
	require.Contains(t, resourceURIs(t, g.callAs(t, bobTok, bob, list)), vaultURI)
	r = g.callAs(t, bobTok, bob, rpc(t, 3, "resources/read", uriParams(vaultURI)))
	require.Equal(t, `{"gold":1}`, r.result(t)["contents"].([]any)[0].(map[string]any)["text"], "%s", r.body)
	r = g.callAs(t, bobTok, bob, rpc(t, 4, "resources/subscribe", uriParams(vaultURI)))
	require.Equal(t, map[string]any{}, r.result(t), "%s", r.body)
}

func postWebhook(t *testing.T, g *testGateway, body []byte, secret []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.hs.URL+WebhookPath, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if secret != nil {
		mac := hmac.New(sha256.New, secret)
		mac.Write(body)
		req.Header.Set(watch.SignatureHeader, "sha256="+hex.EncodeToString(mac.Sum(nil)))
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, got
}

func TestWebhookServedOnlyWithASecret(t *testing.T) {
	event := []byte(`{"paths":["/stock"]}`)
	t.Run("without a secret", func(t *testing.T) {
		g, _ := newStockGateway(t, Config{}, Deps{})
		status, _ := postWebhook(t, g, event, []byte("anything"))
		require.Equal(t, http.StatusNotFound, status)
	})
	t.Run("with a secret", func(t *testing.T) {
		secret := []byte("webhook-secret")
		g, _ := newStockGateway(t, Config{WebhookSecret: secret}, Deps{})
		status, _ := postWebhook(t, g, event, nil)
		require.Equal(t, http.StatusUnauthorized, status, "unsigned")
		status, _ = postWebhook(t, g, event, []byte("wrong"))
		require.Equal(t, http.StatusUnauthorized, status, "signed with another secret")

		const v = "2025-11-25"
		sid := g.initialize(t, v)
		stream := g.openGET(t, sid, "")
		r := g.sessionCall(t, sid, v, rpc(t, 2, "resources/subscribe", uriParams(stockURI)))
		require.Equal(t, map[string]any{}, r.result(t), "%s", r.body)

		status, body := postWebhook(t, g, event, secret)
		require.Equal(t, http.StatusAccepted, status, "%s", body)
		require.JSONEq(t, `{"uris":["`+stockURI+`"]}`, string(body), "the backend path names the resource")
		m := stream.nextMessage(t)
		require.Equal(t, "notifications/resources/updated", m["method"], "%v", m)
		require.Equal(t, map[string]any{"uri": stockURI}, m["params"])
	})
}

// listenStream opens a 2026-07-28 subscriptions/listen stream with the
// given notifications object and returns it with its acknowledgement.
func (g *testGateway) listenStream(t *testing.T, id int, notifications string) (*sseClient, map[string]any) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":%s,%s}}`, id, notifications, modernMeta)
	resp, cancel := sendStreamRequest(t, http.MethodPost, g.url, body,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
	c := &sseClient{eventStream[sseEvent]{resp: resp, cancel: cancel, events: readSSE(resp.Body)}}
	t.Cleanup(c.close)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	ack := c.nextMessage(t)
	require.Equal(t, "notifications/subscriptions/acknowledged", ack["method"], "%v", ack)
	params := ack["params"].(map[string]any)
	require.Equal(t, map[string]any{"io.modelcontextprotocol/subscriptionId": float64(id)}, params["_meta"])
	return c, params
}

func TestListenStreamResourceSubscriptions(t *testing.T) {
	g, backend := newStockGateway(t, Config{}, Deps{})
	stream, ack := g.listenStream(t, 41, `{"resourceSubscriptions":["`+stockURI+`","shop://nope","`+stockURI+`","`+vaultURI+`x"]}`)
	require.Equal(t, map[string]any{"resourceSubscriptions": []any{stockURI}}, ack["notifications"],
		"only the URIs the gateway knows, once each")

	require.Eventually(t, func() bool { return backend.stockGETs() >= 2 }, 10*time.Second, 20*time.Millisecond,
		"the listened-to resource is polled")
	backend.setLevel(3)
	m := stream.nextMessage(t)
	require.Equal(t, "notifications/resources/updated", m["method"], "%v", m)
	require.Equal(t, map[string]any{
		"uri":   stockURI,
		"_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": float64(41)},
	}, m["params"])
}

// A session that ended without DELETE (it expired) loses its
// subscriptions at the first update for it.
func TestUpdateForAGoneSessionDropsItsSubscriptions(t *testing.T) {
	subs := subscriptions.NewMemory(subscriptions.Limits{})
	g, backend := newStockGateway(t, Config{}, Deps{Subscriptions: subs})
	const v = "2025-11-25"
	sid := g.initialize(t, v)
	r := g.sessionCall(t, sid, v, rpc(t, 2, "resources/subscribe", uriParams(stockURI)))
	require.Equal(t, map[string]any{}, r.result(t), "%s", r.body)
	require.Eventually(t, func() bool { return backend.stockGETs() >= 2 }, 10*time.Second, 20*time.Millisecond)

	require.NoError(t, g.srv.store.Delete(context.Background(), sid)) // as expiry does: the subscriptions stay
	of, err := subs.Of(context.Background(), watch.SessionSubscriber(sid))
	require.NoError(t, err)
	require.Equal(t, []string{stockURI}, of)

	backend.setLevel(5)
	require.Eventually(t, func() bool {
		of, err := subs.Of(context.Background(), watch.SessionSubscriber(sid))
		return err == nil && len(of) == 0
	}, 10*time.Second, 20*time.Millisecond)
}
