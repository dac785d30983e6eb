package e2e

// The multi-replica fixture: one Redis, one backend, N gateway processes
// sharing the Redis under one key prefix, and a round-robin proxy in front.
// Helpers speak raw HTTP to a chosen replica so a test can say exactly which
// replica handles which request.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/demo"
	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

// blockPath is added to the demo document: an operation that answers only
// when the gateway cancels it (or after blockLimit, so a lost cancellation
// fails the test instead of hanging it).
const blockPath = `  /block:
    get:
      operationId: block
      summary: Answers only when the request is cancelled
      parameters:
        - {name: tag, in: query, required: true, schema: {type: string}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
`

const blockLimit = 20 * time.Second

// replicaBackend is the REST backend every replica calls: the demo API plus
// /block, which reports when a call starts and when its context ends.
type replicaBackend struct {
	URL       string
	doc       string // the OpenAPI file
	started   chan string
	cancelled chan string
}

func startReplicaBackend(t *testing.T) *replicaBackend {
	t.Helper()
	b := &replicaBackend{started: make(chan string, 16), cancelled: make(chan string, 16)}
	mux := http.NewServeMux()
	mux.Handle("/", demo.New().Handler())
	mux.HandleFunc("GET /block", func(w http.ResponseWriter, r *http.Request) {
		tag := r.URL.Query().Get("tag")
		b.started <- tag
		select {
		case <-r.Context().Done():
			b.cancelled <- tag
		case <-time.After(blockLimit):
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"cancelled":false}`))
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b.URL = srv.URL

	doc := string(demo.OpenAPI())
	require.Equal(t, 1, strings.Count(doc, "\npaths:\n"), "the demo document has one paths section")
	doc = strings.Replace(doc, "\npaths:\n", "\npaths:\n"+blockPath, 1)
	b.doc = filepath.Join(t.TempDir(), "replicas.yaml")
	require.NoError(t, os.WriteFile(b.doc, []byte(doc), 0o600))
	return b
}

// replicaEnv is N gateway replicas sharing one Redis under one prefix.
type replicaEnv struct {
	backend *replicaBackend
	rdb     redis.UniversalClient
	prefix  string
	args    []string // everything but --listen
	addrs   []string // host:port of each replica, stable across restarts
	proxy   *rrProxy
	hc      *http.Client // for requests that end
	stream  *http.Client // for push streams (no overall timeout)

	mu    sync.Mutex
	procs []*process
}

// newReplicaEnv starts n replicas against redisURL (rdb is a client of the
// same Redis, for cleanup and inspection) with a fresh key prefix, plus the
// round-robin proxy. Everything stops when t ends.
func newReplicaEnv(t *testing.T, backend *replicaBackend, redisURL string, rdb redis.UniversalClient, n int, extra ...string) *replicaEnv {
	t.Helper()
	e := &replicaEnv{
		backend: backend,
		rdb:     rdb,
		prefix:  redistest.Prefix(t),
		hc:      &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}},
		stream:  &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}},
	}
	redistest.Cleanup(t, rdb, e.prefix) // runs after the replicas are killed
	e.args = append([]string{
		"--openapi", backend.doc, "--upstream", backend.URL,
		"--redis-url", redisURL, "--redis-prefix", e.prefix,
		// Keep-alives double as the push stream's backstop for lost wake-up
		// hints; a long interval makes a lost hint fail the test.
		"--sse-keepalive", "1m",
		// A 2024-11-05 client that closed its stream is gone for good here.
		"--legacy-sse-grace", "200ms",
	}, extra...)
	bin := gatewayBinary(t)
	e.procs = make([]*process, n)
	var bases []string
	for range n {
		a := freeAddr(t)
		e.addrs = append(e.addrs, a)
		bases = append(bases, "http://"+a)
	}
	t.Cleanup(func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		for _, p := range e.procs {
			if p != nil {
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
		e.hc.CloseIdleConnections()
		e.stream.CloseIdleConnections()
	})
	// Start the replicas in parallel: each loads the document on its own.
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			p, err := spawnGateway(bin, append([]string{"--listen", e.addrs[i]}, e.args...)...)
			for try := 0; try < 5 && err != nil && strings.Contains(err.Error(), "address already in use"); try++ {
				// freeAddr's port was taken (by an outgoing connection, say)
				// between its probe and the replica's bind: another one.
				e.mu.Lock()
				e.addrs[i] = freeAddr(t)
				bases[i] = "http://" + e.addrs[i]
				e.mu.Unlock()
				p, err = spawnGateway(bin, append([]string{"--listen", e.addrs[i]}, e.args...)...)
			}
			e.mu.Lock()
			e.procs[i] = p
			e.mu.Unlock()
			errs[i] = err
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	t.Cleanup(func() {
		if t.Failed() {
			e.dumpLogs(t)
		}
	})
	e.proxy = newRRProxy(t, "/mcp", bases)
	e.awaitBroadcastSubscribers(t, int64(n))
	return e
}

// broadcastChannel is the Redis channel replicas announce session changes,
// ends and cancellations on (gateway/cache.go's broadcastTopic).
func (e *replicaEnv) broadcastChannel() string { return e.prefix + "replicas" }

// broadcastSubscribers counts the replicas subscribed to the broadcast
// channel. In a cluster PUBSUB NUMSUB counts one node's subscribers only, so
// the masters' counts are summed.
func (e *replicaEnv) broadcastSubscribers(ctx context.Context) (int64, error) {
	ch := e.broadcastChannel()
	if cc, ok := e.rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		var total int64
		err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			m, err := c.PubSubNumSub(ctx, ch).Result()
			mu.Lock()
			total += m[ch]
			mu.Unlock()
			return err
		})
		return total, err
	}
	m, err := e.rdb.PubSubNumSub(ctx, ch).Result()
	return m[ch], err
}

// awaitBroadcastSubscribers waits until want replicas listen to the
// broadcast channel. A replica should not serve before it does (that is
// TestReplicaHearsBroadcastsAsSoonAsItServes's job); the scenarios are about
// a running deployment, so they do not depend on it and start once every
// replica listens.
func (e *replicaEnv) awaitBroadcastSubscribers(t *testing.T, want int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		n, err := e.broadcastSubscribers(ctx)
		if err == nil && n == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d replicas subscribed to %s (%v)", n, want, e.broadcastChannel(), err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (e *replicaEnv) url(i int) string  { return "http://" + e.addrs[i] + "/mcp" }
func (e *replicaEnv) base(i int) string { return "http://" + e.addrs[i] }

func (e *replicaEnv) proc(i int) *process {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.procs[i]
}

// kill SIGKILLs replica i: no shutdown, no goodbye to Redis or clients.
func (e *replicaEnv) kill(t *testing.T, i int) {
	t.Helper()
	p := e.proc(i)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.exited
}

// restart starts replica i again on its address and waits until it
// listens to the broadcasts, as a deployment's replica would have long
// before its traffic matters.
func (e *replicaEnv) restart(t *testing.T, i int) {
	t.Helper()
	e.restartNoWait(t, i)
	e.awaitBroadcastSubscribers(t, int64(len(e.addrs)))
}

// restartNoWait starts replica i again and returns as soon as it serves.
func (e *replicaEnv) restartNoWait(t *testing.T, i int) {
	t.Helper()
	p, err := spawnGateway(gatewayBinary(t), append([]string{"--listen", e.addrs[i]}, e.args...)...)
	e.mu.Lock()
	e.procs[i] = p
	e.mu.Unlock()
	require.NoError(t, err)
}

func (e *replicaEnv) dumpLogs(t *testing.T) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, p := range e.procs {
		if p == nil {
			continue
		}
		log := stderrOf(p)
		if len(log) > 4000 {
			log = "…" + log[len(log)-4000:]
		}
		t.Logf("replica %d (%s) stderr:\n%s", i, e.addrs[i], log)
	}
}

// spawnGateway is startGateway without testing.T, so replicas can be started
// in parallel and restarted by subtests; the caller owns the process.
func spawnGateway(bin string, args ...string) (*process, error) {
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, stderr: &strings.Builder{}, exited: make(chan struct{})}
	cmd.Stderr = &lockedWriter{w: p.stderr}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case line := <-lines:
		i := strings.Index(line, "http://")
		if i < 0 {
			return p, fmt.Errorf("startup line does not name the MCP URL: %q", line)
		}
		p.url = strings.TrimSpace(line[i:])
		return p, nil
	case <-p.exited:
		return p, fmt.Errorf("gateway exited early: %v\n%s", p.waitErr, p.stderr)
	case <-time.After(30 * time.Second):
		return p, fmt.Errorf("gateway did not start:\n%s", stderrOf(p))
	}
}

// stderrOf reads what a running gateway has written to stderr so far.
func stderrOf(p *process) string {
	if lw, ok := p.cmd.Stderr.(*lockedWriter); ok {
		lw.mu.Lock()
		defer lw.mu.Unlock()
	}
	return p.stderr.String()
}

// rawResponse is one answered HTTP exchange.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// send POSTs body to url with the session's headers; it does not fail the
// test, so goroutines may use it.
func (e *replicaEnv) send(ctx context.Context, url, sid, body string) (*rawResponse, error) {
	return e.sendAs(ctx, url, sid, "2025-06-18", body)
}

// sendAs is send in a session of the given revision.
func (e *replicaEnv) sendAs(ctx context.Context, url, sid, version, body string) (*rawResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", version)
	}
	return e.roundTrip(req)
}

// roundTrip sends req and reads the whole answer.
func (e *replicaEnv) roundTrip(req *http.Request) (*rawResponse, error) {
	resp, err := e.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &rawResponse{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// do is send on the test goroutine.
func (e *replicaEnv) do(t *testing.T, url, sid, body string) *rawResponse {
	t.Helper()
	r, err := e.send(context.Background(), url, sid, body)
	require.NoError(t, err)
	return r
}

// sendMethod sends an HTTP request without a body (GET/DELETE are not
// streams here: their answers are read whole).
func (e *replicaEnv) sendMethod(ctx context.Context, method, url, sid string) (*rawResponse, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	return e.roundTrip(req)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e-replicas","version":"1"}}}`

// initialize starts a session on the given URL and sends
// notifications/initialized there too.
func (e *replicaEnv) initialize(t *testing.T, url string) string {
	t.Helper()
	r := e.do(t, url, "", initializeBody)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	sid := r.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	n := e.do(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, n.status, "%s", n.body)
	return sid
}

// setLevel sends logging/setLevel on url and expects an empty result.
func (e *replicaEnv) setLevel(t *testing.T, url, sid, level string) {
	t.Helper()
	r := e.do(t, url, sid, `{"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"`+level+`"}}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	m := onlyResponse(t, r, `"lvl"`)
	require.Nil(t, m.Error, "%s", r.body)
}

// rpcMessage is any JSON-RPC message a gateway sends.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// messages decodes a POST answer: one JSON object, or an SSE stream of them.
func messages(t *testing.T, r *rawResponse) []rpcMessage {
	t.Helper()
	var out []rpcMessage
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		require.NoError(t, readSSE(bytes.NewReader(r.body), func(ev pushEvent) bool {
			var m rpcMessage
			require.NoError(t, json.Unmarshal([]byte(ev.data), &m), "%s", ev.data)
			out = append(out, m)
			return true
		}))
		return out
	}
	if len(bytes.TrimSpace(r.body)) == 0 {
		return nil
	}
	var m rpcMessage
	require.NoError(t, json.Unmarshal(r.body, &m), "%s", r.body)
	return append(out, m)
}

// onlyResponse returns the response with the given id, requiring exactly one.
func onlyResponse(t *testing.T, r *rawResponse, id string) rpcMessage {
	t.Helper()
	var found []rpcMessage
	for _, m := range messages(t, r) {
		if m.Method == "" && string(m.ID) == id {
			found = append(found, m)
		}
	}
	require.Len(t, found, 1, "one response with id %s in %s", id, r.body)
	return found[0]
}

// pushEvent is one SSE event.
type pushEvent struct {
	id   string
	data string
}

// logText returns the message of a notifications/message event, or "".
func (ev pushEvent) logText() string {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Data struct {
				Message string `json:"message"`
			} `json:"data"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(ev.data), &m) != nil || m.Method != "notifications/message" {
		return ""
	}
	return m.Params.Data.Message
}

// readSSE parses an SSE stream, calling fn for each event with data until fn
// returns false or the stream ends. Comments and retry fields are skipped.
func readSSE(r io.Reader, fn func(pushEvent) bool) error {
	br := bufio.NewReader(r)
	var ev pushEvent
	var data []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if len(data) > 0 {
				ev.data = strings.Join(data, "\n")
				if !fn(ev) {
					return nil
				}
			}
			ev, data = pushEvent{}, nil
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id:"):
			ev.id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}

// pushStream is an open GET push stream read in the background.
type pushStream struct {
	events chan pushEvent // closed when the stream ends
	cancel context.CancelFunc
	err    error // why reading ended; valid once events is closed
}

// openPush opens the session's push stream on url, resuming after lastID
// when it is set, and requires a 200.
func (e *replicaEnv) openPush(t *testing.T, url, sid, lastID string) *pushStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	return e.openStream(t, req, cancel, "GET push stream", false)
}

// openStream sends req (cancel ends it) on the streaming client and reads
// its SSE answer in the background; what names it in a failure. wantSSE
// also fails an answer that is not text/event-stream.
func (e *replicaEnv) openStream(t *testing.T, req *http.Request, cancel context.CancelFunc, what string, wantSSE bool) *pushStream {
	t.Helper()
	resp, err := e.stream.Do(req)
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	if resp.StatusCode != http.StatusOK || wantSSE && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if wantSSE {
			t.Fatalf("%s: status %d, %s: %s", what, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		t.Fatalf("%s: status %d: %s", what, resp.StatusCode, b)
	}
	s := &pushStream{events: make(chan pushEvent, 1024), cancel: cancel}
	t.Cleanup(s.close)
	go func() {
		defer resp.Body.Close()
		s.err = readSSE(resp.Body, func(ev pushEvent) bool { s.events <- ev; return true })
		close(s.events)
	}()
	return s
}

// next returns the next event, failing the test if none comes within d or
// the stream ends.
func (s *pushStream) next(t *testing.T, d time.Duration) pushEvent {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatalf("push stream ended (%v) while an event was expected", s.err)
		}
		return ev
	case <-time.After(d):
		t.Fatalf("no push event within %v", d)
	}
	return pushEvent{}
}

func (s *pushStream) close() { s.cancel() }

// awaitStatus polls a ping on url until it answers want, returning how long
// it took; it gives up at the deadline.
func (e *replicaEnv) awaitPingStatus(ctx context.Context, url, sid string, want int, every time.Duration) (time.Duration, error) {
	start := time.Now()
	var last int
	for {
		r, err := e.send(ctx, url, sid, `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
		if err == nil {
			last = r.status
			if r.status == want {
				return time.Since(start), nil
			}
		}
		select {
		case <-ctx.Done():
			return time.Since(start), fmt.Errorf("%s: still %d, want %d (%v)", url, last, want, err)
		case <-time.After(every):
		}
	}
}
