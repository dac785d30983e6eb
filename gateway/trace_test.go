package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/resources"
	"github.com/mcp-gateway/mcp-gateway/internal/demo"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// tracedGateway is a gateway with an in-memory span exporter, in front of
// the demo backend, whose transport records the span context each backend
// request's context carries.
type tracedGateway struct {
	*testGateway
	spans *tracetest.InMemoryExporter
	mu    sync.Mutex
	seen  []trace.SpanContext // of the backend requests, in order
}

func newTracedGateway(t *testing.T) *tracedGateway {
	t.Helper()
	return newTracedGatewayWith(t, Config{})
}

func newTracedGatewayWith(t *testing.T, cfg Config) *tracedGateway {
	t.Helper()
	return newTracedGatewayOn(t, cfg, demo.OpenAPI(), demo.New().Handler(), false)
}

// newTracedGatewayOn is a traced gateway in front of api (served by
// handler); with traceBackend, its backend requests go through
// TraceBackend as the binary's do (seen then records the client spans).
func newTracedGatewayOn(t *testing.T, cfg Config, api []byte, handler http.Handler, traceBackend bool, mw ...mcp.Middleware) *tracedGateway {
	t.Helper()
	tg := &tracedGateway{spans: tracetest.NewInMemoryExporter()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tg.spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

	backend := httptest.NewServer(handler)
	t.Cleanup(backend.Close)
	ctx := context.Background()
	d, err := openapi.LoadData(ctx, api, "test/openapi.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	set, err := toolgen.Generate(d, toolgen.Options{})
	require.NoError(t, err)
	var rt http.RoundTripper = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		tg.mu.Lock()
		tg.seen = append(tg.seen, trace.SpanContextFromContext(r.Context()))
		tg.mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})
	if traceBackend {
		rt = TraceBackend(rt, tp, "test")
	}
	caller, err := call.NewCaller(d, call.Config{BaseURL: backend.URL, Transport: rt, PathTemplates: traceBackend})
	require.NoError(t, err)
	cfg.ListenAddr = "127.0.0.1:0"
	srv, err := New(cfg, Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), TracerProvider: tp, Middleware: mw})
	require.NoError(t, err)
	srv.SetCatalog(Catalog{Doc: d, Tools: set, Caller: caller})
	hs := httptest.NewServer(srv.Handler(nil))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = srv.Run(runCtx); close(done) }()
	t.Cleanup(func() { stop(); <-done; hs.Close() })
	tg.testGateway = &testGateway{srv: srv, url: hs.URL + srv.cfg.MountPath, hs: hs}
	return tg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// serverSpan is the one server span of method since the last reset.
func (tg *tracedGateway) serverSpan(t *testing.T, method string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range tg.spans.GetSpans() {
		if s.SpanKind == trace.SpanKindServer && attrOf(s, "mcp.method.name") == method {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "server spans of %s", method)
	return found[0]
}

func (tg *tracedGateway) reset() {
	tg.spans.Reset()
	tg.mu.Lock()
	tg.seen = nil
	tg.mu.Unlock()
}

func (tg *tracedGateway) backendContexts() []trace.SpanContext {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]trace.SpanContext(nil), tg.seen...)
}

