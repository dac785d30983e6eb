package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/mcp-gateway/mcp-gateway/gateway/prompts"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// surfaceDoc has two tags, an untagged operation and a shared schema.
const surfaceDoc = `openapi: 3.0.3
info: {title: shop, version: '1'}
tags:
  - {name: pets, description: Pets for sale.}
  - {name: store, description: Orders.}
paths:
  /pets:
    get: {operationId: listPets, summary: List the pets, tags: [pets], responses: {'200': {description: ok, content: {application/json: {schema: {type: array, items: {$ref: '#/components/schemas/Pet'}}}}}}}
    post:
      operationId: createPet
      summary: Add a pet
      tags: [pets]
      requestBody: {required: true, content: {application/json: {schema: {$ref: '#/components/schemas/Pet'}}}}
      responses: {'200': {description: ok}}
  /store/orders/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    get: {operationId: getOrder, summary: Find an order, tags: [store], responses: {'200': {description: ok}}}
    delete: {operationId: deleteOrder, summary: Delete an order, tags: [store], responses: {'200': {description: ok}}}
  /ping:
    get: {operationId: ping, summary: Health check, responses: {'200': {description: ok}}}
components:
  schemas:
    Pet:
      type: object
      required: [name]
      properties:
        name: {type: string}
        friends: {type: array, items: {$ref: '#/components/schemas/Pet'}}
`

func surfaceBackend(t *testing.T) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"method":"` + r.Method + `","path":"` + r.URL.Path + `"}`))
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

func (g *testGateway) at(path string) *testGateway {
	cp := *g
	cp.url = g.hs.URL + path
	return &cp
}

func callText(t *testing.T, r reply) (string, bool) {
	t.Helper()
	res := r.result(t)
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	isErr, _ := res["isError"].(bool)
	return text, isErr
}

func modernCall(t *testing.T, g *testGateway, name, args string, h map[string]string) reply {
	t.Helper()
	hh := map[string]string{"Mcp-Name": name}
	for k, v := range h {
		hh[k] = v
	}
	return g.modern(t, 2, "tools/call", `"name":"`+name+`","arguments":`+args, hh)
}

func TestSurfaceNarrowsPerConnection(t *testing.T) {
	g := newGatewayFor(t, Config{}, []byte(surfaceDoc), surfaceBackend(t))
	list := func(g *testGateway, h map[string]string) []string {
		r := g.modern(t, 1, "tools/list", "", h)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		return toolNames(t, r)
	}
	require.Equal(t, []string{"listPets", "createPet", "ping", "getOrder", "deleteOrder"}, list(g, nil))
	require.Equal(t, []string{"listPets", "createPet"}, list(g, map[string]string{HeaderToolsets: "pets"}))
	require.Equal(t, []string{"listPets", "createPet", "getOrder", "deleteOrder"}, list(g, map[string]string{HeaderToolsets: " Pets , store"}))
	require.Equal(t, []string{"listPets", "ping", "getOrder"}, list(g, map[string]string{HeaderReadOnly: "true"}))
	require.Equal(t, []string{"getOrder", "deleteOrder"}, list(g.at("/mcp/x/store"), nil))
	require.Equal(t, []string{"listPets", "getOrder"}, list(g.at("/mcp/x/pets%2Cstore/readonly"), nil))
	require.Equal(t, []string{"listPets", "ping", "getOrder"}, list(g.at("/mcp/readonly"), map[string]string{HeaderReadOnly: "false"}), "false cannot widen a read-only path")
	require.Equal(t, []string{"getOrder", "deleteOrder"}, list(g.at("/mcp/x/pets,store"), map[string]string{HeaderToolsets: "store"}), "path and header: what both name")

	for _, c := range []struct {
		g    *testGateway
		h    map[string]string
		want string
	}{
		{g, map[string]string{HeaderToolsets: "pets,nope"}, `unknown toolset \"nope\"`},
		{g.at("/mcp/x/nope"), nil, `the path: unknown toolset \"nope\"`},
		{g, map[string]string{HeaderReadOnly: "maybe"}, "X-MCP-Readonly must be true or false"},
		{g, map[string]string{HeaderToolMode: "everything"}, `unknown tool mode \"everything\"`},
		{g, map[string]string{HeaderSchemaRefs: "flat"}, `unknown schema dialect \"flat\"`},
		{g.at("/mcp/x/pets"), map[string]string{HeaderToolsets: "store"}, "name no toolset in common"},
	} {
		r := c.g.modern(t, 1, "tools/list", "", c.h)
		require.Equal(t, http.StatusBadRequest, r.status, "%v: %s", c.h, r.body)
		require.Contains(t, string(r.body), c.want)
	}

	// A call outside the connection's surface is a call of no tool.
	r := modernCall(t, g, "deleteOrder", `{"id":"1"}`, map[string]string{HeaderReadOnly: "true"})
	require.Equal(t, -32602, r.errCode(t))
	require.Contains(t, string(r.body), `Unknown tool: \"deleteOrder\"`)
	r = modernCall(t, g, "getOrder", `{"id":"7"}`, map[string]string{HeaderToolsets: "store", HeaderReadOnly: "true"})
	text, isErr := callText(t, r)
	require.False(t, isErr, text)
	require.Contains(t, text, "/store/orders/7")
}

