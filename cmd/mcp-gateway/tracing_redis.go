package main

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-gateway/mcp-gateway/gateway"
)

// traceRedis adds a client span per Redis command or pipeline made on the
// path of a traced request; nothing when tracing is off. Hand-written
// rather than redisotel: that one traces every command, and the gateway's
// background work (leases, pub/sub, session touches) would start a trace
// of its own every few seconds; here a command makes a span only inside a
// server span the gateway started (gateway.InServerSpan), never under a
// caller's traceparent alone (a GET push stream's keep-alive touches would
// join the caller's trace for as long as it stays open). The command's
// arguments are never recorded (session records and state keys travel in
// them).
func (t *tracing) traceRedis(c sharedRedis) {
	if t == nil || c == nil {
		return
	}
	c.AddHook(redisTracing{tracer: t.provider.Tracer(scopeName, trace.WithInstrumentationVersion(version))})
}

type redisTracing struct{ tracer trace.Tracer }

var _ redis.Hook = redisTracing{}

var redisSystem = attribute.String("db.system.name", "redis")

func (redisTracing) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h redisTracing) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !gateway.InServerSpan(ctx) {
			return next(ctx, cmd)
		}
		ctx, span := h.tracer.Start(ctx, cmd.Name(), trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(redisSystem, attribute.String("db.operation.name", cmd.Name())))
		err := next(ctx, cmd)
		endRedisSpan(span, err)
		return err
	}
}

func (h redisTracing) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !gateway.InServerSpan(ctx) {
			return next(ctx, cmds)
		}
		ctx, span := h.tracer.Start(ctx, "pipeline", trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(redisSystem, attribute.String("db.operation.name", "pipeline"), attribute.Int("db.operation.batch.size", len(cmds))))
		err := next(ctx, cmds)
		endRedisSpan(span, err)
		return err
	}
}

// endRedisSpan ends a command's span; a missing key is an answer, not an
// error.
func endRedisSpan(span trace.Span, err error) {
	if err != nil && !errors.Is(err, redis.Nil) {
		span.SetAttributes(attribute.String("error.type", "redis_error"))
		span.SetStatus(codes.Error, "redis error")
	}
	span.End()
}
