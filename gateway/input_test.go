package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/mcp-gateway/internal/inputtest"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/sessions/pending"
)

// inputDoc is the document of the shared input backend (internal/inputtest).
const inputDoc = inputtest.Doc

// newInputBackend starts the shared input backend; it returns its URL too.
func newInputBackend(t *testing.T) (*inputtest.Backend, string) {
	b := inputtest.Start(t)
	return b, b.URL
}

// inputClient is the shared Go SDK client (inputtest.Client).
func inputClient(t *testing.T, url, version string, decline bool) *sdk.ClientSession {
	t.Helper()
	return inputtest.Client(t, url, version, decline, nil)
}

// text is a result's text (inputtest.Text).
func text(res *sdk.CallToolResult) string { return inputtest.Text(res) }

// TestInputFromTheClient: the Go SDK client completes confirmed, declined
// and backend-driven calls in both eras (in-band requests in a session,
// input_required and retries in 2026-07-28).
func TestInputFromTheClient(t *testing.T) {
	backend, base := newInputBackend(t)
	g := newGatewayFor(t, Config{MaxInputRounds: 3}, []byte(inputDoc), base)
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		name := version
		if name == "" {
			name = "2026-07-28"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs := inputClient(t, g.url, version, false)
			call := func(tool string, args map[string]any) *sdk.CallToolResult {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
				require.NoError(t, err)
				return res
			}

			before := backend.Count("DELETE /pets/7")
			res := call("deletePet", map[string]any{"id": 7})
			require.False(t, res.IsError, text(res))
			require.Equal(t, before+1, backend.Count("DELETE /pets/7"), "confirmed: the backend got the request")

			res = call("adopt", map[string]any{"pet": "Rex"})
			require.False(t, res.IsError, text(res))
			require.Equal(t, map[string]any{"pet": "Rex", "owner": "Ada"}, res.StructuredContent)

			res = call("think", nil)
			require.False(t, res.IsError, text(res))
			require.Equal(t, "the model says 42", text(res))

			res = call("whereAmI", nil)
			require.False(t, res.IsError, text(res))
			require.Contains(t, text(res), "file:///work/project")

			res = call("again", nil)
			require.True(t, res.IsError)
			require.Contains(t, text(res), "more than 3 times")

			declining := inputClient(t, g.url, version, true)
			before = backend.Count("DELETE /pets/8")
			res, err := declining.CallTool(ctx, &sdk.CallToolParams{Name: "deletePet", Arguments: map[string]any{"id": 8}})
			require.NoError(t, err)
			require.True(t, res.IsError)
			require.Contains(t, text(res), "declined")
			require.Contains(t, text(res), "DELETE /pets/{id} with id=8")
			require.Equal(t, before, backend.Count("DELETE /pets/8"), "declined: the backend saw nothing")
		})
	}
	require.Contains(t, backend.States(), "step-1", "the backend's requestState came back")
}

// callStream is a session-era POST whose SSE answer is read as it comes.
type callStream struct {
	resp   *http.Response
	events chan map[string]any
	cancel context.CancelFunc
}

// openCall posts body in session sid and reads its answer's messages.
func openCall(t *testing.T, url, sid, body string) *callStream {
	t.Helper()
	resp, cancel := sendStreamRequest(t, http.MethodPost, url, body, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
	cs := &callStream{resp: resp, events: make(chan map[string]any, 16), cancel: cancel}
	go func() {
		defer close(cs.events)
		defer resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			var m map[string]any
			if json.NewDecoder(resp.Body).Decode(&m) == nil {
				cs.events <- m
			}
			return
		}
		for ev := range readRaw(resp.Body) {
			var m map[string]any
			if strings.TrimSpace(ev.data) != "" && json.Unmarshal([]byte(ev.data), &m) == nil {
				cs.events <- m
			}
		}
	}()
	t.Cleanup(cancel)
	return cs
}

// next is the next message that is not a notification.
func (c *callStream) next(t *testing.T) map[string]any {
	t.Helper()
	for {
		select {
		case m, ok := <-c.events:
			require.True(t, ok, "the stream ended")
			if _, isReq := m["method"]; isReq && m["id"] == nil {
				continue // a notification
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no message on the call's stream")
		}
	}
}

// elicitingSession opens a 2025-11-25 session that declares elicitation.
func elicitingSession(t *testing.T, g *testGateway) string {
	t.Helper()
	r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{"elicitation":{},"sampling":{}},"clientInfo":{"name":"test","version":"1"}}}`})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return r.header.Get("Mcp-Session-Id")
}

// answer posts the response to a server→client request.
func answerRequest(t *testing.T, g *testGateway, sid string, req map[string]any, result string) reply {
	t.Helper()
	id, err := json.Marshal(req["id"])
	require.NoError(t, err)
	return g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":`+string(id)+`,"result":`+result+`}`)
}