func attrOf(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

const (
	clientTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan   = "00f067aa0ba902b7"
	clientParent = "00-" + clientTrace + "-" + clientSpan + "-01"
	metaTrace    = "0af7651916cd43dd8448eb211c80319c"
	metaSpan     = "b7ad6b7169203331"
	metaParent   = "00-" + metaTrace + "-" + metaSpan + "-01"
)

func tracedModernBody(id, method, params, meta string) string {
	m := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	if meta != "" {
		m += "," + meta
	}
	p := `{"_meta":{` + m + `}`
	if params != "" {
		p += "," + params
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + p + `}}`
}

func TestTraceSessionCallFromHeaders(t *testing.T) {
	tg := newTracedGateway(t)
	sid := tg.initialize(t, "2025-06-18")
	init := tg.serverSpan(t, "initialize")
	require.False(t, init.Parent.IsValid(), "initialize without traceparent starts a trace")
	tg.reset()

	r := tg.do(t, exchange{
		body:    `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"listNotes","arguments":{}}}`,
		headers: map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18", "traceparent": clientParent, "tracestate": "vendor=1"},
	})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	span := tg.serverSpan(t, "tools/call")
	require.Equal(t, "tools/call listNotes", span.Name)
	require.Equal(t, clientTrace, span.SpanContext.TraceID().String())
	require.Equal(t, clientSpan, span.Parent.SpanID().String())
	require.True(t, span.Parent.IsRemote())
	require.Equal(t, "vendor=1", span.SpanContext.TraceState().String())
	require.Equal(t, "listNotes", attrOf(span, "gen_ai.tool.name"))
	require.Equal(t, "session", attrOf(span, "mcpgw.era"))
	require.Equal(t, "2025-06-18", attrOf(span, "mcp.protocol.version"))
	require.Equal(t, "ok", attrOf(span, "mcpgw.outcome"))
	require.Equal(t, "7", attrOf(span, "jsonrpc.request.id"))
	require.Equal(t, audit.HashSession(sid), attrOf(span, "mcpgw.session.hash"))
	for _, s := range tg.spans.GetSpans() {
		for _, kv := range s.Attributes {
			require.NotContains(t, kv.Value.Emit(), sid, "a span records the raw session id (%s)", kv.Key)
		}
	}
	// The backend call runs in the server span's context.
	seen := tg.backendContexts()
	require.Len(t, seen, 1)
	require.Equal(t, span.SpanContext.SpanID(), seen[0].SpanID())
	require.Equal(t, span.SpanContext.TraceID(), seen[0].TraceID())
}

func TestTraceStatelessMetaWins(t *testing.T) {
	tg := newTracedGateway(t)
	for _, tc := range []struct {
		name, meta, header    string
		wantTrace, wantParent string // empty: a new trace
	}{
		{name: "meta only", meta: `"traceparent":"` + metaParent + `","tracestate":"m=1"`, wantTrace: metaTrace, wantParent: metaSpan},
		{name: "meta over header", meta: `"traceparent":"` + metaParent + `"`, header: clientParent, wantTrace: metaTrace, wantParent: metaSpan},
		{name: "header only", header: clientParent, wantTrace: clientTrace, wantParent: clientSpan},
		{name: "malformed meta falls back to header", meta: `"traceparent":"00-xyz-abc-01"`, header: clientParent, wantTrace: clientTrace, wantParent: clientSpan},
		{name: "meta of the wrong type is ignored", meta: `"traceparent":42`, header: clientParent, wantTrace: clientTrace, wantParent: clientSpan},
		{name: "all-zero trace id is ignored", meta: `"traceparent":"00-00000000000000000000000000000000-` + metaSpan + `-01"`},
		{name: "malformed header", header: "00-" + clientTrace + "-nothex-01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg.reset()
			h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "listNotes"}
			if tc.header != "" {
				h["traceparent"] = tc.header
			}
			r := tg.do(t, exchange{body: tracedModernBody("3", "tools/call", `"name":"listNotes","arguments":{}`, tc.meta), headers: h})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			span := tg.serverSpan(t, "tools/call")
			require.Equal(t, "2026-07-28", attrOf(span, "mcpgw.era"))
			require.Empty(t, attrOf(span, "mcpgw.session.hash"))
			if tc.wantTrace == "" {
				require.False(t, span.Parent.IsValid(), "parent %v", span.Parent)
			} else {
				require.Equal(t, tc.wantTrace, span.SpanContext.TraceID().String())
				require.Equal(t, tc.wantParent, span.Parent.SpanID().String())
			}
			seen := tg.backendContexts()
			require.Len(t, seen, 1)
			require.Equal(t, span.SpanContext.SpanID(), seen[0].SpanID())
		})
	}
}

