package e2e

// Issue 14's proof: input from the client in the middle of a call —
// confirmation, backend-driven elicitation and sampling — and progress from
// streaming and asynchronous backends, on 3 replicas of the real binary
// behind the round-robin proxy, with the official Go SDK client and raw
// HTTP, in both eras.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/inputtest"
)

// startInputBackend runs the shared input backend (internal/inputtest)
// with its document in a file, for the replicas to load.
func startInputBackend(t *testing.T) (*inputtest.Backend, string) {
	t.Helper()
	b := inputtest.Start(t)
	doc := filepath.Join(t.TempDir(), "input.yaml")
	require.NoError(t, os.WriteFile(doc, []byte(inputtest.Doc), 0o600))
	return b, doc
}

func TestInputAcrossReplicasE2E(t *testing.T) {
	for _, kind := range redisKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			redisURL, rdb := kind.redis(t)
			backend, doc := startInputBackend(t)
			env := newReplicaEnv(t, &replicaBackend{URL: backend.URL, doc: doc}, redisURL, rdb, 3,
				"--server-request-timeout", "3s")
			t.Run("Go SDK clients through the proxy", func(t *testing.T) { testSDKInput(t, env, backend) })
			t.Run("the answer lands on another replica", func(t *testing.T) { testAnswerElsewhere(t, env, backend) })
			t.Run("timeout, and the 101st pending request", func(t *testing.T) { testPendingBounds(t, env) })
			t.Run("2026-07-28 retries on other replicas", func(t *testing.T) { testStatelessRetries(t, env, backend) })
		})
	}
}

func testSDKInput(t *testing.T, env *replicaEnv, backend *inputtest.Backend) {
	for i, version := range []string{"2025-11-25", ""} {
		name := version
		if name == "" {
			name = "2026-07-28"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var mu sync.Mutex
			var progress []string
			cs := inputtest.Client(t, env.proxy.URL, version, false, func(p *mcp.ProgressNotificationParams) {
				mu.Lock()
				progress = append(progress, p.Message)
				mu.Unlock()
			})
			call := func(tool string, args map[string]any) *mcp.CallToolResult {
				params := &mcp.CallToolParams{Name: tool, Arguments: args}
				params.SetProgressToken(tool)
				res, err := cs.CallTool(ctx, params)
				require.NoError(t, err)
				return res
			}
			id := 100 + i
			path := fmt.Sprintf("DELETE /pets/%d", id)
			res := call("deletePet", map[string]any{"id": id})
			require.False(t, res.IsError, inputtest.Text(res))
			require.Equal(t, 1, backend.Count(path), "confirmed: the backend got the DELETE once")

			res = call("adopt", map[string]any{"pet": "Rex"})
			require.False(t, res.IsError, inputtest.Text(res))
			require.Equal(t, map[string]any{"pet": "Rex", "owner": "Ada"}, res.StructuredContent)

			res = call("think", nil)
			require.False(t, res.IsError, inputtest.Text(res))
			require.Equal(t, "the model says 42", inputtest.Text(res))

			res = call("report", nil)
			require.False(t, res.IsError, inputtest.Text(res))
			res = call("startJob", nil)
			require.False(t, res.IsError, inputtest.Text(res))
			require.Contains(t, inputtest.Text(res), `"done": true`)
			require.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				all := strings.Join(progress, "|")
				return strings.Contains(all, "part 2 (2 of 3)") && strings.Contains(all, "indexing (1 of 2)")
			}, eventWait, 10*time.Millisecond, "progress from the streaming and the polled backend")

			declining := inputtest.Client(t, env.proxy.URL, version, true, nil)
			id += 10
			path = fmt.Sprintf("DELETE /pets/%d", id)
			res, err := declining.CallTool(ctx, &mcp.CallToolParams{Name: "deletePet", Arguments: map[string]any{"id": id}})
			require.NoError(t, err)
			require.True(t, res.IsError)
			require.Contains(t, inputtest.Text(res), "declined")
			require.Equal(t, 0, backend.Count(path), "declined: the backend saw nothing")
			if version != "" {
				require.Len(t, env.proxy.replicasFor(cs.ID()), 3, "the session's requests reached every replica")
			}
		})
	}
}

