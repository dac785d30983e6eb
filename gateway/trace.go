package gateway

// Tracing: a server span per JSON-RPC request, child of the caller's W3C
// trace context. The gateway uses only the OpenTelemetry API; the SDK and
// the exporter are cmd/mcp-gateway's (Deps.TracerProvider). The backend's
// client spans and the Redis spans hang below the server span because the
// request's context (mcp.Request.Ctx, from which CallContext derives) carries
// it down, marked as the gateway's (InServerSpan): they are made nowhere
// else.
//
// Off (no TracerProvider) must cost nothing on the hot path: every hook
// checks s.tracer first, so that no header is read, no _meta member decoded
// and nothing allocated.
//
// Where the caller's context comes from: the traceparent and tracestate
// HTTP headers of a POST, and in 2026-07-28 params._meta's traceparent
// and tracestate, which win when valid (the era has no session to hang a
// trace on, and an MCP client library writes its context where the protocol
// carries it, whatever proxy sits between). A malformed traceparent is
// ignored: the span then has the other source's parent, or starts a trace.

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

// TracerProvider is OpenTelemetry's (go.opentelemetry.io/otel/trace), named
// here so that Deps does not make every user of the gateway import it.
// OpenTelemetry appears only in this file and trace_backend.go.
type TracerProvider = trace.TracerProvider

type tracer = trace.Tracer

// newTracer is the tracer of the gateway's spans; nil when tp is.
func newTracer(tp TracerProvider, version string) tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer("github.com/mcp-gateway/mcp-gateway/gateway", trace.WithInstrumentationVersion(version))
}

// Span attributes. The mcp.*, gen_ai.*, jsonrpc.*, rpc.* and error.type
// names are OpenTelemetry's semantic conventions for MCP; mcpgw.* are the
// gateway's own. The session id itself is never recorded (it is a bearer
// credential for the session): mcpgw.session.hash is the audit log's hash
// of it, so that traces and audit records of one session match.
const (
	attrMethod      = attribute.Key("mcp.method.name")
	attrVersion     = attribute.Key("mcp.protocol.version")
	attrResourceURI = attribute.Key("mcp.resource.uri")
	attrResourceTpl = attribute.Key("mcpgw.resource.template")
	attrRequestID   = attribute.Key("jsonrpc.request.id")
	attrTool        = attribute.Key("gen_ai.tool.name")
	attrPrompt      = attribute.Key("gen_ai.prompt.name")
	attrOperation   = attribute.Key("gen_ai.operation.name")
	attrStatusCode  = attribute.Key("rpc.response.status_code")
	attrErrorType   = attribute.Key("error.type")
	attrEra         = attribute.Key("mcpgw.era")
	attrSession     = attribute.Key("mcpgw.session.hash")
	attrOutcome     = attribute.Key("mcpgw.outcome")
	attrReason      = attribute.Key("mcpgw.denied.reason")
)

// maxAttr bounds the client-chosen strings a span records.
const maxAttr = 256

var traceContext propagation.TraceContext

// withTraceHeaders is r with the caller's trace context from its headers,
// when tracing is on and it sent a valid one. Only a POST carries JSON-RPC
// requests (the spans); a GET push stream is not part of the caller's
// trace, however long it stays open.
func (s *Server) withTraceHeaders(r *http.Request) *http.Request {
	if s.tracer == nil || r.Method != http.MethodPost || r.Header.Get("traceparent") == "" {
		return r
	}
	ctx := traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	if ctx == r.Context() {
		return r // malformed: ignored
	}
	return r.WithContext(ctx)
}

// withTraceMeta is ctx with the trace context a 2026-07-28 request carries
// in params._meta, when tracing is on and it is valid; it replaces the
// headers' (see the top of this file). params are read again here rather
// than by readMeta, so that tracing off costs no byte of the request value.
func (s *Server) withTraceMeta(ctx context.Context, params []byte) context.Context {
	if s.tracer == nil {
		return ctx
	}
	var c metaCarrier
	_ = jsonlex.ScanObject(params, func(key, value []byte) error {
		if string(key) != "_meta" || value[0] != '{' {
			return nil
		}
		return jsonlex.ScanObject(value, func(key, value []byte) error {
			switch string(key) {
			case "traceparent":
				c.parent, _ = jsonlex.String(value)
			case "tracestate":
				c.state, _ = jsonlex.String(value)
			}
			return nil
		})
	})
	if c.parent == "" {
		return ctx
	}
	// Extract keeps a context's existing span context when the new one is
	// invalid, which is what a malformed _meta should do; a valid one
	// replaces it.
	return traceContext.Extract(ctx, &c)
}

// metaCarrier reads _meta's two members for the propagator.
type metaCarrier struct{ parent, state string }

func (c *metaCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.parent
	case "tracestate":
		return c.state
	}
	return ""
}
func (c *metaCarrier) Set(string, string) {}
func (c *metaCarrier) Keys() []string     { return []string{"traceparent", "tracestate"} }

// traced runs h as dispatch does, inside a server span when tracing is on.
// A request already inside its span (a stream refused after the chain
// ran, answered through dispatch) is not spanned twice.
func (s *Server) traced(r *mcp.Request, h mcp.Handler) (any, error) {
	if s.tracer == nil || InServerSpan(r.Ctx) {
		return h(r)
	}
	return s.tracedCall(r, h)
}

// serverSpanKey marks a context as inside a server span the gateway
// started. A span context alone does not say so: a caller's traceparent
// makes a valid (remote) one before any span exists, and work done under
// it (a session lookup, a stream's keep-alive touches) is not the
// request's.
type serverSpanKey struct{}

