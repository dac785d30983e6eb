package main

// In-process benchmarks of the hot path, for allocations per call (and
// profiles: go test -bench HotPath/1k/gateway -cpuprofile cpu.out ./bench).
//
// Each case serves one request through a handler called directly (no HTTP
// server in front), which then calls the backend over loopback:
//
//   - direct: a bare http.Client GET of the backend (the client side alone);
//   - proxy: httputil.ReverseProxy with the gateway's transport settings;
//   - gateway: gateway.Server's full handler (echo included) answering
//     tools/call on a live 2025-06-18 session with the memory store;
//   - gateway-stateless: the same call in the 2026-07-28 revision.
//
// Set BENCH_BACKEND_URL to a backend in another process (go run ./bench
// does) so that the backend's own allocations are not counted; without it an
// httptest backend runs in this process and adds the same allocations to
// every case.

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

func benchBackend(tb testing.TB) string {
	if u := os.Getenv("BENCH_BACKEND_URL"); u != "" {
		return u
	}
	srv := httptest.NewServer(backendHandler())
	tb.Cleanup(srv.Close)
	return srv.URL
}

// newGateway builds the gateway the binary builds for the bench backend:
// memory store, default settings, bound (nominally) to loopback; with tp
// (nil: none), traced as the binary traces (server spans, and client spans
// of the backend calls named by their path templates).
func newGateway(tb testing.TB, backend string, tp gateway.TracerProvider) (*gateway.Server, http.Handler) {
	tb.Helper()
	ctx := context.Background()
	doc, err := openapi.LoadData(ctx, openAPIDoc(backend), "bench-openapi.json", openapi.LoadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	set, err := toolgen.Generate(doc, toolgen.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	callCfg := call.Config{BaseURL: backend}
	if tp != nil {
		callCfg.Transport, callCfg.PathTemplates = gateway.TraceBackend(call.NewTransport(), tp, "bench"), true
	}
	caller, err := call.NewCaller(doc, callCfg)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := gateway.New(gateway.Config{ListenAddr: "127.0.0.1:8080"}, gateway.Deps{Logger: slog.New(slog.DiscardHandler), TracerProvider: tp})
	if err != nil {
		tb.Fatal(err)
	}
	srv.SetCatalog(gateway.Catalog{Doc: doc, Tools: set, Caller: caller})
	return srv, srv.Handler(nil)
}

// sinkWriter is a reusable ResponseWriter that keeps the last body.
type sinkWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func newSinkWriter() *sinkWriter { return &sinkWriter{h: http.Header{}} }

func (s *sinkWriter) Header() http.Header { return s.h }
func (s *sinkWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}
func (s *sinkWriter) Write(p []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return s.body.Write(p)
}
func (s *sinkWriter) Flush() {}
func (s *sinkWriter) reset() {
	clear(s.h)
	s.status = 0
	s.body.Reset()
}

const mcpURL = "http://127.0.0.1:8080/mcp"

// serveMCP sends one MCP message through h and returns the writer.
func serveMCP(h http.Handler, w *sinkWriter, hdr http.Header, body []byte) *sinkWriter {
	w.reset()
	req, _ := http.NewRequest(http.MethodPost, mcpURL, bytes.NewReader(body))
	req.Header = hdr
	h.ServeHTTP(w, req)
	return w
}

// benchSession opens a session on h the way a client does.
func benchSession(tb testing.TB, h http.Handler) string {
	w := serveMCP(h, newSinkWriter(), mcpHeader(), []byte(initBody))
	sid := w.h.Get("Mcp-Session-Id")
	if w.status != http.StatusOK || sid == "" {
		tb.Fatalf("initialize: %d %s", w.status, w.body.Bytes())
	}
	hdr := mcpHeader()
	hdr.Set("Mcp-Session-Id", sid)
	hdr.Set("MCP-Protocol-Version", sessionVersion)
	w = serveMCP(h, newSinkWriter(), hdr, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if w.status != http.StatusAccepted {
		tb.Fatalf("notifications/initialized: %d %s", w.status, w.body.Bytes())
	}
	return sid
}

func BenchmarkHotPath(b *testing.B) {
	backend := benchBackend(b)
	target, err := url.Parse(backend)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range sizes {
		b.Run(size+"/direct", func(b *testing.B) {
			spec := restSpec(backend, size)
			client := &http.Client{Transport: newTransport()}
			w := newWorker(spec, client)
			b.ReportAllocs()
			for b.Loop() {
				if err := w.do(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(size+"/proxy", func(b *testing.B) {
			proxy := newProxy(target)
			spec := restSpec("http://127.0.0.1:8080", size)
			w := newSinkWriter()
			b.ReportAllocs()
			for b.Loop() {
				w.reset()
				req, _ := http.NewRequest(http.MethodGet, spec.url, nil)
				req.Header = spec.header
				proxy.ServeHTTP(w, req)
				if !spec.ok(w.status, w.body.Bytes()) {
					b.Fatalf("proxy: %d %.200s", w.status, w.body.Bytes())
				}
			}
		})
		b.Run(size+"/gateway", func(b *testing.B) {
			_, h := newGateway(b, backend, nil)
			benchGatewayCalls(b, h, sessionSpec(mcpURL, benchSession(b, h), size))
		})
		b.Run(size+"/gateway-stateless", func(b *testing.B) {
			_, h := newGateway(b, backend, nil)
			benchGatewayCalls(b, h, statelessSpec(mcpURL, size))
		})
	}
}

// benchGatewayCalls serves spec's call through h for every iteration,
// failing on an answer spec does not accept.
func benchGatewayCalls(b *testing.B, h http.Handler, spec *callSpec) {
	body := spec.body(nil, 1)
	w := newSinkWriter()
	b.ReportAllocs()
	for b.Loop() {
		serveMCP(h, w, spec.header, body)
		if !spec.ok(w.status, w.body.Bytes()) {
			b.Fatalf("gateway: %d %.200s", w.status, w.body.Bytes())
		}
	}
}

// BenchmarkIdleSession reports the live heap each session adds to a gateway
// with the memory store (B/session): "idle" sessions were initialized and
// left alone; "recent" ones also answered a ping, so the replica's session
// cache holds them too (for SessionCacheTTL, 2s by default). Run it with a
// fixed count, e.g. -benchtime 10000x.
func BenchmarkIdleSession(b *testing.B) {
	for _, recent := range []bool{false, true} {
		name := "idle"
		if recent {
			name = "recent"
		}
		b.Run(name, func(b *testing.B) {
			srv, h := newGateway(b, "http://127.0.0.1:9", nil)
			w := newSinkWriter()
			init := []byte(initBody)
			ping := []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			hdr := mcpHeader()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for b.Loop() {
				serveMCP(h, w, mcpHeader(), init)
				if w.status != http.StatusOK {
					b.Fatalf("initialize: %d", w.status)
				}
				if recent {
					hdr.Set("Mcp-Session-Id", w.h.Get("Mcp-Session-Id"))
					hdr.Set("MCP-Protocol-Version", sessionVersion)
					if serveMCP(h, w, hdr, ping).status != http.StatusOK {
						b.Fatalf("ping: %d %s", w.status, w.body.Bytes())
					}
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "B/session")
			runtime.KeepAlive(srv)
			runtime.KeepAlive(h)
		})
	}
}
