package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/stretchr/testify/require"
)

// legacyStream is a 2024-11-05 client's event stream.
type legacyStream struct {
	*sseClient
	endpoint    string // the endpoint event's URL, as a path and query
	rawEndpoint string // as the event said it
	endpointID  string
}

// base is the gateway's origin (scheme://host:port).
func (g *testGateway) base() string { return strings.TrimSuffix(g.url, g.srv.cfg.MountPath) }

func (g *testGateway) openLegacy(t *testing.T, lastEventID string, headers ...map[string]string) *legacyStream {
	t.Helper()
	h := map[string]string{"Last-Event-ID": lastEventID}
	for _, extra := range headers {
		maps.Copy(h, extra)
	}
	c, req := openSSE(t, g.base()+g.srv.cfg.LegacySSEPath, h)
	s := &legacyStream{sseClient: c}
	ev := s.next(t)
	require.Equal(t, "endpoint", ev.name, "the first event names the messages endpoint")
	require.NotEmpty(t, ev.id, "the endpoint event is resumable")
	s.endpointID = ev.id
	// Resolved against the stream's URL, as clients do.
	ep, err := req.URL.Parse(ev.data)
	require.NoError(t, err)
	s.endpoint = ep.RequestURI()
	s.rawEndpoint = ev.data
	return s
}

func (s *legacyStream) sessionID() string {
	_, sid, _ := strings.Cut(s.endpoint, "sessionId=")
	return sid
}

// response waits for the response with the given id, skipping notifications.
func (s *legacyStream) response(t *testing.T, id int) (map[string]any, sseEvent) {
	t.Helper()
	for {
		ev := s.next(t)
		require.Equal(t, "message", ev.name)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(ev.data), &m), ev.data)
		if got, ok := m["id"].(float64); ok && int(got) == id {
			return m, ev
		}
	}
}

// postLegacy posts a message to a messages URL (as the endpoint event gave it).
func (g *testGateway) postLegacy(t *testing.T, endpoint, body string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.base()+endpoint, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var buf strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&buf)
	return reply{status: resp.StatusCode, header: resp.Header, body: []byte(buf.String())}
}

func legacyInit(t *testing.T, g *testGateway, s *legacyStream, version string) map[string]any {
	t.Helper()
	r := g.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	m, _ := s.response(t, 1)
	require.Equal(t, http.StatusAccepted, g.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).status)
	return m["result"].(map[string]any)
}

func TestLegacySSEHandshakeAndCalls(t *testing.T) {
	g := newTestGateway(t, Config{})
	s := g.openLegacy(t, "")
	require.True(t, strings.HasPrefix(s.endpoint, "/mcp/messages?sessionId="), s.endpoint)
	require.True(t, strings.HasPrefix(s.rawEndpoint, "messages?sessionId="), "relative, so a path prefix in front keeps working: %s", s.rawEndpoint)
	require.True(t, validSessionID(s.sessionID()))

	// Nothing but ping before initialize.
	require.Equal(t, http.StatusAccepted, g.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`).status)
	m, _ := s.response(t, 5)
	require.Contains(t, fmt.Sprint(m["error"]), "send initialize first")
	require.Equal(t, http.StatusAccepted, g.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":6,"method":"ping"}`).status)
	m, _ = s.response(t, 6)
	require.Equal(t, map[string]any{}, m["result"])

	res := legacyInit(t, g, s, "2024-11-05")
	require.Equal(t, "2024-11-05", res["protocolVersion"], "this transport's own revision is negotiated")
	sess, err := g.srv.store.Get(context.Background(), s.sessionID())
	require.NoError(t, err)
	require.Equal(t, "2024-11-05", sess.ProtocolVersion)
	require.True(t, sess.Initialized)
	require.Equal(t, sessions.TransportSSE, sess.Transport)

	require.Equal(t, http.StatusAccepted, g.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`).status)
	m, ev := s.response(t, 2)
	require.NotEmpty(t, m["result"].(map[string]any)["tools"])
	require.True(t, strings.HasPrefix(ev.id, s.sessionID()+":"), "event ids carry the session: %q", ev.id)

	r := g.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"createNote","arguments":{"title":"from 2024","body":"old client"}}}`)
	require.Equal(t, http.StatusAccepted, r.status)
	require.Equal(t, "Accepted", string(r.body))
	m, _ = s.response(t, 3)
	require.Contains(t, fmt.Sprint(m["result"]), "from 2024")

	// A second initialize is refused on the stream.
	require.Equal(t, http.StatusAccepted, g.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{}}}`).status)
	m, _ = s.response(t, 4)
	require.Contains(t, fmt.Sprint(m["error"]), "already initialized")
}

func TestLegacySSENegotiatesLikeInitialize(t *testing.T) {
	g := newTestGateway(t, Config{})
	require.Equal(t, "2025-06-18", legacyInit(t, g, g.openLegacy(t, ""), "2025-06-18")["protocolVersion"])
	require.Equal(t, "2025-11-25", legacyInit(t, g, g.openLegacy(t, ""), "2023-01-01")["protocolVersion"])
	// On Streamable HTTP, 2024-11-05 is counter-offered the newest revision.
	r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{}}}`})
	require.Equal(t, "2025-11-25", r.result(t)["protocolVersion"])
}