// In a session, params._meta carries no trace context the gateway reads:
// the 2026-07-28 era's rule only.
func TestTraceSessionIgnoresMeta(t *testing.T) {
	tg := newTracedGateway(t)
	sid := tg.initialize(t, "2025-11-25")
	tg.reset()
	r := tg.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"traceparent":"`+metaParent+`"}}}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	span := tg.serverSpan(t, "tools/list")
	require.False(t, span.Parent.IsValid())
	require.NotEqual(t, metaTrace, span.SpanContext.TraceID().String())
}

func TestTraceOutcomes(t *testing.T) {
	tg := newTracedGateway(t)
	sid := tg.initialize(t, "2025-06-18")
	for _, tc := range []struct {
		name, body, method, outcome, errorType string
		status                                 codes.Code
	}{
		{name: "unknown tool", method: "tools/call", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`,
			outcome: "error", errorType: "-32602", status: codes.Error},
		{name: "tool error", method: "tools/call", body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"getNote","arguments":{"id":"missing"}}}`,
			outcome: "tool_error", errorType: "tool_error", status: codes.Error},
		{name: "unknown method", method: "nope/nope", body: `{"jsonrpc":"2.0","id":3,"method":"nope/nope"}`,
			outcome: "error", errorType: "-32601", status: codes.Error},
		{name: "ping", method: "ping", body: `{"jsonrpc":"2.0","id":4,"method":"ping"}`, outcome: "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg.reset()
			r := tg.sessionCall(t, sid, "2025-06-18", tc.body)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			span := tg.serverSpan(t, tc.method)
			require.Equal(t, tc.outcome, attrOf(span, "mcpgw.outcome"))
			require.Equal(t, tc.errorType, attrOf(span, "error.type"))
			require.Equal(t, tc.status, span.Status.Code)
		})
	}
	tg.reset()
	_ = tg.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":5,"method":"nope/x"}`)
	require.Equal(t, "unknown method", tg.serverSpan(t, "nope/x").Name, "a span is not named after a method the client made up")
	tg.reset()
	_ = tg.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"madeUp"}}`)
	span := tg.serverSpan(t, "tools/call")
	require.Equal(t, "tools/call", span.Name, "nor after a tool the client made up")
	require.Equal(t, "madeUp", attrOf(span, "gen_ai.tool.name"))
}

// A refusal is the audit log's "denied", with the check that refused.
func TestTraceDenied(t *testing.T) {
	tg := newTracedGatewayWith(t, Config{ToolCallLimit: quota.Limit{Rate: 1e-6, Burst: 1}})
	sid := tg.initialize(t, "2025-06-18")
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"listNotes","arguments":{}}}`
	tg.reset()
	require.Equal(t, http.StatusOK, tg.sessionCall(t, sid, "2025-06-18", call).status)
	require.Equal(t, "ok", attrOf(tg.serverSpan(t, "tools/call"), "mcpgw.outcome"))
	tg.reset()
	require.Equal(t, http.StatusOK, tg.sessionCall(t, sid, "2025-06-18", call).status)
	span := tg.serverSpan(t, "tools/call")
	require.Equal(t, "denied", attrOf(span, "mcpgw.outcome"))
	require.Equal(t, "rate_limited", attrOf(span, "mcpgw.denied.reason"))
	require.Equal(t, codes.Error, span.Status.Code)
	require.Empty(t, tg.backendContexts(), "a refused call reaches no backend")
}

// A batch is one span per member.
func TestTraceBatchMembers(t *testing.T) {
	tg := newTracedGateway(t)
	sid := tg.initialize(t, "2025-03-26")
	tg.reset()
	r := tg.do(t, exchange{
		body:    `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`,
		headers: map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26", "traceparent": clientParent},
	})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	for _, m := range []string{"ping", "tools/list"} {
		span := tg.serverSpan(t, m)
		require.Equal(t, clientSpan, span.Parent.SpanID().String())
	}
}

