package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// rawEvent is one SSE event as sent: priming events (empty data) and
// retry-only events included.
type rawEvent struct {
	id, name, data, retry string
	hasID, hasData        bool
}

// isPriming: an id and empty data.
func (e rawEvent) isPriming() bool { return e.hasID && e.hasData && e.data == "" }

func (e rawEvent) msg(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(e.data), &m), "event data %q", e.data)
	return m
}

// rawStream reads every event of a stream: priming and retry ones too.
type rawStream struct{ eventStream[rawEvent] }

func readRaw(body io.Reader) chan rawEvent {
	events := make(chan rawEvent, 64)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		var ev rawEvent
		seen := false
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if seen {
					events <- ev
				}
				ev, seen = rawEvent{}, false
				continue
			}
			if strings.HasPrefix(line, ":") {
				continue // a keep-alive
			}
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch name {
			case "id":
				ev.id, ev.hasID, seen = value, true, true
			case "event":
				ev.name, seen = value, true
			case "data":
				ev.data, ev.hasData, seen = value, true, true
			case "retry":
				ev.retry, seen = value, true
			}
		}
	}()
	return events
}

// openRaw sends a request that must be answered with an event stream.
func openRaw(t *testing.T, method, url, body string, headers map[string]string) *rawStream {
	t.Helper()
	s, resp := startRaw(t, method, url, body, headers)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	return s
}

func startRaw(t *testing.T, method, url, body string, headers map[string]string) (*rawStream, *http.Response) {
	t.Helper()
	resp, cancel := sendStreamRequest(t, method, url, body, headers)
	s := &rawStream{eventStream[rawEvent]{resp: resp, cancel: cancel, events: readRaw(resp.Body)}}
	t.Cleanup(s.close)
	return s, resp
}

// sendStreamRequest sends a request whose answer may be an event stream
// (headers with an empty value are left out); cancel ends it.
func sendStreamRequest(t *testing.T, method, url, body string, headers map[string]string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	require.NoError(t, err)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
	}
	require.NoError(t, err)
	return resp, cancel
}

// ended requires the stream to end with no more events.
func (s *rawStream) ended(t *testing.T) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		require.False(t, ok, "expected the end of the stream, got %+v", ev)
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end within 5s")
	}
}

// nextMessage skips priming and retry-only events.
func (s *rawStream) nextMessage(t *testing.T) rawEvent {
	t.Helper()
	for {
		if ev := s.next(t); ev.data != "" {
			return ev
		}
	}
}

// postEventIDPattern: "<log id>.<POST stream token>".
var postEventIDPattern = regexp.MustCompile(`^[0-9-]+\.p[A-Za-z0-9_-]{15}$`)

func tokenOf(id string) string { _, tok, _ := strings.Cut(id, "."); return tok }

const waitDoc = `openapi: 3.0.3
info: {title: wait, version: "1"}
servers: [{url: "http://127.0.0.1:1"}]
paths:
  /wait:
    get:
      operationId: wait
      summary: Answers once the test releases it
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
`

// gateBackend answers each call once release is closed.
type gateBackend struct {
	url     string
	started chan struct{}
	release chan struct{}
}