func TestLegacySSERefusesWhatItCannotTake(t *testing.T) {
	g := newTestGateway(t, Config{})
	s := g.openLegacy(t, "")
	legacyInit(t, g, s, "2024-11-05")
	sid := s.sessionID()
	cases := []struct {
		name, endpoint, body string
		status, code         int
		contains             string
	}{
		{"no session", "/mcp/messages", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 400, -32600, "sessionId"},
		{"unknown session", "/mcp/messages?sessionId=" + strings.Repeat("A", 43), `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 404, -32001, "Session not found"},
		{"malformed JSON", s.endpoint, `{"jsonrpc":`, 400, -32700, "Parse error"},
		{"batch", s.endpoint, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 400, -32600, "batches"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := g.postLegacy(t, c.endpoint, c.body)
			require.Equal(t, c.status, r.status, "%s", r.body)
			require.Equal(t, c.code, r.errCode(t))
			require.Contains(t, string(r.body), c.contains)
		})
	}
	// Wrong content type, wrong method.
	req, _ := http.NewRequest(http.MethodPost, g.base()+s.endpoint, strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
	resp, err = http.Get(g.base() + s.endpoint)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	require.Equal(t, "POST", resp.Header.Get("Allow"))

	// The session cannot be used on Streamable HTTP, nor the other way round.
	r := g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	require.Equal(t, 400, r.status)
	require.Contains(t, string(r.body), "2024-11-05 HTTP+SSE transport")
	modern := g.initialize(t, "2025-11-25")
	r = g.postLegacy(t, "/mcp/messages?sessionId="+modern, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	require.Equal(t, 400, r.status)

	// The stream still works after all that.
	require.Equal(t, http.StatusAccepted, g.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":10,"method":"ping"}`).status)
	s.response(t, 10)
}

func TestLegacySSEClosingTheStreamEndsTheSession(t *testing.T) {
	g := newTestGateway(t, Config{LegacySSEGrace: 100 * time.Millisecond})
	s := g.openLegacy(t, "")
	sid := s.sessionID()
	legacyInit(t, g, s, "2024-11-05")
	s.close()
	require.Eventually(t, func() bool {
		_, err := g.srv.store.Get(context.Background(), sid)
		return errors.Is(err, sessions.ErrNotFound)
	}, 5*time.Second, 10*time.Millisecond)
	r := g.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	require.Equal(t, 404, r.status)
}

// Two replicas share the store and the bus: the stream is on one, the
// POSTs on the other; a reconnect with Last-Event-ID resumes the session on
// the other one after the first shut down.
func TestLegacySSEAcrossReplicas(t *testing.T) {
	store := sessions.NewMemory(sessions.Limits{TTL: time.Hour})
	bus := pubsub.NewMemory()
	a := newTestGatewayWith(t, Config{}, Deps{Store: store, Bus: bus})
	b := newTestGatewayWith(t, Config{}, Deps{Store: store, Bus: bus})
	s := a.openLegacy(t, "")
	legacyInit(t, b, s, "2024-11-05")
	require.Equal(t, http.StatusAccepted, b.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`).status)
	_, ev := s.response(t, 2)

	// Replica a shuts down: its stream ends with a retry hint, the session stays.
	a.srv.Shutdown()
	select {
	case _, ok := <-s.events:
		for ok {
			_, ok = <-s.events
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end when its replica shut down")
	}
	// Posted while no stream is open: kept in the log.
	require.Equal(t, http.StatusAccepted, b.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":3,"method":"ping"}`).status)
	s2 := b.openLegacy(t, ev.id)
	require.Equal(t, s.endpoint, s2.endpoint, "the same session resumes")
	m, _ := s2.response(t, 3)
	require.Equal(t, map[string]any{}, m["result"])
	require.Equal(t, http.StatusAccepted, a.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`).status,
		"a replica that stopped streaming still takes POSTs")
	s2.response(t, 4)

	// A Last-Event-ID this server never issued.
	req, _ := http.NewRequest(http.MethodGet, b.base()+"/mcp/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", "nonsense")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 400, resp.StatusCode)
}

func TestLegacySSECanBeTurnedOffAndMoved(t *testing.T) {
	off := newTestGateway(t, Config{DisableLegacySSE: true})
	resp, err := http.Get(off.base() + "/mcp/sse")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 404, resp.StatusCode)

	moved := newTestGateway(t, Config{LegacySSEPath: "/events", LegacyMessagesPath: "/rpc"})
	s := moved.openLegacy(t, "")
	require.True(t, strings.HasPrefix(s.endpoint, "/rpc?sessionId="), s.endpoint)
	legacyInit(t, moved, s, "2024-11-05")

	_, err = New(Config{LegacySSEPath: "/mcp"}, Deps{})
	require.ErrorContains(t, err, "must differ")
}

// A client that loses its stream comes back within the grace period with
// the last id it saw (here the endpoint event's: nothing else came yet)
// and keeps its session; a stream that dies late, after the client moved
// to another replica, does not end the session that replica serves.
func TestLegacySSEResumeAndOwnership(t *testing.T) {
	store := sessions.NewMemory(sessions.Limits{TTL: time.Hour})
	bus := pubsub.NewMemory()
	cfg := Config{LegacySSEGrace: 150 * time.Millisecond}
	a := newTestGatewayWith(t, cfg, Deps{Store: store, Bus: bus})
	b := newTestGatewayWith(t, cfg, Deps{Store: store, Bus: bus})

	s := a.openLegacy(t, "")
	s.close()
	s2 := b.openLegacy(t, s.endpointID)
	require.Equal(t, s.endpoint, s2.endpoint, "the endpoint event's id resumes the session")
	legacyInit(t, a, s2, "2024-11-05")
	time.Sleep(300 * time.Millisecond) // past the grace period of the first stream
	require.Equal(t, http.StatusAccepted, a.postLegacy(t, s2.endpoint, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`).status)
	s2.response(t, 2)

	// Now the client moves to replica a while its stream on b is still
	// open; b's stream then dies: the session stays, owned by a's stream.
	_, ev := func() (map[string]any, sseEvent) {
		require.Equal(t, http.StatusAccepted, b.postLegacy(t, s2.endpoint, `{"jsonrpc":"2.0","id":3,"method":"ping"}`).status)
		return s2.response(t, 3)
	}()
	s3 := a.openLegacy(t, ev.id)
	s2.close()
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, http.StatusAccepted, b.postLegacy(t, s3.endpoint, `{"jsonrpc":"2.0","id":4,"method":"ping"}`).status)
	m, _ := s3.response(t, 4)
	require.Equal(t, map[string]any{}, m["result"])

	// Shutting down: new requests are refused on the POST, with 503.
	require.NoError(t, b.srv.DrainBackground(context.Background()))
	r := b.postLegacy(t, s3.endpoint, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
}
