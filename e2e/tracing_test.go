package e2e

import (
	"bufio"
	"compress/gzip"
	"encoding/hex"
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

	"github.com/stretchr/testify/require"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

// collector is an OTLP/HTTP trace receiver: what the gateway exports.
type collector struct {
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string // service.name of each export's resource
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = gz
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				c.services = append(c.services, kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// startCollector serves a collector on loopback and returns it with its
// URL, the OTLP endpoint.
func startCollector(t *testing.T) (*collector, string) {
	t.Helper()
	col := &collector{}
	srv := httptest.NewServer(col)
	t.Cleanup(srv.Close)
	return col, srv.URL
}

// find returns the spans of trace (hex) that match.
func (c *collector) find(trace string, match func(*tracepb.Span) bool) []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range c.spans {
		if hex.EncodeToString(s.TraceId) == trace && match(s) {
			out = append(out, s)
		}
	}
	return out
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

const tracedDoc = `openapi: 3.0.3
info: {title: traced, version: "1"}
paths:
  /widgets:
    get:
      operationId: listWidgets
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
`

// tracedInitialize is the initialize request the traced tests send, with a
// traceparent of their own.
const tracedInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

// The chain client → gateway → backend, in the spans the real binary
// exports over OTLP/HTTP and in the traceparent the backend receives: for a
// session-era call traced by its HTTP headers, and for a 2026-07-28 call
// traced by params._meta.
func TestTracingChainClientGatewayBackend(t *testing.T) {
	col, colURL := startCollector(t)

	var mu sync.Mutex
	seen := map[string]string{} // the backend's traceparent, by trace id
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tp := r.Header.Get("traceparent"); tp != "" {
			mu.Lock()
			seen[strings.Split(tp, "-")[1]] = tp
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"widgets":[]}`)
	}))
	t.Cleanup(backend.Close)
	doc := filepath.Join(t.TempDir(), "openapi.yaml")
	require.NoError(t, os.WriteFile(doc, []byte(tracedDoc), 0o600))

	// The child process inherits these: the standard variables, nothing
	// of the gateway's own.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", colURL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_SERVICE_NAME", "gw-under-test")
	p := startGateway(t, "--openapi", doc, "--upstream", backend.URL, "--listen", freeAddr(t))
	require.Contains(t, stderrOf(p), "tracing on")

	check := func(t *testing.T, clientTrace, clientSpan string) {
		t.Helper()
		var server, client *tracepb.Span
		require.Eventually(t, func() bool {
			servers := col.find(clientTrace, func(s *tracepb.Span) bool {
				return s.Kind == tracepb.Span_SPAN_KIND_SERVER && spanAttr(s, "mcp.method.name") == "tools/call"
			})
			if len(servers) != 1 {
				return false
			}
			server = servers[0]
			clients := col.find(clientTrace, func(s *tracepb.Span) bool {
				return s.Kind == tracepb.Span_SPAN_KIND_CLIENT && hex.EncodeToString(s.ParentSpanId) == hex.EncodeToString(server.SpanId)
			})
			if len(clients) != 1 {
				return false
			}
			client = clients[0]
			return true
		}, 20*time.Second, 20*time.Millisecond, "the gateway exports its server span and the backend call's client span\n%s", stderrOf(p))
		require.Equal(t, clientSpan, hex.EncodeToString(server.ParentSpanId), "the gateway's span is the client's span's child")
		require.Equal(t, "tools/call listWidgets", server.Name)
		require.Equal(t, "listWidgets", spanAttr(server, "gen_ai.tool.name"))
		require.Equal(t, "ok", spanAttr(server, "mcpgw.outcome"))
		require.Equal(t, "GET /widgets", client.Name, "the method and the operation's path template")
		require.Equal(t, "/widgets", spanAttr(client, "url.template"))
		mu.Lock()
		got := seen[clientTrace]
		mu.Unlock()
		require.Equal(t, "00-"+clientTrace+"-"+hex.EncodeToString(client.SpanId)+"-01", got,
			"the backend sees the trace id and the gateway's client span as its parent")
	}

	t.Run("session era, traceparent header", func(t *testing.T) {
		const trace, span = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"
		c := &mcpConn{url: p.url, sid: initialize(t, p.url)}
		r := c.send(t, map[string]string{"traceparent": "00-" + trace + "-" + span + "-01"},
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"listWidgets","arguments":{}}}`)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.NotContains(t, string(r.body), `"isError":true`)
		check(t, trace, span)
		server := col.find(trace, func(s *tracepb.Span) bool { return s.Kind == tracepb.Span_SPAN_KIND_SERVER })[0]
		require.Equal(t, "session", spanAttr(server, "mcpgw.era"))
		require.Len(t, spanAttr(server, "mcpgw.session.hash"), 16)
	})

	t.Run("2026-07-28, traceparent in params._meta", func(t *testing.T) {
		const trace, span = "1e0b3c8f4a5d6e7f8091a2b3c4d5e6f7", "a1b2c3d4e5f60718"
		body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
			`"traceparent":"00-` + trace + `-` + span + `-01"},"name":"listWidgets","arguments":{}}}`
		r := (&mcpConn{url: p.url}).send(t, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "listWidgets"}, body)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		check(t, trace, span)
		server := col.find(trace, func(s *tracepb.Span) bool { return s.Kind == tracepb.Span_SPAN_KIND_SERVER })[0]
		require.Equal(t, "2026-07-28", spanAttr(server, "mcpgw.era"))
	})

	col.mu.Lock()
	services := col.services
	col.mu.Unlock()
	require.NotEmpty(t, services)
	require.Equal(t, "gw-under-test", services[0], "OTEL_SERVICE_NAME names the service")
}