func newGateBackend(t *testing.T) *gateBackend {
	b := &gateBackend{started: make(chan struct{}, 16), release: make(chan struct{})}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.started <- struct{}{}
		select {
		case <-b.release:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"done":true}`))
		case <-r.Context().Done():
		}
	}))
	b.url = hs.URL
	t.Cleanup(hs.Close)
	t.Cleanup(b.open)
	return b
}

func (b *gateBackend) open() {
	select {
	case <-b.release:
	default:
		close(b.release)
	}
}

// replicaDeps returns the stores two replicas share, in memory or in Redis.
func replicaDeps(t *testing.T, kind string) (Deps, Deps) {
	t.Helper()
	if kind == "memory" {
		d := Deps{Store: sessions.NewMemory(sessions.Limits{TTL: time.Hour}), Bus: pubsub.NewMemory()}
		return d, d
	}
	rdb := redistest.Standalone(t).Client(t)
	prefix := redistest.Prefix(t)
	redistest.Cleanup(t, rdb, prefix)
	deps := func() Deps {
		return Deps{Store: sessions.NewRedis(rdb, prefix, sessions.Limits{TTL: time.Hour}), Bus: pubsub.NewRedis(rdb, prefix)}
	}
	return deps(), deps()
}

// debugSession opens a session whose log level is debug: a tools/call
// then logs before and after its backend call, so its answer streams.
func (g *testGateway) debugSession(t *testing.T, version string) string {
	t.Helper()
	sid := g.initialize(t, version)
	r := g.sessionCall(t, sid, version, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return sid
}

const callWait = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`

func (g *testGateway) postStream(t *testing.T, sid, version, body string) *rawStream {
	t.Helper()
	return openRaw(t, http.MethodPost, g.url, body, sessionHeaders(sid, version))
}

func (g *testGateway) getStream(t *testing.T, sid, version, lastEventID string) *rawStream {
	t.Helper()
	h := sessionHeaders(sid, version)
	h["Last-Event-ID"] = lastEventID
	return openRaw(t, http.MethodGet, g.url, "", h)
}

// untilResult reads a stream's messages up to the response to request 7,
// which must come last.
func untilResult(t *testing.T, s *rawStream) (before []rawEvent, final rawEvent) {
	t.Helper()
	for {
		ev := s.nextMessage(t)
		if _, ok := ev.msg(t)["result"]; ok {
			requireResult(t, ev)
			return before, ev
		}
		before = append(before, ev)
	}
}

// requireLog: the event is a log message of the call.
func requireLog(t *testing.T, ev rawEvent) {
	t.Helper()
	require.Equal(t, "notifications/message", ev.msg(t)["method"], "%s", ev.data)
}

func logText(t *testing.T, ev rawEvent) string {
	t.Helper()
	m := ev.msg(t)
	require.Equal(t, "notifications/message", m["method"], "%s", ev.data)
	p := m["params"].(map[string]any)
	if d, ok := p["data"].(map[string]any); ok {
		return d["message"].(string)
	}
	return p["data"].(string)
}

// requireResult: the event is the response to request 7.
func requireLogOrResult(t *testing.T, ev rawEvent) {
	t.Helper()
	if _, ok := ev.msg(t)["result"]; ok {
		requireResult(t, ev)
		return
	}
	requireLog(t, ev)
}

func requireResult(t *testing.T, ev rawEvent) {
	t.Helper()
	m := ev.msg(t)
	require.EqualValues(t, 7, m["id"], "%s", ev.data)
	require.NotNil(t, m["result"], "%s", ev.data)
}

// A session's POST stream is logged: every event has an id naming the
// stream, and a client that lost the stream resumes it on another replica
// with GET + Last-Event-ID, getting what the call sent since, then the
// response, then the end. The session's push stream carries none of it.
func TestPOSTStreamResumesOnAnotherReplica(t *testing.T) {
	for _, kind := range []string{"memory", "redis"} {
		t.Run(kind, func(t *testing.T) {
			backend := newGateBackend(t)
			defer backend.open() // before the gateways stop: Run waits for the calls
			da, db := replicaDeps(t, kind)
			cfg := Config{KeepCallsOnDisconnect: true}
			a := newGatewayWith(t, cfg, da, []byte(waitDoc), backend.url)
			b := newGatewayWith(t, cfg, db, []byte(waitDoc), backend.url)
			const v = "2025-06-18"
			sid := a.debugSession(t, v)
			push := b.getStream(t, sid, v, "")

			post := a.postStream(t, sid, v, callWait)
			first := post.next(t)
			require.False(t, first.isPriming(), "no priming event before 2025-11-25")
			requireLog(t, first)
			require.Regexp(t, postEventIDPattern, first.id)
			waitFor(t, backend.started, "the backend call")
			post.close() // the client loses the stream; the call goes on

			resumed := b.getStream(t, sid, v, first.id)
			backend.open()
			logs, final := untilResult(t, resumed)
			require.NotEmpty(t, logs, "what the call logged after the POST's connection was gone")
			for _, ev := range append(logs, final) {
				requireLogOrResult(t, ev)
				require.Regexp(t, postEventIDPattern, ev.id)
				require.Equal(t, tokenOf(first.id), tokenOf(ev.id))
			}
			resumed.ended(t)

			// Resuming again from the first event replays the same.
			again := a.getStream(t, sid, v, first.id)
			for _, want := range append(logs, final) {
				require.Equal(t, want, again.next(t))
			}
			again.ended(t)

			// None of the POST stream's messages went on the push stream.
			pushText(t, a, sid, "marker")
			ev := push.next(t)
			require.Equal(t, "marker", logText(t, ev))
			require.NotEmpty(t, ev.id)
		})
	}
}

func pushText(t *testing.T, g *testGateway, sid, text string) { push(t, g, sid, text) }

// A POST stream that completes on its connection has ids too; a bogus
// stream id is refused.
func TestPOSTStreamIDsAndBadResumes(t *testing.T) {
	backend := newGateBackend(t)
	defer backend.open() // before the gateways stop: Run waits for the calls
	backend.open()
	g := newGatewayFor(t, Config{}, []byte(waitDoc), backend.url)
	const v = "2025-03-26"
	sid := g.debugSession(t, v)
	post := g.postStream(t, sid, v, callWait)
	var ids []string
	for {
		ev := post.next(t)
		require.Regexp(t, postEventIDPattern, ev.id)
		ids = append(ids, ev.id)
		if _, ok := ev.msg(t)["result"]; ok {
			break
		}
	}
	post.ended(t)
	require.Len(t, dedupeStrings(ids), len(ids))

	for _, bad := range []string{"1.pshort", "999999.pAAAAAAAAAAAAAAA", "x.pAAAAAAAAAAAAAAA", "1.xAAAAAAAAAAAAAAA"} {
		r := g.do(t, exchange{method: http.MethodGet, headers: map[string]string{"Mcp-Session-Id": sid, "Accept": "text/event-stream", "Last-Event-ID": bad}})
		require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", bad, r.body)
	}
}

func dedupeStrings(xs []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// 2025-11-25 streams open with a priming event (an id that resumes the
// stream, empty data, retry); older revisions get none, and stateless
// streams have no ids at all.
func TestPrimingEventOnlyFor20251125(t *testing.T) {
	for _, tc := range []struct {
		version string
		primed  bool
	}{{"2025-11-25", true}, {"2025-06-18", false}, {"2025-03-26", false}} {
		t.Run(tc.version, func(t *testing.T) {
			backend := newGateBackend(t)
			defer backend.open() // before the gateways stop: Run waits for the calls
			backend.open()
			g := newGatewayFor(t, Config{}, []byte(waitDoc), backend.url)
			sid := g.debugSession(t, tc.version)

			get := g.getStream(t, sid, tc.version, "")
			if tc.primed {
				p := get.next(t)
				require.True(t, p.isPriming(), "%+v", p)
				require.Equal(t, "1000", p.retry)
			}
			push(t, g, sid, "hello")
			hello := get.next(t)
			require.Equal(t, "hello", logText(t, hello))
			require.NotEmpty(t, hello.id)

			post := g.postStream(t, sid, tc.version, callWait)
			var events []rawEvent
			for {
				ev := post.next(t)
				events = append(events, ev)
				if ev.data != "" {
					if _, ok := ev.msg(t)["result"]; ok {
						break
					}
				}
			}
			post.ended(t)
			first := events[0]
			require.Equal(t, tc.primed, first.isPriming(), "%+v", first)
			for _, ev := range events {
				require.Regexp(t, postEventIDPattern, ev.id)
			}
			if !tc.primed {
				return
			}
			require.Equal(t, "1000", first.retry)
			// The priming id resumes the whole stream.
			resumed := g.getStream(t, sid, tc.version, first.id)
			p := resumed.next(t)
			require.True(t, p.isPriming())
			require.Equal(t, first.id, p.id)
			for _, want := range events[1:] {
				require.Equal(t, want, resumed.next(t))
			}
			resumed.ended(t)
		})
	}
	t.Run("stateless", func(t *testing.T) {
		backend := newGateBackend(t)
		defer backend.open() // before the gateways stop: Run waits for the calls
		backend.open()
		g := newGatewayFor(t, Config{}, []byte(waitDoc), backend.url)
		meta := strings.Replace(modernMeta, `"_meta":{`, `"_meta":{"io.modelcontextprotocol/logLevel":"debug",`, 1)
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{},` + meta + `}}`
		s := openRaw(t, http.MethodPost, g.url, body, modernHeaders("tools/call", "wait"))
		n := 0
		for ev := range s.events {
			require.False(t, ev.hasID, "a stateless stream is not resumable: %+v", ev)
			require.NotEmpty(t, ev.data)
			n++
		}
		require.Greater(t, n, 1, "the answer streamed")
	})
}

// When the server shuts down under a running call, the call's POST stream
// ends with a retry hint; the call goes on, and the client that resumes on
// another replica gets the rest and the response there.
func TestShutdownClosesPOSTStreamsAndTheCallAnswersOnResume(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		streaming     bool // the answer streams before the shutdown
	}{
		{"2025-11-25 streaming", "2025-11-25", true},
		{"2025-06-18 streaming", "2025-06-18", true},
		{"2025-11-25 still JSON", "2025-11-25", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backend := newGateBackend(t)
			defer backend.open() // before the gateways stop: Run waits for the calls
			d, _ := replicaDeps(t, "memory")
			a := newGatewayWith(t, Config{}, d, []byte(waitDoc), backend.url)
			b := newGatewayWith(t, Config{}, d, []byte(waitDoc), backend.url)
			sid := a.initialize(t, tc.version)
			if tc.streaming {
				sid = a.debugSession(t, tc.version)
			}
			type opened struct {
				s    *rawStream
				resp *http.Response
			}
			got := make(chan opened, 1)
			go func() {
				s, resp := startRaw(t, http.MethodPost, a.url, callWait, sessionHeaders(sid, tc.version))
				got <- opened{s, resp}
			}()
			waitFor(t, backend.started, "the backend call")
			if !tc.streaming {
				a.srv.Shutdown() // the answer has sent nothing yet
			}
			var post *rawStream
			select {
			case o := <-got:
				require.Equal(t, "text/event-stream", o.resp.Header.Get("Content-Type"))
				post = o.s
			case <-time.After(5 * time.Second):
				t.Fatal("no answer to the POST")
			}
			var last rawEvent
			if tc.version == "2025-11-25" {
				last = post.next(t)
				require.True(t, last.isPriming())
			}
			if tc.streaming {
				last = post.next(t)
				requireLog(t, last)
				a.srv.Shutdown()
			}
			bye := post.next(t)
			require.Equal(t, "1000", bye.retry)
			require.False(t, bye.hasData)
			post.ended(t)

			resumed := b.getStream(t, sid, tc.version, last.id)
			if tc.version == "2025-11-25" {
				require.Equal(t, last.id, resumed.next(t).id, "the priming event")
			}
			backend.open()
			logs, final := untilResult(t, resumed)
			if tc.streaming {
				require.NotEmpty(t, logs, "what the call logged after its stream closed")
			}
			require.Equal(t, tokenOf(last.id), tokenOf(final.id))
			resumed.ended(t)
		})
	}
	t.Run("2025-06-18 still JSON waits for its answer", func(t *testing.T) {
		backend := newGateBackend(t)
		defer backend.open() // before the gateways stop: Run waits for the calls
		g := newGatewayFor(t, Config{}, []byte(waitDoc), backend.url)
		sid := g.initialize(t, "2025-06-18")
		got := make(chan reply, 1)
		go func() { got <- g.sessionCall(t, sid, "2025-06-18", callWait) }()
		waitFor(t, backend.started, "the backend call")
		g.srv.Shutdown()
		backend.open()
		select {
		case r := <-got:
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, "application/json", r.header.Get("Content-Type"))
			require.NotNil(t, r.result(t))
		case <-time.After(5 * time.Second):
			t.Fatal("no answer to the POST")
		}
	})
}