// sharedPair is two gateways (replicas a and b) sharing one store, bus
// and pending store.
func sharedPair(t *testing.T, cfg Config, base string) (a, b *testGateway) {
	deps := Deps{Store: sessions.NewMemory(sessions.Limits{TTL: StoreTTL(30 * time.Minute)}), Bus: pubsub.NewMemory(), Pending: pending.NewMemory()}
	ca, cb := cfg, cfg
	ca.Replica, cb.Replica = "a", "b"
	a = newGatewayWith(t, ca, deps, []byte(inputDoc), base)
	b = newGatewayWith(t, cb, deps, []byte(inputDoc), base)
	<-a.srv.Listening()
	<-b.srv.Listening()
	return a, b
}

// TestInputAcrossReplicas: the call runs on replica a; the client's
// answer, its cancel and its DELETE reach replica b.
func TestInputAcrossReplicas(t *testing.T) {
	backend, base := newInputBackend(t)
	a, b := sharedPair(t, Config{}, base)

	t.Run("confirmation answered through the other replica", func(t *testing.T) {
		sid := elicitingSession(t, a)
		c := openCall(t, a.url, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"deletePet","arguments":{"id":11}}}`)
		req := c.next(t)
		require.Equal(t, "elicitation/create", req["method"])
		require.Contains(t, req["params"].(map[string]any)["message"], "DELETE /pets/{id} with id=11")
		require.Equal(t, 0, backend.Count("DELETE /pets/11"), "nothing is sent before the user confirms")
		r := answerRequest(t, b, sid, req, `{"action":"accept","content":{"confirm":true}}`)
		require.Equal(t, http.StatusAccepted, r.status)
		res := c.next(t)
		require.Equal(t, float64(5), res["id"])
		require.NotEqual(t, true, res["result"].(map[string]any)["isError"], "%v", res)
		require.Equal(t, 1, backend.Count("DELETE /pets/11"))
	})

	t.Run("an answer nobody waits for is dropped", func(t *testing.T) {
		sid := elicitingSession(t, b)
		c := openCall(t, b.url, sid, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"adopt","arguments":{"pet":"Zed"}}}`)
		req := c.next(t)
		// Ids nobody waits for, and the right id in another session: 202,
		// and the waiting call goes on waiting.
		other := elicitingSession(t, a)
		id, _ := json.Marshal(req["id"])
		for _, tc := range []struct{ sid, id string }{{sid, `"mcpgw-nobody"`}, {sid, `7`}, {sid, `"other"`}, {other, string(id)}} {
			r := a.sessionCall(t, tc.sid, "2025-11-25", `{"jsonrpc":"2.0","id":`+tc.id+`,"result":{"action":"accept","content":{"name":"Mallory"}}}`)
			require.Equal(t, http.StatusAccepted, r.status)
		}
		b.srv.waitersMu.Lock()
		waiting := len(b.srv.waiters)
		b.srv.waitersMu.Unlock()
		require.Equal(t, 1, waiting, "the call still waits for its own answer")
		answerRequest(t, a, sid, req, `{"action":"accept","content":{"name":"Ada"}}`)
		require.Equal(t, "Ada", c.next(t)["result"].(map[string]any)["structuredContent"].(map[string]any)["owner"])
	})

	t.Run("cancel through the other replica mid-elicitation", func(t *testing.T) {
		sid := elicitingSession(t, a)
		before := backend.Count("POST /adopt")
		c := openCall(t, a.url, sid, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"adopt","arguments":{"pet":"Tom"}}}`)
		req := c.next(t)
		require.Equal(t, "elicitation/create", req["method"])
		r := b.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`)
		require.Equal(t, http.StatusAccepted, r.status)
		for m := range c.events {
			require.NotEqual(t, float64(6), m["id"], "a cancelled call has no response: %v", m)
		}
		// The late answer is dropped, and the backend never got the repeat.
		require.Equal(t, http.StatusAccepted, answerRequest(t, b, sid, req, `{"action":"accept","content":{"name":"x"}}`).status)
		require.Equal(t, before+1, backend.Count("POST /adopt"))
	})

	t.Run("DELETE through the other replica ends the waiting call", func(t *testing.T) {
		sid := elicitingSession(t, a)
		c := openCall(t, a.url, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"think"}}`)
		require.Equal(t, "sampling/createMessage", c.next(t)["method"])
		r := b.do(t, exchange{method: http.MethodDelete, headers: map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}})
		require.Equal(t, http.StatusOK, r.status)
		res := c.next(t)
		require.Equal(t, true, res["result"].(map[string]any)["isError"])
		require.Contains(t, fmt.Sprint(res["result"]), "session ended")
	})
}

// TestInputBounds: the wait for an answer has a timeout, a session a cap
// on waiting requests, and a client without the capability is told.
func TestInputBounds(t *testing.T) {
	_, base := newInputBackend(t)
	g := newGatewayFor(t, Config{ServerRequestTimeout: 300 * time.Millisecond, MaxPendingPerSession: 1}, []byte(inputDoc), base)

	t.Run("timeout", func(t *testing.T) {
		sid := elicitingSession(t, g)
		c := openCall(t, g.url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"adopt","arguments":{"pet":"Rex"}}}`)
		req := c.next(t)
		require.Equal(t, "elicitation/create", req["method"])
		var cancelled map[string]any
		var res map[string]any
		for m := range c.events {
			if m["method"] == "notifications/cancelled" {
				cancelled = m
			}
			if m["id"] == float64(2) {
				res = m["result"].(map[string]any)
			}
		}
		require.NotNil(t, cancelled, "the client is told the gateway stopped waiting")
		require.Equal(t, req["id"], cancelled["params"].(map[string]any)["requestId"])
		require.Equal(t, true, res["isError"])
		require.Contains(t, fmt.Sprint(res["content"]), "did not answer")
	})

	t.Run("one pending request more than the cap is refused", func(t *testing.T) {
		g := newGatewayFor(t, Config{MaxPendingPerSession: 1}, []byte(inputDoc), base)
		sid := elicitingSession(t, g)
		first := openCall(t, g.url, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"adopt","arguments":{"pet":"A"}}}`)
		req := first.next(t)
		second := openCall(t, g.url, sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"adopt","arguments":{"pet":"B"}}}`)
		res := second.next(t)["result"].(map[string]any)
		require.Equal(t, true, res["isError"])
		require.Contains(t, fmt.Sprint(res["content"]), "already has 1 requests")
		answerRequest(t, g, sid, req, `{"action":"accept","content":{"name":"Ada"}}`)
		require.NotEqual(t, true, first.next(t)["result"].(map[string]any)["isError"])
	})

	t.Run("a client without the capability", func(t *testing.T) {
		sid := g.initialize(t, "2025-11-25") // declares nothing
		r := g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"think"}}`)
		res := r.result(t)
		require.Equal(t, true, res["isError"])
		require.Contains(t, fmt.Sprint(res["content"]), "no sampling capability")

		r = g.modern(t, 6, "tools/call", `"name":"think"`, map[string]string{"Mcp-Name": "think"})
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Equal(t, -32021, r.errCode(t))
		require.Contains(t, string(r.body), `"requiredCapabilities":{"sampling":{}}`)
	})
}

// statelessCall posts a 2026-07-28 tools/call with caps and extra params.
func statelessCall(t *testing.T, g *testGateway, id int, name, args, extra string, headers map[string]string) reply {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":` + fmt.Sprint(id) + `,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}},"name":"` + name + `","arguments":` + args + extra + `}}`
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
	for k, v := range headers {
		h[k] = v
	}
	return g.do(t, exchange{body: body, headers: h})
}