// openSessionCall POSTs a call in a 2025-11-25 session that declares
// elicitation and sampling, to url, and streams its answer's events.
type liveCall struct {
	events chan rpcMessage
	done   chan struct{}
}

func (e *replicaEnv) elicitingSession(t *testing.T, url string) string {
	t.Helper()
	r := e.do(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"sampling":{}},"clientInfo":{"name":"e2e","version":"1"}}}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return r.header.Get("Mcp-Session-Id")
}

func (e *replicaEnv) startCall(t *testing.T, url, sid, body string) *liveCall {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := e.stream.Do(req)
	require.NoError(t, err)
	c := &liveCall{events: make(chan rpcMessage, 64), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer close(c.events)
		defer resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			var m rpcMessage
			if json.NewDecoder(resp.Body).Decode(&m) == nil {
				c.events <- m
			}
			return
		}
		_ = readSSE(resp.Body, func(ev pushEvent) bool {
			var m rpcMessage
			if strings.TrimSpace(ev.data) != "" && json.Unmarshal([]byte(ev.data), &m) == nil && (m.Method == "" || m.ID != nil) {
				c.events <- m
			}
			return true
		})
	}()
	return c
}

func (c *liveCall) next(t *testing.T) rpcMessage {
	t.Helper()
	select {
	case m, ok := <-c.events:
		require.True(t, ok, "the call's stream ended")
		return m
	case <-time.After(eventWait):
		t.Fatal("nothing on the call's stream")
	}
	return rpcMessage{}
}

