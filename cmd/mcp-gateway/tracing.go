package main

// Tracing: OpenTelemetry spans exported over OTLP/HTTP (protobuf),
// configured by the standard OTEL_* variables. This file and
// tracing_redis.go are the only places the SDK and the exporter appear;
// the gateway sees only the API (gateway.Deps.TracerProvider).
//
// Off, nothing is built: the gateway gets no provider, the backend keeps
// its plain transport and Redis no hook, so the hot path pays nothing.
//
// The exporter, the resource and the sampler read the process environment
// themselves (OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_*); what
// decides whether tracing is on, and what the gateway refuses rather than
// let the SDK fall back in silence, is read here through getenv.

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-gateway/mcp-gateway/gateway"
)

func init() { options = append(options, tracingOption) }

var tracingOption = option{key: "tracing", def: "auto",
	usage: "OpenTelemetry tracing: auto (on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set), otlp (always on; the exporter's default endpoint is https://localhost:4318) or off; OTLP over HTTP/protobuf, configured by the standard OTEL_* variables",
	set:   oneOf([]string{"auto", "otlp", "off"}, func(c *config) *string { return &c.Tracing })}

// tracing is the process's tracer provider; nil when tracing is off (its
// methods then return what "off" means).
type tracing struct {
	provider *sdktrace.TracerProvider
	// backend is the call path's transport with a client span per
	// request, made once so that every caller shares its connections.
	backend http.RoundTripper
	// webhook is the policy webhook's client, a client span per ask.
	webhook *http.Client
}

// scopeName is the instrumentation scope of the Redis spans.
const scopeName = "github.com/mcp-gateway/mcp-gateway/cmd/mcp-gateway"

// newTracing builds the tracer provider when the configuration turns
// tracing on; nil, nil when it is off. A setting the gateway cannot honour
// is a configError (exit 2).
func newTracing(ctx context.Context, cfg *config, getenv func(string) string, replica string, base http.RoundTripper, log *slog.Logger) (*tracing, error) {
	on, err := tracingOn(cfg, getenv)
	if err != nil || !on {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, &configError{key: "tracing", source: "env OTEL_EXPORTER_OTLP_*", reason: err.Error()}
	}
	// Later detectors win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override the defaults.
	res, err := resource.New(ctx,
		resource.WithAttributes(
			attribute.String("service.name", "mcp-gateway"),
			attribute.String("service.version", version),
			attribute.String("service.instance.id", replica)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv())
	if err != nil {
		return nil, &configError{key: "tracing", source: "env OTEL_RESOURCE_ATTRIBUTES", reason: err.Error()}
	}
	// Export failures are logged, never fatal: traces are best effort.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing: exporting spans failed", "err", err)
	}))
	// No WithSampler: the SDK reads OTEL_TRACES_SAMPLER (default
	// parentbased_always_on, so a sampled caller's trace is kept).
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := &tracing{provider: tp}
	t.backend = gateway.TraceBackend(base, tp, version)
	t.webhook = &http.Client{Transport: gateway.TraceBackend(http.DefaultTransport, tp, version)}
	endpoint := exporterEndpoint(getenv)
	if u, err := url.Parse(endpoint); err == nil {
		u.User = nil // a collector's credentials stay out of the log
		endpoint = u.String()
	}
	log.Info("tracing on", "exporter", "otlp/http", "endpoint", endpoint)
	return t, nil
}

// tracingOn reads the tracing key and the OTEL_* variables that decide it.
func tracingOn(cfg *config, getenv func(string) string) (bool, error) {
	endpoint := exporterEndpoint(getenv) != ""
	switch cfg.Tracing {
	case "off":
		return false, nil
	case "auto":
		if !endpoint || strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") ||
			strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
			return false, nil
		}
	}
	envErr := func(name, reason string) error {
		return &configError{key: "tracing", source: "env " + name, reason: reason}
	}
	if e := strings.ToLower(getenv("OTEL_TRACES_EXPORTER")); e != "" && e != "otlp" && e != "none" {
		return false, envErr("OTEL_TRACES_EXPORTER", "the gateway exports only otlp, got "+strconv.Quote(e))
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(name); p != "" {
			if p != "http/protobuf" {
				return false, envErr(name, "the gateway exports OTLP over http/protobuf only (point it at the collector's HTTP port, 4318), got "+strconv.Quote(p))
			}
			break
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if v := getenv(name); v != "" {
			if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return false, envErr(name, "must be an http:// or https:// URL")
			}
		}
	}
	if err := checkSampler(getenv); err != nil {
		return false, err
	}
	return true, nil
}

// checkSampler refuses an OTEL_TRACES_SAMPLER the SDK would replace by its
// default without a word.
func checkSampler(getenv func(string) string) error {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	switch name {
	case "", "always_on", "always_off", "parentbased_always_on", "parentbased_always_off":
		return nil
	case "traceidratio", "parentbased_traceidratio":
		arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
		if arg == "" {
			return nil // the SDK's default ratio, 1
		}
		if r, err := strconv.ParseFloat(arg, 64); err != nil || r < 0 || r > 1 {
			return &configError{key: "tracing", source: "env OTEL_TRACES_SAMPLER_ARG", reason: "must be a ratio between 0 and 1"}
		}
		return nil
	}
	return &configError{key: "tracing", source: "env OTEL_TRACES_SAMPLER",
		reason: "must be always_on, always_off, traceidratio or their parentbased_ forms, got " + strconv.Quote(name)}
}

// exporterEndpoint is the endpoint the exporter uses, if one is set.
func exporterEndpoint(getenv func(string) string) string {
	if v := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
		return v
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
}

// tracerProvider is what the gateway gets: nil when off.
func (t *tracing) tracerProvider() trace.TracerProvider {
	if t == nil {
		return nil
	}
	return t.provider
}

// backendTransport is the call path's transport: nil (its default) when off.
func (t *tracing) backendTransport() http.RoundTripper {
	if t == nil {
		return nil
	}
	return t.backend
}

// webhookClient is the policy webhook's client: nil (its default) when off.
func (t *tracing) webhookClient() *http.Client {
	if t == nil {
		return nil
	}
	return t.webhook
}

// shutdown flushes the spans still queued, within ctx.
func (t *tracing) shutdown(ctx context.Context, log *slog.Logger) {
	if t == nil {
		return
	}
	if err := t.provider.Shutdown(ctx); err != nil {
		log.Warn("tracing: flushing spans at shutdown failed", "err", err)
	}
}