func TestOperatorToolsetsCannotBeWidened(t *testing.T) {
	g := newGatewayFor(t, Config{ToolsetsEnabled: []string{"pets"}}, []byte(surfaceDoc), surfaceBackend(t))
	r := g.modern(t, 1, "tools/list", "", nil)
	require.Equal(t, []string{"listPets", "createPet"}, toolNames(t, r))
	r = g.modern(t, 1, "tools/list", "", map[string]string{HeaderToolsets: "store"})
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Contains(t, string(r.body), `unknown toolset \"store\" (served: pets)`)
	r = modernCall(t, g, "getOrder", `{"id":"1"}`, nil)
	require.Contains(t, string(r.body), `Unknown tool: \"getOrder\"`, "a tool outside the served toolsets cannot be called")

	// A session keeps what its initialize chose; a later header cannot widen it.
	r = g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		headers: map[string]string{HeaderReadOnly: "true"}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	sid := r.header.Get("Mcp-Session-Id")
	r = g.do(t, exchange{body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		headers: map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18", HeaderReadOnly: "false", HeaderToolsets: "pets,store"}})
	require.Equal(t, []string{"listPets"}, toolNames(t, r))

	r = g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		headers: map[string]string{HeaderToolsets: "store"}})
	require.Equal(t, http.StatusBadRequest, r.status, "initialize with a toolset not served")
}

