package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/pubsub/lease"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/sessions/subscriptions"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// Generations of one backend's document: petsV1 as served at first;
// petsScoped changes only the tool that needs pets:read; petsMore adds a
// tool anyone may use; petsResource adds a REST-backed resource as well.
const (
	petsHead = `openapi: 3.0.3
info: {title: pets, version: "1"}
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows:
        clientCredentials:
          tokenUrl: https://as.example/token
          scopes: {"pets:read": read}
paths:
  /open:
    get: {operationId: openThing, summary: Open thing, responses: {"200": {description: ok}}}
`
	petsV1 = petsHead + `  /pets:
    get: {operationId: listPets, summary: List pets, security: [{oauth: ["pets:read"]}], responses: {"200": {description: ok}}}
`
	petsScoped = petsHead + `  /pets:
    get: {operationId: listPets, summary: List every pet, security: [{oauth: ["pets:read"]}], responses: {"200": {description: ok}}}
`
	petsMore = petsV1 + `  /more:
    get: {operationId: moreThing, summary: More, responses: {"200": {description: ok}}}
`
	petsResource = petsMore + `  /status:
    get:
      operationId: getStatus
      x-mcp-resource: true
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
`
)

const (
	toolsChanged     = "notifications/tools/list_changed"
	resourcesChanged = "notifications/resources/list_changed"
)

// petsCatalog is doc as a catalog of the given version.
func petsCatalog(t *testing.T, doc, version string) Catalog {
	t.Helper()
	d, err := openapi.LoadData(context.Background(), []byte(doc), "test/openapi.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	set, err := toolgen.Generate(d, toolgen.Options{})
	require.NoError(t, err)
	caller, err := call.NewCaller(d, call.Config{BaseURL: "http://127.0.0.1:1"})
	require.NoError(t, err)
	return Catalog{Doc: d, Tools: set, Caller: caller, Version: version}
}

// awaitStreams waits until n streams are open on g's replica: a GET
// stream's headers reach the client just before it is counted.
func awaitStreams(t *testing.T, g *testGateway, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(g.srv.local.all()) == n }, 5*time.Second, 5*time.Millisecond)
}

func (g *testGateway) openGETAs(t *testing.T, tok, sid string) *sseClient {
	t.Helper()
	h := bearer(tok)
	h["Mcp-Session-Id"] = sid
	h["MCP-Protocol-Version"] = "2025-11-25"
	c, _ := openSSE(t, g.url, h)
	return c
}

func TestListChangedOncePerVersion(t *testing.T) {
	g := newGatewayFor(t, Config{}, []byte(petsV1), "http://127.0.0.1:1")
	sid := g.initialize(t, "2025-11-25")
	stream := g.openGET(t, sid, "")
	awaitStreams(t, g, 1)

	g.srv.SetCatalog(petsCatalog(t, petsMore, "v2"))
	m := stream.nextMessage(t)
	require.Equal(t, toolsChanged, m["method"], "%v", m)
	require.NotContains(t, m, "params")

	g.srv.SetCatalog(petsCatalog(t, petsMore, "v3")) // the same tools, another version
	g.srv.SetCatalog(petsCatalog(t, petsMore, "v2")) // told already
	push(t, g, sid, "after v2, v3, v2")
	require.Empty(t, stream.methodsBefore(t, "after v2, v3, v2"))

	// The next change that shows is told again.
	g.srv.SetCatalog(petsCatalog(t, petsV1, "v4"))
	require.Equal(t, toolsChanged, stream.nextMessage(t)["method"])
	push(t, g, sid, "after v4")
	require.Empty(t, stream.methodsBefore(t, "after v4"))
}