// A tracing setting the gateway cannot honour stops it at startup with
// status 2, naming the setting.
func TestTracingRefusesGRPC(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	out, err := exec.Command(gatewayBinary(t), "--demo", "--listen", "127.0.0.1:0").CombinedOutput()
	requireExitCode(t, err, 2, out)
	require.Contains(t, string(out), "OTEL_EXPORTER_OTLP_PROTOCOL")
	require.Contains(t, string(out), "http/protobuf")
}

// Spans still queued when the gateway is told to stop are exported before
// it exits: the batch delay here is longer than the test.
func TestTracingFlushesOnShutdown(t *testing.T) {
	col, colURL := startCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", colURL+"/v1/traces")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "600000")
	p := startGateway(t, "--demo", "--listen", freeAddr(t))
	const trace = "77777777777777777777777777777777"
	r := (&mcpConn{url: p.url}).send(t, map[string]string{"traceparent": "00-" + trace + "-1111111111111111-01"}, tracedInitialize)
	require.Equal(t, http.StatusOK, r.status)
	require.Empty(t, col.find(trace, func(*tracepb.Span) bool { return true }), "nothing exported before the batch is due")

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("gateway did not stop:\n%s", stderrOf(p))
	}
	spans := col.find(trace, func(s *tracepb.Span) bool { return spanAttr(s, "mcp.method.name") == "initialize" })
	require.Len(t, spans, 1, "the initialize span is flushed at shutdown\n%s", stderrOf(p))
}

// With Redis, the round trips a request makes are client spans under its
// server span: initialize writes the session.
func TestTracingRedisRoundTrips(t *testing.T) {
	srv := redistest.Standalone(t)
	prefix := redistest.Prefix(t)
	redistest.Cleanup(t, srv.Client(t), prefix)
	col, colURL := startCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", colURL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	p := startGateway(t, "--demo", "--listen", freeAddr(t), "--redis-url", srv.URL, "--redis-prefix", prefix)

	const trace = "3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c"
	r := (&mcpConn{url: p.url}).send(t, map[string]string{"traceparent": "00-" + trace + "-2222222222222222-01"}, tracedInitialize)
	require.Equal(t, http.StatusOK, r.status)

	require.Eventually(t, func() bool {
		servers := col.find(trace, func(s *tracepb.Span) bool { return s.Kind == tracepb.Span_SPAN_KIND_SERVER })
		if len(servers) != 1 {
			return false
		}
		redisSpans := col.find(trace, func(s *tracepb.Span) bool {
			return s.Kind == tracepb.Span_SPAN_KIND_CLIENT && spanAttr(s, "db.system.name") == "redis" &&
				hex.EncodeToString(s.ParentSpanId) == hex.EncodeToString(servers[0].SpanId)
		})
		return len(redisSpans) > 0
	}, 20*time.Second, 20*time.Millisecond, "initialize's Redis commands are spans under its server span\n%s", stderrOf(p))
}

// A GET push stream opened with a traceparent is no part of the caller's
// trace: its keep-alive ticks look the session up in Redis every tick,
// and none of that is a span, however long the stream stays open.
func TestTracingGETStreamMakesNoSpans(t *testing.T) {
	srv := redistest.Standalone(t)
	prefix := redistest.Prefix(t)
	redistest.Cleanup(t, srv.Client(t), prefix)
	col, colURL := startCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", colURL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	p := startGateway(t, "--demo", "--listen", freeAddr(t), "--redis-url", srv.URL, "--redis-prefix", prefix, "--sse-keepalive", "50ms")
	sid := initialize(t, p.url)

	const streamTrace, afterTrace = "4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d", "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e"
	req, err := http.NewRequest(http.MethodGet, p.url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("traceparent", "00-"+streamTrace+"-3333333333333333-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	keepAlives := make(chan struct{}, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), ": keep-alive") {
				select {
				case keepAlives <- struct{}{}:
				default:
				}
			}
		}
	}()
	for range 5 {
		select {
		case <-keepAlives:
		case <-time.After(20 * time.Second):
			t.Fatalf("no keep-alive on the stream\n%s", stderrOf(p))
		}
	}

	// A request's spans after the ticks: once they are exported, so is
	// whatever the ticks made before them (one queue, in order).
	r := (&mcpConn{url: p.url, sid: sid}).send(t, map[string]string{"traceparent": "00-" + afterTrace + "-4444444444444444-01"},
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, r.status)
	require.Eventually(t, func() bool {
		return len(col.find(afterTrace, func(s *tracepb.Span) bool { return s.Kind == tracepb.Span_SPAN_KIND_SERVER })) == 1
	}, 20*time.Second, 20*time.Millisecond, "the later request's span is exported\n%s", stderrOf(p))

	names := map[string]int{}
	for _, s := range col.find(streamTrace, func(*tracepb.Span) bool { return true }) {
		names[s.Name]++
	}
	require.Empty(t, names, "spans in the GET stream's trace")
}
