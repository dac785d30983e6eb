package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"time"

	"github.com/mcp-gateway/mcp-gateway/internal/lograte"
	"github.com/mcp-gateway/mcp-gateway/internal/redact"
)

// userInfo matches the user information of a URL (scheme://user:pass@):
// --openapi, --upstream and Redis URLs may carry credentials, and they end
// up in log lines and error messages.
var userInfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@"']+@`)

// secretParam matches the value of a URL query parameter whose name says
// it is a credential (?token=..., &api_key=..., &sig=...).
var secretParam = regexp.MustCompile(`(?i)([?&][a-z0-9_.-]*(token|key|secret|password|passwd|sig|signature|auth|credential)[a-z0-9_.-]*=)[^&\s"'#]+`)

// redactor scrubs what the gateway writes to its log and to stderr: URL
// user information, credential query parameters, and the configured
// credential values (internal/redact). The zero redactor knows no values.
type redactor struct{ secrets *redact.Set }

// newRedactor collects the configured secrets.
func newRedactor(cfg *config) redactor {
	values := []string{cfg.BackendBearerToken, cfg.RedisPassword}
	for _, f := range []string{cfg.BackendBearerFile, cfg.RedisPasswordFile} {
		if f != "" {
			if b, err := os.ReadFile(f); err == nil {
				values = append(values, string(b))
			}
		}
	}
	for _, v := range cfg.BackendAPIKeys {
		values = append(values, v)
	}
	for _, v := range cfg.BackendHeaders {
		values = append(values, v)
	}
	return redactor{secrets: redact.New(values...)}
}

func (r redactor) scrub(s string) string {
	s = userInfo.ReplaceAllString(s, "${1}REDACTED@")
	s = secretParam.ReplaceAllString(s, "${1}REDACTED")
	if r.secrets != nil {
		s = r.secrets.String(s)
	}
	return s
}

// redactingHandler is a slog.Handler that scrubs every message and string
// or error attribute before the next handler sees it.
type redactingHandler struct {
	next slog.Handler
	r    redactor
}

func (h redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.scrub(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.scrub(v.String()))
	case slog.KindGroup:
		as := v.Group()
		out := make([]any, len(as))
		for i, x := range as {
			out[i] = h.attr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.r.scrub(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, h.r.scrub(x.String()))
		case []string:
			out := make([]string, len(x))
			for i, e := range x {
				out[i] = h.r.scrub(e)
			}
			return slog.Any(a.Key, out)
		}
	}
	return a
}

func (h redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a)
	}
	return redactingHandler{next: h.next.WithAttrs(out), r: h.r}
}

func (h redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{next: h.next.WithGroup(name), r: h.r}
}

// redisLog routes go-redis's own log lines (one per failed dial: a flood
// while Redis is down) into the gateway's log, at most one a second.
type redisLog struct {
	log   *slog.Logger
	limit lograte.Limiter
}

func (l *redisLog) Printf(ctx context.Context, format string, v ...any) {
	ok, held := l.limit.Allow("redis", time.Now())
	if !ok {
		return
	}
	args := []any{}
	if held > 0 {
		args = append(args, "suppressed", held)
	}
	l.log.WarnContext(ctx, "redis client: "+fmt.Sprintf(format, v...), args...)
}
