package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// TraceBackend wraps the call path's transport (toolgen/call's
// Config.Transport) so that each backend request made on behalf of a
// traced MCP request is a client span, child of the request's server span,
// and the backend is told in traceparent. toolgen stays free of
// OpenTelemetry: the request's context carries the span down to it, and
// the operation's path template (call.PathTemplate: set
// Config.PathTemplates with this transport).
func TraceBackend(next http.RoundTripper, tp TracerProvider, version string) http.RoundTripper {
	return &tracedTransport{next: next, tracer: tp.Tracer("github.com/mcp-gateway/mcp-gateway/gateway/backend", trace.WithInstrumentationVersion(version))}
}

// tracedTransport makes a client span of each backend request made on
// behalf of a traced MCP request, and tells the backend in traceparent.
// Hand-written rather than otelhttp's: no URL is recorded, only the
// operation's path template, the scheme and the host (the path and the
// query carry the tool's arguments, and backend API keys may travel in the
// query), and a transport error is recorded by kind, not by its text
// (which quotes the URL).
type tracedTransport struct {
	next   http.RoundTripper
	tracer trace.Tracer
}

func (t *tracedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !InServerSpan(ctx) || !trace.SpanContextFromContext(ctx).IsValid() {
		// Background work (a subscription's poll): no span to hang on.
		return t.next.RoundTrip(req)
	}
	ctx, span := t.tracer.Start(ctx, req.Method, trace.WithSpanKind(trace.SpanKindClient))
	// An unsampled span still tells the backend the trace and the
	// decision; only a recording one is worth its attributes.
	out := req.Clone(ctx)
	traceContext.Inject(ctx, propagation.HeaderCarrier(out.Header))
	if !span.IsRecording() {
		span.End()
		return t.next.RoundTrip(out)
	}
	span.SetAttributes(
		attribute.String("http.request.method", req.Method),
		attribute.String("url.scheme", req.URL.Scheme),
		attribute.String("server.address", req.URL.Hostname()))
	if tmpl := call.PathTemplate(ctx); tmpl != "" {
		// Low cardinality: the document's paths, named as the semantic
		// conventions name a client span that knows its template.
		span.SetName(req.Method + " " + tmpl)
		span.SetAttributes(attribute.String("url.template", tmpl))
	}
	if p, err := strconv.Atoi(req.URL.Port()); err == nil {
		span.SetAttributes(attribute.Int("server.port", p))
	}
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		kind := "transport"
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			kind = "timeout"
		case errors.Is(err, context.Canceled):
			kind = "cancelled"
		}
		span.SetAttributes(attribute.String("error.type", kind))
		span.SetStatus(codes.Error, kind)
		span.End()
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetAttributes(attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
		span.SetStatus(codes.Error, "")
	}
	// The span lasts until the answer is read: the body is part of it.
	resp.Body = &spanBody{ReadCloser: resp.Body, span: span}
	return resp, nil
}

// spanBody ends its span when the body is closed.
type spanBody struct {
	io.ReadCloser
	span trace.Span
	once sync.Once
}

func (b *spanBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.span.End() })
	return err
}
