package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func batchOf(n int, member func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = member(i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func TestBatchBounds(t *testing.T) {
	g := newTestGateway(t, Config{MaxBatch: 50, MaxResponseBytes: 64 << 10})
	sid := g.initialize(t, "2025-03-26")
	list := func(i int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i) }

	// More than max_batch: one error, nothing run.
	r := g.sessionCall(t, sid, "2025-03-26", batchOf(51, list))
	require.Equal(t, 400, r.status)
	require.Equal(t, -32600, r.errCode(t))
	require.Contains(t, string(r.body), "at most 50")

	// Within it, but the answers outgrow max_response_bytes: the members
	// beyond get an error each, in order, and the answer stays bounded.
	r = g.sessionCall(t, sid, "2025-03-26", batchOf(50, list))
	require.Equal(t, 200, r.status)
	require.LessOrEqual(t, len(r.body), 64<<10)
	var out []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.body, &out))
	require.Len(t, out, 50)
	results := 0
	for i, m := range out {
		require.Equal(t, i, m.ID, "answers keep the batch's order")
		if m.Error == nil {
			results++
		} else {
			require.Contains(t, m.Error.Message, "send this request on its own")
		}
	}
	require.Positive(t, results)
	require.Less(t, results, 50)
}

// Closing the HTTP request of a batch cancels its members still running.
func TestBatchCancelledWithItsRequest(t *testing.T) {
	g, backend := newSlowGateway(t)
	sid := g.initialize(t, "2025-03-26")
	body := batchOf(3, func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{}}}`, i)
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-03-26")
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for range 3 {
		waitFor(t, backend.started, "the members to run at once")
	}
	cancel()
	for range 3 {
		waitFor(t, backend.cancelled, "each member's backend call to be cancelled")
	}
	select {
	case <-errc:
	case <-time.After(5 * time.Second):
		t.Fatal("the batch request did not end")
	}
}

// Beyond max_concurrent_calls a call waits briefly, then is a busy tool
// error that says when to retry; once a slot is free, calls run again.
func TestConcurrentCallsAreBounded(t *testing.T) {
	b := &slowBackend{started: make(chan struct{}, 8), cancelled: make(chan struct{}, 8)}
	release := make(chan struct{})
	g := newHeldGateway(t, Config{MaxConcurrentCalls: 2}, b.started, release)
	sid := g.initialize(t, "2025-11-25")
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
	done := make(chan reply, 2)
	for range 2 {
		go func() { done <- g.sessionCall(t, sid, "2025-11-25", call) }()
	}
	waitFor(t, b.started, "the first call")
	waitFor(t, b.started, "the second call")
	r := g.sessionCall(t, sid, "2025-11-25", call)
	res := r.result(t)
	require.Equal(t, true, res["isError"], "%s", r.body)
	require.Contains(t, fmt.Sprint(res["content"]), "busy")
	require.Equal(t, float64(1), res["_meta"].(map[string]any)["retryAfterSeconds"])
	close(release)
	for range 2 {
		select {
		case r := <-done:
			require.NotEqual(t, true, r.result(t)["isError"])
		case <-time.After(5 * time.Second):
			t.Fatal("the running calls did not finish")
		}
	}
	r = g.sessionCall(t, sid, "2025-11-25", call)
	require.NotEqual(t, true, r.result(t)["isError"], "a free slot serves again: %s", r.body)
}

// TestBatchMembersRunWithinTheSessionsConcurrency: with session_concurrency
// 2, a batch of 6 slow calls runs at most 2 at once, and every member is
// answered (they wait their turn instead of being refused).
func TestBatchMembersRunWithinTheSessionsConcurrency(t *testing.T) {
	var running, peak atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(hs.Close)
	cfg := Config{}
	cfg.Policy.SessionConcurrency = 2
	g := newGatewayFor(t, cfg, []byte(slowDoc), hs.URL)
	sid := g.initialize(t, "2025-03-26")
	var members []string
	for i := range 6 {
		members = append(members, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{}}}`, i+1))
	}
	r := g.sessionCall(t, sid, "2025-03-26", "["+strings.Join(members, ",")+"]")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.NotContains(t, string(r.body), `"isError":true`, "no member refused: %s", r.body)
	require.Equal(t, 6, strings.Count(string(r.body), `"result"`), "%s", r.body)
	require.LessOrEqual(t, peak.Load(), int32(2))
}
