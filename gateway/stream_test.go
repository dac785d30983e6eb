package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/stretchr/testify/require"
)

// eventStream reads one SSE response event by event: E is sseEvent
// (message events only: sseClient) or rawEvent (every event, priming and
// retry included: rawStream).
type eventStream[E any] struct {
	resp   *http.Response
	cancel context.CancelFunc
	events chan E
}

// sseClient reads a stream's events that carry data.
type sseClient struct{ eventStream[sseEvent] }

type sseEvent struct{ id, name, data string }

// readSSE delivers a response's events that carry data until it ends
// (then closes the channel).
func readSSE(body io.Reader) chan sseEvent {
	events := make(chan sseEvent, 64)
	go func() {
		defer close(events)
		for ev := range readRaw(body) {
			if ev.data != "" {
				events <- sseEvent{id: ev.id, name: ev.name, data: ev.data}
			}
		}
	}()
	return events
}

func (c *eventStream[E]) close() { c.cancel(); c.resp.Body.Close() }

func (c *eventStream[E]) next(t *testing.T) E {
	t.Helper()
	select {
	case ev, ok := <-c.events:
		require.True(t, ok, "stream ended")
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	var zero E
	return zero
}

func (g *testGateway) openGET(t *testing.T, sid, lastEventID string) *sseClient {
	t.Helper()
	c, _ := openSSE(t, g.url, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25", "Last-Event-ID": lastEventID})
	return c
}

// openSSE GETs an event stream (headers with an empty value are left
// out), requires it to open, and returns it with its request.
func openSSE(t *testing.T, url string, headers map[string]string) (*sseClient, *http.Request) {
	t.Helper()
	resp, cancel := sendStreamRequest(t, http.MethodGet, url, "", headers)
	c := &sseClient{eventStream[sseEvent]{resp: resp, cancel: cancel, events: readSSE(resp.Body)}}
	t.Cleanup(c.close)
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	return c, resp.Request
}

func push(t *testing.T, g *testGateway, sid, text string) {
	t.Helper()
	g.srv.sessionSink(sid).Notify("notifications/message", mcp.LogMessage{Level: "info", Data: text})
}

func eventText(t *testing.T, ev sseEvent) string {
	t.Helper()
	var m struct {
		Params mcp.LogMessage `json:"params"`
	}
	require.NoError(t, json.Unmarshal([]byte(ev.data), &m))
	return m.Params.Data.(string)
}

func TestGETStreamDeliversAndResumes(t *testing.T) {
	g := newTestGateway(t, Config{})
	sid := g.initialize(t, "2025-11-25")
	s1 := g.openGET(t, sid, "")
	// The stream is registered once it is open; push after the headers arrived.
	push(t, g, sid, "one")
	push(t, g, sid, "two")
	e1, e2 := s1.next(t), s1.next(t)
	require.Equal(t, "one", eventText(t, e1))
	require.Equal(t, "two", eventText(t, e2))
	require.NotEmpty(t, e2.id)
	s1.close()

	push(t, g, sid, "three")
	push(t, g, sid, "four")
	s2 := g.openGET(t, sid, e2.id)
	require.Equal(t, "three", eventText(t, s2.next(t)))
	e4 := s2.next(t)
	require.Equal(t, "four", eventText(t, e4))
	push(t, g, sid, "five")
	require.Equal(t, "five", eventText(t, s2.next(t)), "after replay the stream goes live")

	// Deleting the session ends its stream.
	r := g.do(t, exchange{method: "DELETE", headers: map[string]string{"Mcp-Session-Id": sid}})
	require.Equal(t, 200, r.status)
	select {
	case _, ok := <-s2.events:
		require.False(t, ok, "no more events after the session ended")
	case <-time.After(5 * time.Second):
		t.Fatal("stream did not end with its session")
	}
}

func TestGETStreamReportsEventsLostToTheBound(t *testing.T) {
	store := sessions.NewMemory(sessions.Limits{MaxEvents: 2})
	g := newTestGatewayWith(t, Config{}, Deps{Store: store})
	sid := g.initialize(t, "2025-11-25")
	s1 := g.openGET(t, sid, "")
	push(t, g, sid, "a")
	first := s1.next(t)
	s1.close()
	for _, m := range []string{"b", "c", "d"} {
		push(t, g, sid, m)
	}
	s2 := g.openGET(t, sid, first.id)
	warn := s2.next(t)
	require.Contains(t, warn.data, "no longer retained")
	require.Equal(t, "c", eventText(t, s2.next(t)))
	require.Equal(t, "d", eventText(t, s2.next(t)))

	r := g.do(t, exchange{method: "GET", headers: map[string]string{"Mcp-Session-Id": sid, "Accept": "text/event-stream", "Last-Event-ID": "bogus"}})
	require.Equal(t, 400, r.status)
}

const slowDoc = `openapi: 3.0.3
info: {title: slow, version: "1"}
servers: [{url: "http://127.0.0.1:1"}]
paths:
  /slow:
    get:
      operationId: slow
      summary: Waits until the client goes away
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
`

// slowBackend blocks every request until it is cancelled and reports both.
type slowBackend struct {
	started, cancelled chan struct{}
}

func newSlowGateway(t *testing.T) (*testGateway, *slowBackend) {
	return newSlowGatewayWith(t, Config{})
}

func newSlowGatewayWith(t *testing.T, cfg Config) (*testGateway, *slowBackend) {
	b := &slowBackend{started: make(chan struct{}, 8), cancelled: make(chan struct{}, 8)}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.started <- struct{}{}
		select {
		case <-r.Context().Done():
			b.cancelled <- struct{}{}
		case <-time.After(20 * time.Second):
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{}`))
		}
	}))
	t.Cleanup(hs.Close)
	return newGatewayFor(t, cfg, []byte(slowDoc), hs.URL), b
}

// newHeldGateway is a gateway on slowDoc whose backend reports each
// request on started and holds it until release is closed (or the request
// is cancelled), then answers.
func newHeldGateway(t *testing.T, cfg Config, started chan<- struct{}, release <-chan struct{}) *testGateway {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(hs.Close)
	return newGatewayFor(t, cfg, []byte(slowDoc), hs.URL)
}

func waitFor(t *testing.T, c chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestCancelledNotificationAbortsTheBackendCall(t *testing.T) {
	g, backend := newSlowGateway(t)
	sid := g.initialize(t, "2025-06-18")
	done := make(chan reply, 1)
	go func() {
		done <- g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	}()
	waitFor(t, backend.started, "the backend call")
	r := g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`)
	require.Equal(t, 202, r.status)
	waitFor(t, backend.cancelled, "the backend to see the cancellation")
	select {
	case r := <-done:
		require.Equal(t, 200, r.status)
		require.Empty(t, sseData(r.body), "a cancelled request gets no response: %s", r.body)
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled POST did not end")
	}
}

func TestDisconnectCancelsUnlessKept(t *testing.T) {
	g, backend := newSlowGateway(t)

	// Stateless: closing the stream cancels the request.
	ctx, cancel := context.WithCancel(context.Background())
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},` + modernMeta + `}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "slow"} {
		req.Header.Set(k, v)
	}
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, backend.started, "the stateless backend call")
	cancel()
	waitFor(t, backend.cancelled, "the backend to see the stateless cancellation")

	// Session era: a disconnect cancels too (cancel_on_disconnect), or,
	// with KeepCallsOnDisconnect, leaves the call running until
	// notifications/cancelled.
	for _, keep := range []bool{false, true} {
		g, backend := newSlowGatewayWith(t, Config{KeepCallsOnDisconnect: keep})
		sid := g.initialize(t, "2025-06-18")
		ctx2, cancel2 := context.WithCancel(context.Background())
		body = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
		req, err = http.NewRequestWithContext(ctx2, http.MethodPost, g.url, strings.NewReader(body))
		require.NoError(t, err)
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2025-06-18", "Mcp-Session-Id": sid} {
			req.Header.Set(k, v)
		}
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
		}()
		waitFor(t, backend.started, "the session backend call")
		cancel2()
		if !keep {
			waitFor(t, backend.cancelled, "the backend to see the disconnect as a cancellation")
			continue
		}
		select {
		case <-backend.cancelled:
			t.Fatal("with KeepCallsOnDisconnect a session-era disconnect must not cancel the call")
		case <-time.After(300 * time.Millisecond):
		}
		// An explicit cancellation still works after the disconnect.
		g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
		waitFor(t, backend.cancelled, "the backend to see the explicit cancellation")
	}
}

func TestIdleSessionsExpireAndActiveOnesLive(t *testing.T) {
	ttl := 400 * time.Millisecond
	g := newTestGateway(t, Config{SessionTTL: ttl})
	idle := g.initialize(t, "2025-06-18")
	busy := g.initialize(t, "2025-06-18")
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	deadline := time.Now().Add(3 * ttl)
	for time.Now().Before(deadline) {
		require.Equal(t, 200, g.sessionCall(t, busy, "2025-06-18", ping).status)
		time.Sleep(ttl / 8)
	}
	require.Eventually(t, func() bool {
		_, err := g.srv.store.Get(context.Background(), idle)
		return errors.Is(err, sessions.ErrNotFound)
	}, 5*time.Second, 20*time.Millisecond)
	require.Equal(t, 404, g.sessionCall(t, idle, "2025-06-18", ping).status)
	require.Equal(t, 200, g.sessionCall(t, busy, "2025-06-18", ping).status)
}