// TestRequestStateIsSealedAndSingleUse: 2026-07-28 retries on another
// replica; replayed, tampered, foreign and mismatched states are refused.
func TestRequestStateIsSealedAndSingleUse(t *testing.T) {
	backend, base := newInputBackend(t)
	a, b := sharedPair(t, Config{}, base)

	first := statelessCall(t, a, 1, "deletePet", `{"id":21}`, "", nil).result(t)
	require.Equal(t, "input_required", first["resultType"])
	state := first["requestState"].(string)
	require.Contains(t, first["inputRequests"], "confirm")
	yes := `,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"` + state + `"`

	t.Run("missing answers ask again", func(t *testing.T) {
		r := statelessCall(t, b, 2, "deletePet", `{"id":21}`, `,"inputResponses":{},"requestState":"`+state+`"`, nil).result(t)
		require.Equal(t, "input_required", r["resultType"])
		state = r["requestState"].(string) // the first one is spent
		yes = `,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"` + state + `"`
	})
	t.Run("other params", func(t *testing.T) {
		r := statelessCall(t, b, 3, "deletePet", `{"id":22}`, yes, nil)
		require.Equal(t, -32602, r.errCode(t))
		require.Contains(t, string(r.body), "another request")
	})
	t.Run("tampered", func(t *testing.T) {
		bad := []byte(state)
		bad[len(bad)/2] ^= 1
		if bad[len(bad)/2] == state[len(state)/2] {
			bad[len(bad)/2] = 'A'
		}
		r := statelessCall(t, b, 4, "deletePet", `{"id":21}`, strings.Replace(yes, state, string(bad), 1), nil)
		require.Equal(t, -32602, r.errCode(t))
	})
	t.Run("retry on the other replica completes", func(t *testing.T) {
		require.Equal(t, 0, backend.Count("DELETE /pets/21"))
		r := statelessCall(t, b, 5, "deletePet", `{"id":21}`, yes, nil).result(t)
		require.Equal(t, "complete", r["resultType"])
		require.NotEqual(t, true, r["isError"], "%v", r)
		require.Equal(t, 1, backend.Count("DELETE /pets/21"))
	})
	t.Run("replayed", func(t *testing.T) {
		r := statelessCall(t, a, 6, "deletePet", `{"id":21}`, yes, nil)
		require.Equal(t, -32602, r.errCode(t))
		require.Contains(t, string(r.body), "already used")
		require.Equal(t, 1, backend.Count("DELETE /pets/21"), "a replay never reaches the backend")
	})
}

