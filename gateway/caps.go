package gateway

// Session caps: how many sessions one client identity, and the whole
// deployment, may hold open. A client looping initialize gets 429 once it
// holds its share, so the session store cannot grow without bound.

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// sessionRetryAfter is the Retry-After of a refused initialize: sessions
// free up as clients end them or they expire, so retry in a while.
const sessionRetryAfter = 60

// admitSession counts a new session against the caps; an error is the
// 429 to answer with. A counter that cannot be reached lets the session
// through (the store it shares is then failing the request anyway).
func (s *Server) admitSession(ctx context.Context, identity, sid string) error {
	if s.counter == nil {
		return nil
	}
	caps := s.settings()
	ok, scope, err := s.counter.Open(ctx, identity, sid, caps.maxSessionsPerClient, caps.maxSessions, StoreTTL(s.cfg.SessionTTL))
	if err != nil {
		s.logLimited(ctx, slog.LevelWarn, "session counter unavailable; not enforcing session caps", "err", err)
		return nil
	}
	if ok {
		return nil
	}
	s.metrics.sessionsRefused.WithLabelValues(scope).Inc()
	var e *mcp.Error
	if scope == "per_client" {
		e = reject(http.StatusTooManyRequests, mcp.CodeInvalidRequest,
			"Too Many Requests: this client holds %d open sessions, the most allowed; end one (DELETE) or reuse it", caps.maxSessionsPerClient)
	} else {
		e = reject(http.StatusTooManyRequests, mcp.CodeInvalidRequest, "Too Many Requests: the gateway holds the most sessions it allows; retry later")
	}
	return e.WithHeader("Retry-After", strconv.Itoa(sessionRetryAfter)).
		WithData(map[string]any{"kind": "too_many_sessions", "scope": scope, "retryAfterSeconds": sessionRetryAfter})
}

// releaseSession stops counting an ended session.
func (s *Server) releaseSession(ctx context.Context, identity, sid string) {
	if s.counter == nil || identity == "" {
		return
	}
	if err := s.counter.Close(ctx, identity, sid); err != nil {
		s.logLimited(ctx, slog.LevelWarn, "session counter unavailable; the ended session counts until it expires", "err", err)
	}
}

// refreshSessionCount keeps a live session counted (with its touch).
func (s *Server) refreshSessionCount(ctx context.Context, identity, sid string) {
	if s.counter == nil || identity == "" {
		return
	}
	if err := s.counter.Refresh(ctx, identity, sid, StoreTTL(s.cfg.SessionTTL)); err != nil {
		s.logLimited(ctx, slog.LevelWarn, "session counter refresh failed", "err", err)
	}
}