func (e *replicaEnv) answer(t *testing.T, url, sid string, req rpcMessage, result string) {
	t.Helper()
	r := e.sendIn(t, url, sid, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
}

// sendIn posts in a 2025-11-25 session.
func (e *replicaEnv) sendIn(t *testing.T, url, sid, body string) *rawResponse {
	t.Helper()
	r, err := e.sendAs(context.Background(), url, sid, "2025-11-25", body)
	require.NoError(t, err)
	return r
}

func testAnswerElsewhere(t *testing.T, env *replicaEnv, backend *inputtest.Backend) {
	t.Run("confirmation", func(t *testing.T) {
		sid := env.elicitingSession(t, env.url(0))
		c := env.startCall(t, env.url(0), sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"deletePet","arguments":{"id":300}}}`)
		req := c.next(t)
		require.Equal(t, "elicitation/create", req.Method)
		require.Equal(t, 0, backend.Count("DELETE /pets/300"))
		env.answer(t, env.url(1), sid, req, `{"action":"accept","content":{"confirm":true}}`)
		res := c.next(t)
		require.Equal(t, "5", string(res.ID))
		require.NotContains(t, string(res.Result), `"isError":true`)
		require.Equal(t, 1, backend.Count("DELETE /pets/300"))
	})
	t.Run("declined", func(t *testing.T) {
		sid := env.elicitingSession(t, env.url(1))
		c := env.startCall(t, env.url(1), sid, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"deletePet","arguments":{"id":301}}}`)
		env.answer(t, env.url(2), sid, c.next(t), `{"action":"decline"}`)
		res := c.next(t)
		require.Contains(t, string(res.Result), `"isError":true`)
		require.Equal(t, 0, backend.Count("DELETE /pets/301"), "declined: the backend saw nothing")
	})
	t.Run("sampling", func(t *testing.T) {
		sid := env.elicitingSession(t, env.url(2))
		c := env.startCall(t, env.url(2), sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"think"}}`)
		req := c.next(t)
		require.Equal(t, "sampling/createMessage", req.Method)
		env.answer(t, env.url(0), sid, req, `{"role":"assistant","model":"m","content":{"type":"text","text":"42"}}`)
		require.Contains(t, string(c.next(t).Result), "the model says 42")
	})
	t.Run("cancel through another replica mid-elicitation", func(t *testing.T) {
		sid := env.elicitingSession(t, env.url(0))
		before := backend.Count("POST /adopt")
		c := env.startCall(t, env.url(0), sid, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"adopt","arguments":{"pet":"Tom"}}}`)
		req := c.next(t)
		require.Equal(t, "elicitation/create", req.Method)
		r := env.sendIn(t, env.url(1), sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`)
		require.Equal(t, http.StatusAccepted, r.status)
		select {
		case <-c.done:
		case <-time.After(eventWait):
			t.Fatal("the cancelled call did not end")
		}
		env.answer(t, env.url(2), sid, req, `{"action":"accept","content":{"name":"late"}}`)
		require.Equal(t, before+1, backend.Count("POST /adopt"), "the backend never got the repeat")
	})
}

func testPendingBounds(t *testing.T, env *replicaEnv) {
	t.Run("timeout", func(t *testing.T) {
		sid := env.elicitingSession(t, env.url(0))
		c := env.startCall(t, env.url(0), sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"adopt","arguments":{"pet":"Rex"}}}`)
		require.Equal(t, "elicitation/create", c.next(t).Method)
		res := c.next(t)
		require.Contains(t, string(res.Result), `"isError":true`)
		require.Contains(t, string(res.Result), "did not answer")
	})
	t.Run("101st", func(t *testing.T) {
		sid := env.elicitingSession(t, env.url(0))
		var calls []*liveCall
		for i := range 100 {
			c := env.startCall(t, env.proxy.URL, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"think"}}`, 1000+i))
			calls = append(calls, c)
		}
		for _, c := range calls {
			require.Equal(t, "sampling/createMessage", c.next(t).Method)
		}
		extra := env.startCall(t, env.url(1), sid, `{"jsonrpc":"2.0","id":2000,"method":"tools/call","params":{"name":"think"}}`)
		res := extra.next(t)
		require.Contains(t, string(res.Result), `"isError":true`)
		require.Contains(t, string(res.Result), "already has 100 requests")
		// Ending the session ends every waiting call, wherever it runs.
		r, err := env.sendMethod(context.Background(), http.MethodDelete, env.url(2), sid)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.status)
		for _, c := range calls {
			res := c.next(t)
			require.Contains(t, string(res.Result), "session ended")
		}
	})
}

func (e *replicaEnv) stateless(t *testing.T, url string, id int, name, args, extra string) rpcMessage {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}},"name":%q,"arguments":%s%s}}`, id, name, args, extra)
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	r, err := e.roundTrip(req)
	require.NoError(t, err)
	return onlyResponse(t, r, fmt.Sprint(id))
}

func testStatelessRetries(t *testing.T, env *replicaEnv, backend *inputtest.Backend) {
	first := env.stateless(t, env.url(0), 1, "adopt", `{"pet":"Kit"}`, "")
	var ir struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	require.NoError(t, json.Unmarshal(first.Result, &ir))
	require.Equal(t, "input_required", ir.ResultType)
	require.Contains(t, ir.InputRequests, "owner")
	yes := `,"inputResponses":{"owner":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + ir.RequestState + `"`

	bad := []byte(ir.RequestState)
	bad[10] ^= 0x01
	if bad[10] == ir.RequestState[10] || !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", rune(bad[10])) {
		bad[10] = 'A' + (ir.RequestState[10]+1)%26
	}
	tampered := env.stateless(t, env.url(1), 2, "adopt", `{"pet":"Kit"}`, strings.Replace(yes, ir.RequestState, string(bad), 1))
	require.NotNil(t, tampered.Error)
	require.Equal(t, -32602, tampered.Error.Code)

	done := env.stateless(t, env.url(1), 3, "adopt", `{"pet":"Kit"}`, yes)
	require.Nil(t, done.Error)
	require.Contains(t, string(done.Result), `"owner": "Ada"`)

	replay := env.stateless(t, env.url(2), 4, "adopt", `{"pet":"Kit"}`, yes)
	require.NotNil(t, replay.Error, "a replayed requestState is refused on another replica")
	require.Equal(t, -32602, replay.Error.Code)
	require.Contains(t, replay.Error.Message, "already used")
}
