package main

// The hot path with tracing on: what BenchmarkHotPath's gateway cases cost
// when every call is a sampled trace (a server span, the backend call's
// client span, traceparent sent to the backend), exported through the
// SDK's batch processor to an exporter that drops the spans. Compare with
// BenchmarkHotPath/*/gateway* of the same run; the calls carry a
// traceparent, as a traced client's do.

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// discardExporter drops what the batch processor hands it.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// discardTracing is the tracing the binary sets up, batching to
// discardExporter.
func discardTracing(tb testing.TB) *sdktrace.TracerProvider {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}))
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp
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
				_, h := newGateway(b, backend, discardTracing(b))
				spec := sessionSpec(mcpURL, benchSession(b, h), size)
				spec.header.Set("traceparent", p.traceparent)
				benchGatewayCalls(b, h, spec)
			})
			b.Run(size+"/gateway-stateless"+p.name, func(b *testing.B) {
				_, h := newGateway(b, backend, discardTracing(b))
				spec := statelessSpec(mcpURL, size)
				spec.header.Set("traceparent", p.traceparent)
				benchGatewayCalls(b, h, spec)
			})
		}
	}
}
