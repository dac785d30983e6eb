package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"time"
)

// shortID is how logs name a session: a short hash, not the id itself
// (the id is the session's only credential).
func shortID(sid string) string {
	sum := sha256.Sum256([]byte(sid))
	return hex.EncodeToString(sum[:4])
}

// logLimited logs msg at level, at most once a second per msg.
func (s *Server) logLimited(ctx context.Context, level slog.Level, msg string, args ...any) {
	ok, suppressed := s.logLimit.Allow(msg, time.Now())
	if !ok {
		return
	}
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	s.log.Log(ctx, level, msg, args...)
}