// Off, no hook reads a header or touches the request: the request value
// is what it would be without tracing.
func TestTraceOffTouchesNothing(t *testing.T) {
	s := &Server{}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("traceparent", clientParent)
	require.Same(t, r, s.withTraceHeaders(r))
	ctx := context.Background()
	require.Equal(t, ctx, s.withTraceMeta(ctx, []byte(`{"_meta":{"traceparent":"`+metaParent+`"}}`)))
	require.Nil(t, newTracer(nil, "v"))
	allocs := testing.AllocsPerRun(100, func() { _ = s.withTraceHeaders(r) })
	require.Zero(t, allocs)
}

// Only a POST (JSON-RPC requests) takes the caller's trace: a GET push
// stream, open for hours, is no part of it. And a caller's span alone is
// not the gateway's: nothing is done in it until a server span starts.
func TestTraceOnlyPOSTTakesTheCallersTrace(t *testing.T) {
	tg := newTracedGateway(t)
	get := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	get.Header.Set("traceparent", clientParent)
	require.Same(t, get, tg.srv.withTraceHeaders(get))
	post := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	post.Header.Set("traceparent", clientParent)
	ctx := tg.srv.withTraceHeaders(post).Context()
	require.Equal(t, clientTrace, trace.SpanContextFromContext(ctx).TraceID().String())
	require.False(t, InServerSpan(ctx), "the caller's span is not a server span of the gateway's")
}

// A subscriptions/listen stream runs outside its span, which ended when
// the stream was admitted: neither what it reads to start (the resource's
// baseline) nor its polls are spans of the caller's trace.
func TestTraceListenStreamOutsideItsSpan(t *testing.T) {
	b := &stockBackend{level: 1}
	tg := newTracedGatewayOn(t, Config{SubscriptionLeaseTTL: 300 * time.Millisecond}, []byte(stockDoc), b, true)
	body := `{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["` + stockURI + `"]},` + modernMeta + `}}`
	resp, cancel := sendStreamRequest(t, http.MethodPost, tg.url, body,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen", "traceparent": clientParent})
	stream := &sseClient{eventStream[sseEvent]{resp: resp, cancel: cancel, events: readSSE(resp.Body)}}
	t.Cleanup(stream.close)
	ack := stream.nextMessage(t)
	require.Equal(t, "notifications/subscriptions/acknowledged", ack["method"], "%v", ack)
	require.Equal(t, map[string]any{"resourceSubscriptions": []any{stockURI}}, ack["params"].(map[string]any)["notifications"])
	require.Eventually(t, func() bool { return b.stockGETs() >= 2 }, 10*time.Second, 20*time.Millisecond,
		"the baseline is read and the resource polled")

	span := tg.serverSpan(t, "subscriptions/listen")
	require.Equal(t, clientSpan, span.Parent.SpanID().String())
	for _, s := range tg.spans.GetSpans() {
		require.Equal(t, trace.SpanKindServer, s.SpanKind, "a span of the stream's work: %s under %s", s.Name, s.Parent.SpanID())
	}
	for _, sc := range tg.backendContexts() {
		require.False(t, sc.IsValid(), "a backend request of the stream carries a trace")
	}
}

// A backend request's span is named and described by the operation's path
// template, never by the path the arguments made; a resource URI is
// recorded without its query and fragment.
func TestTraceRecordsTemplatesNotArguments(t *testing.T) {
	page := "owner {{.owner}}"
	tg := newTracedGatewayOn(t, Config{Resources: []resources.Declared{{URITemplate: "notes://by-owner/{owner}", Text: &page}}},
		demo.OpenAPI(), demo.New().Handler(), true)
	sid := tg.initialize(t, "2025-06-18")
	tg.reset()
	r := tg.do(t, exchange{
		body:    `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"downloadFile","arguments":{"name":"alice.example.com"}}}`,
		headers: map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18", "traceparent": clientParent},
	})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	server := tg.serverSpan(t, "tools/call")
	var clients []tracetest.SpanStub
	for _, s := range tg.spans.GetSpans() {
		if s.SpanKind == trace.SpanKindClient {
			clients = append(clients, s)
		}
	}
	require.Len(t, clients, 1, "%s", r.body)
	client := clients[0]
	require.Equal(t, server.SpanContext.SpanID(), client.Parent.SpanID())
	require.Equal(t, "GET /files/{name}/download", client.Name)
	require.Equal(t, "/files/{name}/download", attrOf(client, "url.template"))
	require.Equal(t, "http", attrOf(client, "url.scheme"))
	require.Empty(t, attrOf(client, "url.full"))
	for _, s := range tg.spans.GetSpans() {
		for _, kv := range s.Attributes {
			require.NotContains(t, kv.Value.Emit(), "alice", "%s records an argument (%s)", s.Name, kv.Key)
		}
	}

	tg.reset()
	_ = tg.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"notes://x/y?q=alice#alice"}}`)
	require.Equal(t, "notes://x/y", attrOf(tg.serverSpan(t, "resources/read"), "mcp.resource.uri"), "an unknown URI, cut")

	tg.reset()
	r = tg.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"notes://by-owner/alice"}}`)
	require.Contains(t, string(r.body), "owner alice")
	span := tg.serverSpan(t, "resources/read")
	require.Equal(t, "notes://by-owner/{owner}", attrOf(span, "mcpgw.resource.template"), "a templated resource, by its template")
	require.Empty(t, attrOf(span, "mcp.resource.uri"))
}