// InServerSpan reports whether ctx is the context of a JSON-RPC request's
// server span: the client spans (the backend's, Redis's) are made only
// there, so that nothing joins a trace the gateway did not start a span in.
func InServerSpan(ctx context.Context) bool {
	on, _ := ctx.Value(serverSpanKey{}).(bool)
	return on
}

// ServerSpanContext is ctx, which carries a server span the caller just
// started, marked as such (InServerSpan): what the gateway does for its
// own, and what a test of the client span hooks starts its parent with.
func ServerSpanContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, serverSpanKey{}, true)
}

// outsideServerSpan is ctx without its server span: for what runs after
// the span ended (a subscriptions/listen stream, admitted in the span).
func outsideServerSpan(ctx context.Context) context.Context {
	if !InServerSpan(ctx) {
		return ctx
	}
	return trace.ContextWithSpanContext(context.WithValue(ctx, serverSpanKey{}, false), trace.SpanContext{})
}

func (s *Server) tracedCall(r *mcp.Request, h mcp.Handler) (any, error) {
	ctx, span := s.tracer.Start(r.Ctx, "mcp", trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	ctx = ServerSpanContext(ctx)
	// A span the sampler dropped records nothing: its name and attributes
	// are not worth building.
	recording := span.IsRecording()
	if recording {
		span.SetAttributes(s.requestAttrs(r)...)
	}
	// The request keeps the span's context after it: what dispatch logs
	// of it belongs to the span.
	r.Ctx = ctx
	res, err := h(r)
	if recording {
		span.SetName(s.spanName(r, err))
		recordOutcome(span, r, res, err)
	}
	return res, err
}

// spanName is "{method}" or, for tools/call and prompts/get that did not
// fail, "{method} {name}" as the semantic conventions name them: names
// stay those of the document's tools and the declared prompts, never what
// a client made up (an unknown tool fails with -32602). A method the
// gateway does not serve is not named after what the client sent either.
func (s *Server) spanName(r *mcp.Request, err error) string {
	if _, ok := s.lookup(r.Method, r.Era); !ok {
		return "unknown method"
	}
	if err == nil && r.Meta.Name != nil && (r.Method == "tools/call" || r.Method == "prompts/get") {
		return r.Method + " " + mcp.TruncateTo(*r.Meta.Name, 64, "…")
	}
	return r.Method
}

func (s *Server) requestAttrs(r *mcp.Request) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs,
		attrMethod.String(mcp.TruncateTo(r.Method, maxAttr, "…")),
		attrEra.String(r.Era.Label()))
	if r.Version != "" {
		attrs = append(attrs, attrVersion.String(r.Version))
	}
	if len(r.ID) > 0 {
		attrs = append(attrs, attrRequestID.String(mcp.TruncateTo(string(r.ID), maxAttr, "…")))
	}
	if r.SessionID != "" {
		attrs = append(attrs, attrSession.String(audit.HashSession(r.SessionID)))
	}
	switch r.Method {
	case "tools/call":
		attrs = append(attrs, attrOperation.String("execute_tool"))
		if r.Meta.Name != nil {
			attrs = append(attrs, attrTool.String(mcp.TruncateTo(*r.Meta.Name, maxAttr, "…")))
		}
	case "prompts/get":
		if r.Meta.Name != nil {
			attrs = append(attrs, attrPrompt.String(mcp.TruncateTo(*r.Meta.Name, maxAttr, "…")))
		}
	case "resources/read":
		// A templated resource's URI carries its arguments: the
		// template stands for it.
		if r.Meta.URI == nil {
			break
		}
		if tmpl, ok := s.resources.Template(*r.Meta.URI); ok {
			attrs = append(attrs, attrResourceTpl.String(mcp.TruncateTo(tmpl, maxAttr, "…")))
		} else {
			attrs = append(attrs, attrResourceURI.String(mcp.TruncateTo(uriWithoutQuery(*r.Meta.URI), maxAttr, "…")))
		}
	}
	return attrs
}

// uriWithoutQuery is a resource URI without its query and fragment, where
// a templated resource's arguments (a search term, an e-mail) travel.
func uriWithoutQuery(uri string) string {
	if i := strings.IndexAny(uri, "?#"); i >= 0 {
		return uri[:i]
	}
	return uri
}

// recordOutcome sets what the request came to, in the audit log's words
// (callOutcome: one classification for the log, the metrics and the
// span): a tool error or a refusal is an error status as a JSON-RPC error
// is; a cancellation is not (the client asked for it).
func recordOutcome(span trace.Span, r *mcp.Request, res any, err error) {
	outcome, reason := callOutcome(r, res, err)
	switch {
	case outcome == audit.OutcomeCancelled:
		span.SetAttributes(attrOutcome.String(outcome))
	case err != nil:
		code := strconv.Itoa(errorCode(err))
		span.SetAttributes(attrOutcome.String(outcome), attrStatusCode.String(code))
		if reason != "" {
			span.SetAttributes(attrReason.String(reason), attrErrorType.String(reason))
		} else {
			span.SetAttributes(attrErrorType.String(code))
		}
		span.SetStatus(codes.Error, "JSON-RPC error "+code)
	case outcome == audit.OutcomeDenied:
		span.SetAttributes(attrOutcome.String(outcome), attrReason.String(reason), attrErrorType.String(reason))
		span.SetStatus(codes.Error, "denied: "+reason)
	case outcome == audit.OutcomeToolError:
		span.SetAttributes(attrOutcome.String(outcome), attrErrorType.String(outcome))
		span.SetStatus(codes.Error, outcome)
	default: // ok, input_required
		span.SetAttributes(attrOutcome.String(outcome))
	}
}

// errorCode is the JSON-RPC code translate gives err, without translate's
// logging (dispatch logs it once).
func errorCode(err error) int {
	rerr, _, _ := rpcError(err)
	return rerr.Code
}
