package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// truncate cuts a client-supplied value quoted in an error.
func truncate(s string) string { return mcp.Truncate(s) }

// shortID is how logs name a session: a short hash, not the id itself
// (the id is the session's only credential).
func shortID(sid string) string {
	sum := sha256.Sum256([]byte(sid))
	return hex.EncodeToString(sum[:4])
}

// logLimiter lets one line per kind through each second; the next line
// of that kind says how many were left out. A store outage fails every
// request: one line per request would drown the log.
type logLimiter struct {
	mu    sync.Mutex
	kinds map[string]*limitedKind
}

type limitedKind struct {
	last       time.Time
	suppressed int
}

// allow reports whether a line of kind may be written now, and how many
// were held back since the last one.
func (l *logLimiter) allow(kind string, now time.Time) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kinds == nil {
		l.kinds = map[string]*limitedKind{}
	}
	k := l.kinds[kind]
	if k == nil {
		k = &limitedKind{}
		l.kinds[kind] = k
	}
	if now.Sub(k.last) < time.Second {
		k.suppressed++
		return false, 0
	}
	k.last, suppressed, k.suppressed = now, k.suppressed, 0
	return true, suppressed
}

// logLimited logs msg at level, at most once a second per msg.
func (s *Server) logLimited(ctx context.Context, level slog.Level, msg string, args ...any) {
	ok, suppressed := s.logLimit.allow(msg, time.Now())
	if !ok {
		return
	}
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	s.log.Log(ctx, level, msg, args...)
}