// A session's streams share its log: each carries the session's one
// notification, however many of them are open, on however many replicas.
func TestListChangedOncePerSessionAcrossStreams(t *testing.T) {
	t.Run("one replica", func(t *testing.T) {
		g := newGatewayFor(t, Config{}, []byte(petsV1), "http://127.0.0.1:1")
		sid := g.initialize(t, "2025-11-25")
		a, b := g.openGET(t, sid, ""), g.openGET(t, sid, "")
		awaitStreams(t, g, 2)

		awaitOpen(t, g, sid, 2)
		g.srv.SetCatalog(petsCatalog(t, petsMore, "v2"))
		push(t, g, sid, "marker")
		// One message, one stream: the newest carries it, once.
		require.Equal(t, []string{toolsChanged}, b.methodsBefore(t, "marker"))
		b.close()
		awaitOpen(t, g, sid, 1)
		push(t, g, sid, "marker2")
		require.Empty(t, a.methodsBefore(t, "marker2"), "the older stream takes over without a duplicate")
	})
	t.Run("two replicas", func(t *testing.T) {
		deps := Deps{Store: sessions.NewMemory(sessions.Limits{TTL: time.Hour}), Bus: pubsub.NewMemory(),
			Lease: lease.NewMemory(), Subscriptions: subscriptions.NewMemory(subscriptions.Limits{})}
		g1 := newGatewayWith(t, Config{Replica: "r1"}, deps, []byte(petsV1), "http://127.0.0.1:1")
		g2 := newGatewayWith(t, Config{Replica: "r2"}, deps, []byte(petsV1), "http://127.0.0.1:1")
		sid := g1.initialize(t, "2025-11-25")
		a, b := g1.openGET(t, sid, ""), g2.openGET(t, sid, "")
		awaitStreams(t, g1, 1)
		awaitStreams(t, g2, 1)

		// Each replica reloads the same version.
		awaitOpen(t, g1, sid, 2)
		g1.srv.SetCatalog(petsCatalog(t, petsMore, "v2"))
		g2.srv.SetCatalog(petsCatalog(t, petsMore, "v2"))
		push(t, g2, sid, "marker")
		require.Equal(t, []string{toolsChanged}, b.methodsBefore(t, "marker"), "the newest stream, on the other replica, carries it once")
		b.close()
		awaitOpen(t, g1, sid, 1)
		push(t, g2, sid, "marker2")
		require.Empty(t, a.methodsBefore(t, "marker2"), "the older stream takes over without a duplicate")
	})
}

// What a principal sees depends on its scopes: a change to a tool only
// some may see is told only to them.
func TestListChangedFollowsWhatThePrincipalSees(t *testing.T) {
	cfg := Config{}
	cfg.Policy.Authorize = true
	g := newGatewayWith(t, cfg, Deps{Auth: tokenAuth{}}, []byte(petsV1), "http://127.0.0.1:1")
	const ritaTok, ninaTok = "rita:pets:read", "nina"
	rita, nina := g.initializeAs(t, ritaTok), g.initializeAs(t, ninaTok)
	require.ElementsMatch(t, []string{"listPets", "openThing"}, toolNames(t, g.callAs(t, ritaTok, rita, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)))
	require.ElementsMatch(t, []string{"openThing"}, toolNames(t, g.callAs(t, ninaTok, nina, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)))
	ritaStream, ninaStream := g.openGETAs(t, ritaTok, rita), g.openGETAs(t, ninaTok, nina)
	awaitStreams(t, g, 2)

	g.srv.SetCatalog(petsCatalog(t, petsScoped, "v2"))
	m := ritaStream.nextMessage(t)
	require.Equal(t, toolsChanged, m["method"], "%v", m)
	push(t, g, nina, "marker")
	require.Empty(t, ninaStream.methodsBefore(t, "marker"), "nina's tools did not change")
	push(t, g, rita, "marker")
	require.Empty(t, ritaStream.methodsBefore(t, "marker"))

	// A tool both see: both are told.
	g.srv.SetCatalog(petsCatalog(t, petsMore, "v3"))
	require.Equal(t, toolsChanged, ritaStream.nextMessage(t)["method"])
	require.Equal(t, toolsChanged, ninaStream.nextMessage(t)["method"])
}

func TestListenStreamListChanged(t *testing.T) {
	g := newGatewayFor(t, Config{}, []byte(petsV1), "http://127.0.0.1:1")
	tools, ack := g.listenStream(t, 7, `{"toolsListChanged":true}`)
	require.Equal(t, map[string]any{"toolsListChanged": true}, ack["notifications"])
	resourcesOnly, ack := g.listenStream(t, 8, `{"resourcesListChanged":true}`)
	require.Equal(t, map[string]any{"resourcesListChanged": true}, ack["notifications"])
	_, ack = g.listenStream(t, 9, `{}`)
	require.Equal(t, map[string]any{}, ack["notifications"], "nothing asked, nothing honoured")
	awaitStreams(t, g, 2) // the one that asked for nothing is not told of reloads

	g.srv.SetCatalog(petsCatalog(t, petsMore, "v2")) // tools only
	m := tools.nextMessage(t)
	require.Equal(t, toolsChanged, m["method"], "%v", m)
	require.Equal(t, map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": float64(7)}}, m["params"])

	// A listen stream is told in the order of the reloads: the first thing
	// the resources-only stream hears is the later resources change.
	g.srv.SetCatalog(petsCatalog(t, petsResource, "v3"))
	m = resourcesOnly.nextMessage(t)
	require.Equal(t, resourcesChanged, m["method"], "%v", m)
	require.Equal(t, map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": float64(8)}}, m["params"])
	m = tools.nextMessage(t)
	require.Equal(t, toolsChanged, m["method"], "petsResource's operation is a tool too: %v", m)
}
