package main

// The hot path with tracing on: what BenchmarkHotPath's gateway cases cost
// when every call is a sampled trace (a server span, the backend call's
// client span, traceparent sent to the backend), exported through the
// SDK's batch processor to an exporter that drops the spans. Compare with
// BenchmarkHotPath/*/gateway* of the same run; the calls carry a
// traceparent, as a traced client's do.

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// discardExporter drops what the batch processor hands it.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// newTracedGateway is newGateway with the tracing the binary sets up.
func newTracedGateway(tb testing.TB, backend string) http.Handler {
	tb.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}))
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx := context.Background()
	doc, err := openapi.LoadData(ctx, openAPIDoc(backend), "bench-openapi.json", openapi.LoadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	set, err := toolgen.Generate(doc, toolgen.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	caller, err := call.NewCaller(doc, call.Config{BaseURL: backend, Transport: gateway.TraceBackend(call.NewTransport(), tp, "bench"), PathTemplates: true})
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := gateway.New(gateway.Config{ListenAddr: "127.0.0.1:8080"}, gateway.Deps{Logger: slog.New(slog.DiscardHandler), TracerProvider: tp})
	if err != nil {
		tb.Fatal(err)
	}
	srv.SetCatalog(gateway.Catalog{Doc: doc, Tools: set, Caller: caller})
	return srv.Handler(nil)
}

func BenchmarkTracedHotPath(b *testing.B) {
	backend := benchBackend(b)
	// A sampled caller, and one whose trace was not sampled (what most
	// calls are under a ratio sampler): the spans then record nothing.
	parents := []struct{ name, traceparent string }{
		{"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{"-unsampled", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"},
	}
	for _, size := range sizes {
		for _, p := range parents {
			b.Run(size+"/gateway"+p.name, func(b *testing.B) {
				h := newTracedGateway(b, backend)
				spec := sessionSpec(mcpURL, benchSession(b, h), size)
				spec.header.Set("traceparent", p.traceparent)
				body := spec.body(nil, 1)
				w := newSinkWriter()
				b.ReportAllocs()
				for b.Loop() {
					serveMCP(h, w, spec.header, body)
					if !spec.ok(w.status, w.body.Bytes()) {
						b.Fatalf("gateway: %d %.200s", w.status, w.body.Bytes())
					}
				}
			})
			b.Run(size+"/gateway-stateless"+p.name, func(b *testing.B) {
				h := newTracedGateway(b, backend)
				spec := statelessSpec(mcpURL, size)
				spec.header.Set("traceparent", p.traceparent)
				body := spec.body(nil, 1)
				w := newSinkWriter()
				b.ReportAllocs()
				for b.Loop() {
					serveMCP(h, w, spec.header, body)
					if !spec.ok(w.status, w.body.Bytes()) {
						b.Fatalf("gateway: %d %.200s", w.status, w.body.Bytes())
					}
				}
			})
		}
	}
}