// TestCancelOnDisconnect: a session-era client that closes its POST
// cancels its call (the backend never gets the repeat); with
// KeepCallsOnDisconnect the call goes on.
func TestCancelOnDisconnect(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep=%v", keep), func(t *testing.T) {
			backend, base := newInputBackend(t)
			g := newGatewayFor(t, Config{KeepCallsOnDisconnect: keep}, []byte(inputDoc), base)
			sid := elicitingSession(t, g)
			c := openCall(t, g.url, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"adopt","arguments":{"pet":"Rex"}}}`)
			req := c.next(t)
			require.Equal(t, "elicitation/create", req["method"])
			c.cancel() // the client goes away
			for range c.events {
			}
			id, _ := json.Marshal(req["id"])
			answer := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"action":"accept","content":{"name":"Ada"}}}`
			if !keep {
				// The call stopped waiting: its answer is dropped.
				// After the resume grace (the client did not come back).
				require.Eventually(t, func() bool {
					g.srv.waitersMu.Lock()
					defer g.srv.waitersMu.Unlock()
					return len(g.srv.waiters) == 0
				}, 20*time.Second, 5*time.Millisecond)
				require.Equal(t, http.StatusAccepted, g.sessionCall(t, sid, "2025-11-25", answer).status)
				require.Equal(t, 1, backend.Count("POST /adopt"), "the backend never got the repeat")
				return
			}
			require.Equal(t, http.StatusAccepted, g.sessionCall(t, sid, "2025-11-25", answer).status)
			require.Eventually(t, func() bool { return backend.Count("POST /adopt") == 2 }, 5*time.Second, 5*time.Millisecond,
				"the call went on and repeated the request with the answer")
		})
	}
}

// TestStateKeyChangedUnderAReplica: a replica whose cached key is no
// longer the deployment's (Redis lost it, another replica made a new one)
// reads the key again instead of refusing every state.
func TestStateKeyChangedUnderAReplica(t *testing.T) {
	_, base := newInputBackend(t)
	a, b := sharedPair(t, Config{}, base)
	stale, err := mrtr.NewSealer(make([]byte, mrtr.KeyLen)) // all zeros: not the shared key
	require.NoError(t, err)
	b.srv.stateSealer.Store(stale)

	first := statelessCall(t, a, 1, "deletePet", `{"id":31}`, "", nil).result(t)
	state := first["requestState"].(string)
	yes := `,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"` + state + `"`
	r := statelessCall(t, b, 2, "deletePet", `{"id":31}`, yes, nil).result(t)
	require.Equal(t, "complete", r["resultType"], "%v", r)
	require.False(t, b.srv.stateSealer.Load().SameKey(stale), "b now holds the deployment's key")
}