// The policy webhook's asks, given the traced client the binary gives
// them, are client spans of the call they are for, and the hook is told.
func TestTraceWebhookAsk(t *testing.T) {
	var seen string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Get("traceparent")
		_, _ = io.WriteString(w, `{"allowed":true}`)
	}))
	t.Cleanup(hook.Close)
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tg := newTracedGatewayWith(t, Config{Policy: Policy{Webhook: &Webhook{URL: hook.URL,
		Client: &http.Client{Transport: TraceBackend(http.DefaultTransport, tp, "test")}}}})
	sid := tg.initialize(t, "2025-06-18")
	tg.reset()
	r := tg.do(t, exchange{
		body:    `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"listNotes","arguments":{}}}`,
		headers: map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18", "traceparent": clientParent},
	})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	server := tg.serverSpan(t, "tools/call")
	asks := spans.GetSpans()
	require.Len(t, asks, 1)
	require.Equal(t, "POST", asks[0].Name)
	require.Equal(t, server.SpanContext.SpanID(), asks[0].Parent.SpanID())
	require.Equal(t, "00-"+clientTrace+"-"+asks[0].SpanContext.SpanID().String()+"-01", seen)
}

// A stream the chain refuses is one span, with the refusal: its answer
// goes through dispatch, which does not span it again.
func TestTraceRefusedStreamIsOneSpan(t *testing.T) {
	quiet := func(next mcp.Handler) mcp.Handler {
		return func(r *mcp.Request) (any, error) {
			if r.Method == "subscriptions/listen" {
				return nil, mcp.InvalidParams("not today")
			}
			return next(r)
		}
	}
	tg := newTracedGatewayOn(t, Config{}, demo.OpenAPI(), demo.New().Handler(), false, quiet)
	r := tg.modern(t, 1, "subscriptions/listen", `"notifications":{}`, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, mcp.CodeInvalidParams, r.errCode(t))
	span := tg.serverSpan(t, "subscriptions/listen")
	require.Equal(t, "error", attrOf(span, "mcpgw.outcome"))
	require.Len(t, tg.spans.GetSpans(), 1)
}
