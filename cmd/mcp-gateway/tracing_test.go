package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

func TestTracingOnOrOff(t *testing.T) {
	const endpoint = "http://collector:4318"
	for _, tc := range []struct {
		name    string
		tracing string
		env     map[string]string
		on      bool
		errHas  string // a configError naming this
	}{
		{name: "auto without endpoint", tracing: "auto"},
		{name: "auto with endpoint", tracing: "auto", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}, on: true},
		{name: "auto with traces endpoint", tracing: "auto", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint + "/v1/traces"}, on: true},
		{name: "auto, SDK disabled", tracing: "auto", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SDK_DISABLED": "true"}},
		{name: "auto, exporter none", tracing: "auto", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_EXPORTER": "none"}},
		{name: "off wins", tracing: "off", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}},
		{name: "otlp without endpoint", tracing: "otlp", on: true},
		{name: "http/protobuf", tracing: "auto", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, on: true},
		{name: "grpc refused", tracing: "auto", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, errHas: "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{name: "traces protocol first", tracing: "otlp", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, errHas: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"},
		{name: "other exporter", tracing: "otlp", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, errHas: "OTEL_TRACES_EXPORTER"},
		{name: "endpoint not a URL", tracing: "auto", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, errHas: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{name: "ratio sampler", tracing: "otlp", env: map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"}, on: true},
		{name: "unknown sampler", tracing: "otlp", env: map[string]string{"OTEL_TRACES_SAMPLER": "sometimes"}, errHas: "OTEL_TRACES_SAMPLER"},
		{name: "ratio out of range", tracing: "otlp", env: map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, errHas: "OTEL_TRACES_SAMPLER_ARG"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			on, err := tracingOn(&config{Tracing: tc.tracing}, func(k string) string { return tc.env[k] })
			if tc.errHas != "" {
				var ce *configError
				require.ErrorAs(t, err, &ce)
				require.Contains(t, err.Error(), tc.errHas)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.on, on)
		})
	}
}

func TestTracingKeyFromEveryPlace(t *testing.T) {
	c, _, err := loadConfig("t", []string{"--demo"}, env(nil), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, "auto", c.Tracing)
	c, _, err = loadConfig("t", []string{"--demo"}, env(map[string]string{"MCPGW_TRACING": "otlp"}), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, "otlp", c.Tracing)
	_, _, err = loadConfig("t", []string{"--demo", "--tracing", "jaeger"}, env(nil), &bytes.Buffer{})
	require.Error(t, err)
}

// Off, nothing is built: the gateway gets no provider and the backend its
// default transport.
func TestTracingOffBuildsNothing(t *testing.T) {
	tr, err := newTracing(context.Background(), &config{Tracing: "off"}, env(nil), "r", http.DefaultTransport, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.Nil(t, tr)
	require.Nil(t, tr.tracerProvider())
	require.Nil(t, tr.backendTransport())
	require.Nil(t, tr.webhookClient())
	tr.traceRedis(nil)
	tr.shutdown(context.Background(), nil)
}

// A Redis command joins the trace of the request it is made for; one made
// outside the gateway's server span makes no span: background work, and
// work under a caller's traceparent alone (a GET push stream's touches).
func TestTracingRedisCommands(t *testing.T) {
	srv := redistest.Standalone(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	prefix := redistest.Prefix(t)
	redistest.Cleanup(t, rdb, prefix)

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	(&tracing{provider: tp}).traceRedis(rdb)

	ctx := context.Background()
	require.NoError(t, rdb.Set(ctx, prefix+"k", "v", 0).Err())
	require.Empty(t, spans.GetSpans(), "a command outside a trace makes no span")

	remote := trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled}))
	require.NoError(t, rdb.Get(remote, prefix+"k").Err())
	_, err := rdb.Pipelined(remote, func(p redis.Pipeliner) error { p.Get(remote, prefix+"k"); return nil })
	require.NoError(t, err)
	require.Empty(t, spans.GetSpans(), "a command under a caller's span alone makes no span")
	other, span := tp.Tracer("test").Start(remote, "not the gateway's")
	require.NoError(t, rdb.Get(other, prefix+"k").Err())
	span.End()
	require.Len(t, spans.GetSpans(), 1, "a command under a span the gateway did not mark makes no span")
	spans.Reset()

	ctx, parent := tp.Tracer("test").Start(ctx, "request")
	ctx = gateway.ServerSpanContext(ctx)
	require.ErrorIs(t, rdb.Get(ctx, prefix+"missing").Err(), redis.Nil)
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, prefix+"k")
		p.Get(ctx, prefix+"k")
		return nil
	})
	require.NoError(t, err)
	parent.End()

	got := map[string]tracetest.SpanStub{}
	for _, s := range spans.GetSpans() {
		got[s.Name] = s
	}
	for _, name := range []string{"get", "pipeline"} {
		s, ok := got[name]
		require.True(t, ok, "a span of %s: %v", name, spans.GetSpans())
		require.Equal(t, trace.SpanKindClient, s.SpanKind)
		require.Equal(t, parent.SpanContext().SpanID(), s.Parent.SpanID())
		for _, kv := range s.Attributes {
			require.NotContains(t, kv.Value.Emit(), prefix, "a span records the command's arguments")
		}
	}
	require.Equal(t, "Unset", got["get"].Status.Code.String(), "a missing key is not an error")
}

// The backend's transport sends the request's trace to the backend, and
// the URL (its path and query carry arguments and API keys) stays out of
// the span.
func TestTracingBackendTransport(t *testing.T) {
	var seen string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Get("traceparent")
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(backend.Close)
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	client := &http.Client{Transport: gateway.TraceBackend(http.DefaultTransport, tp, "test")}

	// Outside a trace, or under a caller's span alone: nothing sent, no
	// span.
	resp, err := client.Get(backend.URL + "/x?api_key=s3cret")
	require.NoError(t, err)
	resp.Body.Close()
	remote := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled}))
	req, _ := http.NewRequestWithContext(remote, http.MethodGet, backend.URL+"/x", nil)
	resp, err = client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Empty(t, seen)
	require.Empty(t, spans.GetSpans())

	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	ctx = gateway.ServerSpanContext(ctx)
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, backend.URL+"/customers/alice@example.com?api_key=s3cret", nil)
	resp, err = client.Do(req)
	require.NoError(t, err)
	require.Empty(t, req.Header.Get("traceparent"), "the caller's request is not modified")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	parent.End()
	var span tracetest.SpanStub
	for _, s := range spans.GetSpans() {
		if s.SpanKind == trace.SpanKindClient {
			span = s
		}
	}
	require.Equal(t, parent.SpanContext().SpanID(), span.Parent.SpanID())
	require.Equal(t, "00-"+parent.SpanContext().TraceID().String()+"-"+span.SpanContext.SpanID().String()+"-01", seen)
	require.Equal(t, "Error", span.Status.Code.String(), "a 418 is an error")
	require.Equal(t, "GET", span.Name, "no path template: the method alone")
	attrs := map[string]string{}
	for _, kv := range span.Attributes {
		require.NotContains(t, kv.Value.Emit(), "s3cret", "the span records the query (%s)", kv.Key)
		require.NotContains(t, kv.Value.Emit(), "alice", "the span records the path (%s)", kv.Key)
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	require.Equal(t, "http", attrs["url.scheme"])
	require.Equal(t, "127.0.0.1", attrs["server.address"])
	require.NotContains(t, attrs, "url.full")
}