// TestWaitingCallsHoldNoSlot: a call waiting for the user gives its
// running-call slot back, so max_concurrent_calls counts backend work.
func TestWaitingCallsHoldNoSlot(t *testing.T) {
	_, base := newInputBackend(t)
	g := newGatewayFor(t, Config{MaxConcurrentCalls: 1}, []byte(inputDoc), base)
	sid := elicitingSession(t, g)
	first := openCall(t, g.url, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"adopt","arguments":{"pet":"A"}}}`)
	req1 := first.next(t)
	require.Equal(t, "elicitation/create", req1["method"])
	second := openCall(t, g.url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"adopt","arguments":{"pet":"B"}}}`)
	req2 := second.next(t)
	require.Equal(t, "elicitation/create", req2["method"], "the second call ran while the first waited: %v", req2)
	answerRequest(t, g, sid, req1, `{"action":"accept","content":{"name":"Ada"}}`)
	answerRequest(t, g, sid, req2, `{"action":"accept","content":{"name":"Bob"}}`)
	require.Equal(t, "A", first.next(t)["result"].(map[string]any)["structuredContent"].(map[string]any)["pet"])
	require.Equal(t, "B", second.next(t)["result"].(map[string]any)["structuredContent"].(map[string]any)["pet"])
}

// TestRequestStateIsBoundToThePrincipal: a state issued to one caller is
// refused for another, and stays usable by its own caller.
func TestRequestStateIsBoundToThePrincipal(t *testing.T) {
	backend, base := newInputBackend(t)
	g := newGatewayWith(t, Config{}, Deps{Auth: tokenAuth{}}, []byte(inputDoc), base)
	rita := map[string]string{"Authorization": "Bearer rita"}
	first := statelessCall(t, g, 1, "deletePet", `{"id":41}`, "", rita).result(t)
	yes := `,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"` + first["requestState"].(string) + `"`
	r := statelessCall(t, g, 2, "deletePet", `{"id":41}`, yes, map[string]string{"Authorization": "Bearer nina"})
	require.Equal(t, -32602, r.errCode(t))
	require.Contains(t, string(r.body), "another caller")
	require.Equal(t, 0, backend.Count("DELETE /pets/41"))
	done := statelessCall(t, g, 3, "deletePet", `{"id":41}`, yes, rita).result(t)
	require.Equal(t, "complete", done["resultType"], "%v", done)
	require.Equal(t, 1, backend.Count("DELETE /pets/41"))
}

// TestResumedStreamIsNotADisconnect: a 2025-11-25 client that drops its
// POST stream mid-elicitation and resumes it (GET + Last-Event-ID) within
// the grace keeps its call: the request is replayed, its answer completes
// the call, and the result arrives on the resumed stream.
func TestResumedStreamIsNotADisconnect(t *testing.T) {
	backend, base := newInputBackend(t)
	g := newGatewayFor(t, Config{}, []byte(inputDoc), base)
	sid := elicitingSession(t, g)
	h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	post := openRaw(t, http.MethodPost, g.url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"adopt","arguments":{"pet":"Rex"}}}`, h)
	primer := post.next(t)
	require.True(t, primer.hasID && primer.data == "", "a priming event first: %+v", primer)
	require.Contains(t, post.nextMessage(t).data, "elicitation/create")
	post.close() // the network drops

	get := openRaw(t, http.MethodGet, g.url, "", map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25",
		"Accept": "text/event-stream", "Last-Event-ID": primer.id})
	var req map[string]any
	require.NoError(t, json.Unmarshal([]byte(get.nextMessage(t).data), &req))
	require.Equal(t, "elicitation/create", req["method"], "the request is replayed on the resumed stream")
	// Past the grace: a call its client came back for is not cancelled.
	time.Sleep(g.srv.resumeGrace() + 500*time.Millisecond)
	answerRequest(t, g, sid, req, `{"action":"accept","content":{"name":"Ada"}}`)
	res := get.nextMessage(t)
	require.Contains(t, res.data, `"owner": "Ada"`)
	require.Equal(t, 2, backend.Count("POST /adopt"), "the call repeated the request with the answer")
}