func TestToolsetsModeAcrossReplicas(t *testing.T) {
	backend := surfaceBackend(t)
	deps := Deps{Store: sessions.NewMemory(sessions.Limits{TTL: time.Hour}), Bus: pubsub.NewMemory()}
	cfg := Config{ToolMode: "toolsets"}
	a := newGatewayWith(t, cfg, deps, []byte(surfaceDoc), backend)
	b := newGatewayWith(t, cfg, deps, []byte(surfaceDoc), backend)
	sid := a.initialize(t, "2025-11-25")
	listOn := func(g *testGateway) []string {
		return toolNames(t, g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`))
	}
	meta := []string{"list_available_toolsets", "get_toolset_tools", "enable_toolset"}
	require.Equal(t, meta, listOn(b))
	// b caches the session record before a changes it.
	callOn := func(g *testGateway, name, args string) map[string]any {
		r := g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`)
		return r.result(t)
	}
	avail := callOn(a, "list_available_toolsets", `{}`)["structuredContent"].(map[string]any)["toolsets"].([]any)
	require.Len(t, avail, 3)
	require.Equal(t, map[string]any{"name": "pets", "description": "Pets for sale.", "tools": float64(2), "enabled": false}, avail[0])
	tt := callOn(a, "get_toolset_tools", `{"toolset":"store"}`)["structuredContent"].(map[string]any)["tools"].([]any)
	require.Len(t, tt, 2)

	r := b.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"getOrder","arguments":{"id":"1"}}}`)
	require.Contains(t, string(r.body), `Tool \"getOrder\" is not enabled: enable a toolset that has it (store) with enable_toolset`)

	res := callOn(a, "enable_toolset", `{"toolset":"store"}`)
	require.Equal(t, true, res["structuredContent"].(map[string]any)["changed"], "%v", res)
	require.Equal(t, append(meta, "getOrder", "deleteOrder"), listOn(b), "the next tools/list through another replica has it")
	text, isErr := callText(t, b.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"getOrder","arguments":{"id":"9"}}}`))
	require.False(t, isErr, text)
	require.Equal(t, false, callOn(b, "enable_toolset", `{"toolset":"store"}`)["structuredContent"].(map[string]any)["changed"])

	// One list_changed on the session's stream.
	evs, err := deps.Store.ReadAfter(context.Background(), sid, "", 100)
	require.NoError(t, err)
	n := 0
	for _, ev := range evs {
		if strings.Contains(string(ev.Data), "notifications/tools/list_changed") {
			n++
		}
	}
	require.Equal(t, 1, n)

	res = callOn(a, "enable_toolset", `{"toolset":"nope"}`)
	require.Equal(t, true, res["isError"])
	require.Contains(t, res["content"].([]any)[0].(map[string]any)["text"], `no toolset named "nope"; it is one of: pets, store, default`)
}

func TestToolsetsModeStateless(t *testing.T) {
	g := newGatewayFor(t, Config{}, []byte(surfaceDoc), surfaceBackend(t))
	h := map[string]string{HeaderToolMode: "toolsets", HeaderToolsets: "pets"}
	r := g.modern(t, 1, "tools/list", "", h)
	require.Equal(t, []string{"list_available_toolsets", "get_toolset_tools", "enable_toolset", "listPets", "createPet"}, toolNames(t, r))
	text, isErr := callText(t, modernCall(t, g, "enable_toolset", `{"toolset":"store"}`, h))
	require.True(t, isErr)
	require.Contains(t, text, "X-MCP-Toolsets: store")
	require.Contains(t, text, "/x/store")
}

func TestSearchMode(t *testing.T) {
	g := newGatewayFor(t, Config{ToolMode: "search"}, []byte(surfaceDoc), surfaceBackend(t))
	r := g.modern(t, 1, "tools/list", "", nil)
	require.Equal(t, []string{"search_operations", "describe_operation", "call_operation"}, toolNames(t, r))

	res := modernCall(t, g, "search_operations", `{"query":"delete an order","limit":2}`, nil).result(t)
	ops := res["structuredContent"].(map[string]any)["operations"].([]any)
	require.NotEmpty(t, ops)
	require.LessOrEqual(t, len(ops), 2)
	require.Equal(t, map[string]any{"name": "deleteOrder", "method": "DELETE", "path": "/store/orders/{id}", "summary": "Delete an order"}, ops[0])

	res = modernCall(t, g, "describe_operation", `{"name":"createPet"}`, nil).result(t)
	d := res["structuredContent"].(map[string]any)
	require.Equal(t, "POST", d["method"])
	require.Contains(t, string(mustJSON(t, d["inputSchema"])), `"$defs"`)
	res = modernCall(t, g, "describe_operation", `{"name":"createPet"}`, map[string]string{HeaderSchemaRefs: "inline"}).result(t)
	require.NotContains(t, string(mustJSON(t, res["structuredContent"].(map[string]any)["inputSchema"])), `$ref`)

	text, isErr := callText(t, modernCall(t, g, "call_operation", `{"name":"getOrder","arguments":{"id":"42"}}`, nil))
	require.False(t, isErr, text)
	require.Contains(t, text, "/store/orders/42")
	text, isErr = callText(t, modernCall(t, g, "call_operation", `{"name":"getOrder","arguments":{}}`, nil))
	require.True(t, isErr, "validated exactly like a direct call")
	require.Contains(t, text, "id")
	r = modernCall(t, g, "call_operation", `{"name":"deleteOrder","arguments":{"id":"1"}}`, map[string]string{HeaderReadOnly: "true"})
	require.Contains(t, string(r.body), `Unknown tool: \"deleteOrder\"`, "call_operation runs only what the connection is served")
	text, isErr = callText(t, modernCall(t, g, "call_operation", `{"arguments":{}}`, nil))
	require.True(t, isErr)
	require.Contains(t, text, "needs the operation's name")
	// Read-only narrows search too.
	res = modernCall(t, g, "search_operations", `{"query":"delete an order"}`, map[string]string{HeaderReadOnly: "true"}).result(t)
	for _, op := range res["structuredContent"].(map[string]any)["operations"].([]any) {
		require.NotEqual(t, "deleteOrder", op.(map[string]any)["name"])
	}
}

func TestInlineSchemaRefs(t *testing.T) {
	g := newGatewayFor(t, Config{SchemaRefs: "inline"}, []byte(surfaceDoc), surfaceBackend(t))
	r := g.modern(t, 1, "tools/list", "", nil)
	require.NotContains(t, string(r.body), `$ref`)
	require.NotContains(t, string(r.body), `$defs`)
	r = g.modern(t, 1, "tools/list", "", map[string]string{HeaderSchemaRefs: "defs"})
	require.Contains(t, string(r.body), `$defs`, "a connection may ask for the other dialect")
}

// A 2024-11-05 session is served what its stream's GET chose.
func TestSurfaceOfALegacySession(t *testing.T) {
	g := newGatewayFor(t, Config{}, []byte(surfaceDoc), surfaceBackend(t))
	s := g.openLegacy(t, "", map[string]string{HeaderReadOnly: "true", HeaderToolsets: "store"})
	legacyInit(t, g, s, "2024-11-05")
	require.Equal(t, http.StatusAccepted, g.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`).status)
	m, _ := s.response(t, 2)
	var names []string
	for _, tl := range m["result"].(map[string]any)["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	require.Equal(t, []string{"getOrder"}, names)
}

// What a connection is not served as a tool it cannot reach through a
// prompt, a resource or completion either; nor can the operator's
// toolsets_enabled be got round that way.
func TestSurfaceBoundsPromptsAndResources(t *testing.T) {
	var hits []string
	var mu sync.Mutex
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(hs.Close)
	prompt := DeclaredPrompt{Name: "cancel", Messages: []prompts.Message{{Role: "user", Operation: &prompts.Operation{Name: "deleteOrder", Arguments: map[string]string{"id": "1"}}}}}
	g := newGatewayFor(t, Config{Prompts: []DeclaredPrompt{prompt}}, []byte(surfaceDoc), hs.URL)

	listPrompts := func(h map[string]string) int {
		return len(g.modern(t, 1, "prompts/list", "", h).result(t)["prompts"].([]any))
	}
	require.Equal(t, 1, listPrompts(nil))
	require.Equal(t, 0, listPrompts(map[string]string{HeaderReadOnly: "true"}), "a prompt that runs a DELETE is not served read-only")
	require.Equal(t, 0, listPrompts(map[string]string{HeaderToolsets: "pets"}))
	r := g.modern(t, 2, "prompts/get", `"name":"cancel"`, map[string]string{HeaderReadOnly: "true", "Mcp-Name": "cancel"})
	require.NotContains(t, string(r.body), `"result"`, "%s", r.body)
	mu.Lock()
	require.Empty(t, hits, "the backend saw nothing")
	mu.Unlock()

	// The operator's toolsets bound prompts as they bound tools.
	g = newGatewayFor(t, Config{Prompts: []DeclaredPrompt{prompt}, ToolsetsEnabled: []string{"pets"}}, []byte(surfaceDoc), hs.URL)
	require.Equal(t, 0, len(g.modern(t, 1, "prompts/list", "", nil).result(t)["prompts"].([]any)))
	r = g.modern(t, 2, "prompts/get", `"name":"cancel"`, map[string]string{"Mcp-Name": "cancel"})
	require.NotContains(t, string(r.body), `"result"`, "%s", r.body)
	// …and the whole document is not shown where only part is served.
	res := g.modern(t, 3, "resources/list", "", nil).result(t)
	require.NotContains(t, string(mustJSON(t, res)), `"uri":"gateway://openapi"`)
	mu.Lock()
	require.Empty(t, hits)
	mu.Unlock()
}

// A session opened for some toolsets cannot enable others.
func TestEnableToolsetStaysWithinTheConnection(t *testing.T) {
	g := newGatewayFor(t, Config{ToolMode: "toolsets"}, []byte(surfaceDoc), surfaceBackend(t))
	r := g.at("/mcp/x/pets").do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	sid := r.header.Get("Mcp-Session-Id")
	p := g.at("/mcp/x/pets")
	call := func(name, args string) reply {
		return p.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`)
	}
	text, isErr := callText(t, call("enable_toolset", `{"toolset":"store"}`))
	require.True(t, isErr)
	require.Contains(t, text, "toolset store is not available on this connection: it was opened for pets only")
	require.Contains(t, string(call("deleteOrder", `{"id":"1"}`).body), `Unknown tool: \"deleteOrder\"`)
	avail := call("list_available_toolsets", `{}`).result(t)["structuredContent"].(map[string]any)["toolsets"].([]any)
	require.Len(t, avail, 1)
	require.Equal(t, true, avail[0].(map[string]any)["enabled"], "named toolsets are enabled from the start")
	require.Equal(t, []string{"list_available_toolsets", "get_toolset_tools", "enable_toolset", "listPets", "createPet"},
		toolNames(t, p.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)))
}

// call_operation is a call of the operation in the audit log too: its
// name, its own arguments (redacted), its backend status.
func TestCallOperationIsAuditedAsTheOperation(t *testing.T) {
	var buf syncBuffer
	w, err := audit.New(audit.Config{Output: &buf, Replica: "r1"})
	require.NoError(t, err)
	g := newGatewayWith(t, Config{ToolMode: "search", API: "shop"}, Deps{Audit: w}, []byte(surfaceDoc), surfaceBackend(t))
	text, isErr := callText(t, modernCall(t, g, "call_operation", `{"name":"getOrder","arguments":{"id":"5"}}`, nil))
	require.False(t, isErr, text)
	modernCall(t, g, "search_operations", `{"query":"order"}`, nil)
	require.NoError(t, w.Close())
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2, buf.String())
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &m))
	require.Equal(t, "getOrder", m["tool"])
	require.Equal(t, "shop", m["api"])
	require.Equal(t, map[string]any{"id": "5"}, m["arguments"])
	require.Equal(t, float64(200), m["backend_status"])
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &m))
	require.Equal(t, "search_operations", m["tool"])
}
