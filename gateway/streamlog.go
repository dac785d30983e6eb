package gateway

// A session's event log carries two kinds of events. Untagged ones (a
// JSON-RPC message as is) belong to the session's GET push streams.
// Tagged ones belong to one POST stream: once a session-era POST answer
// turns into an SSE stream, each of its messages is logged with the
// stream's token before it is written, so a client that loses the stream
// resumes it with GET + Last-Event-ID on any replica, and no GET push
// stream carries it (a message goes on one stream only).
//
// A tagged event's data is '@', its kind, the token, '\n', then the
// message (none for a primer or an end). Messages start with '{', so the
// two never mix up.
//
// SSE ids name the stream: "<log id>.<token>". Log ids are digits
// (Memory) or digits and '-' (Redis), tokens base64url: the '.' is
// unambiguous. A token's first letter says what stream it names: 'p' a
// POST stream, 'g' a GET push stream. A bare log id (from before streams
// had tokens) resumes the push stream.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// retryMillis is the reconnection delay (the SSE retry field) the gateway
// sends with a priming event and before it closes a stream the client
// should resume: short, since the client reconnects to a live replica.
const retryMillis = 1000

// maxLoggedMessage bounds a message kept in the log for a POST stream's
// resumption: the log's byte bound drops the oldest events first, so one
// huge tool result would push out what the push streams have yet to
// deliver. A bigger message is still written to the live stream; the log
// keeps a stand-in (an error response for a final response).
const maxLoggedMessage = 64 << 10

// logKind says what a tagged event is.
type logKind byte

const (
	kindPrimer  logKind = 'p' // the priming event's id; no message
	kindMessage logKind = 'm' // a notification or server→client request
	kindFinal   logKind = 'f' // the response: the stream ends after it
	kindEnd     logKind = 'e' // the request was cancelled: the stream ends, no response
	kindDropped logKind = 'x' // a message too big to keep (maxLoggedMessage): skipped on replay
	kindResumed logKind = 'r' // a client resumed the stream (a GET named it): its call is not abandoned
)

// streamTokenLen is the length of a stream token: its kind, then 11
// random bytes in base64url.
const streamTokenLen = 16

// Stream kinds, a token's first letter.
const (
	postStreamKind = 'p'
	pushStreamKind = 'g'
)

func newStreamToken(kind byte) string {
	var b [11]byte
	_, _ = rand.Read(b[:])
	return string(kind) + base64.RawURLEncoding.EncodeToString(b[:])
}

func validStreamToken(t string, kind byte) bool {
	return len(t) == streamTokenLen && t[0] == kind && validTokenChars(t)
}

func validTokenChars(t string) bool {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// tagged frames a POST stream's event for the log.
func tagged(kind logKind, token string, msg []byte) []byte {
	b := make([]byte, 0, 3+len(token)+len(msg))
	b = append(b, '@', byte(kind))
	b = append(b, token...)
	b = append(b, '\n')
	return append(b, msg...)
}

// logEvent is a log event's data, read back.
type logEvent struct {
	kind  logKind // 0: untagged, a push-stream message
	token string
	msg   []byte
}

func readLogEvent(data []byte) logEvent {
	if len(data) < 2 || data[0] != '@' {
		return logEvent{msg: data}
	}
	head, msg, _ := bytes.Cut(data[2:], []byte{'\n'})
	return logEvent{kind: logKind(data[1]), token: string(head), msg: msg}
}

// streamEventID is the SSE id of a stream's event; an empty log id is
// logStart (before the first retained event).
func streamEventID(logID, token string) string {
	if logID == "" {
		logID = logStart
	}
	return logID + "." + token
}

// splitEventID splits a Last-Event-ID into the log id ("" for logStart)
// and the stream's token ("" for a bare log id).
func splitEventID(id string) (logID, token string) {
	logID, token, _ = strings.Cut(id, ".")
	if logID == logStart {
		logID = ""
	}
	return logID, token
}

// namesPostStream reports whether a Last-Event-ID names a POST stream.
func namesPostStream(id string) bool {
	_, token := splitEventID(id)
	return token != "" && token[0] == postStreamKind
}

// primes reports whether a session's streams open with a priming event
// (an id and empty data) and may be closed for the client to resume:
// 2025-11-25 and later. Older clients may choke on the empty data.
func primes(version string) bool {
	return mcp.IsSessionVersion(version) && version >= mcp.Version20251125
}

// logStreamEvent appends a POST stream's event to its session's log and
// wakes the replica that may be resuming it; it returns the log id.
func (s *Server) logStreamEvent(sid, token string, kind logKind, msg []byte) (string, error) {
	ctx := context.Background()
	id, err := s.store.Append(ctx, sid, tagged(kind, token, msg))
	if err != nil {
		return "", err
	}
	if kind != kindPrimer {
		// The payload names the stream: the session's push streams skip it.
		pctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
		if err := s.bus.Publish(pctx, sessionTopic(sid), []byte(token)); err != nil {
			s.logLimited(ctx, slog.LevelWarn, "publishing session wake-up failed", "err", err, "session", shortID(sid))
		}
		cancel()
	}
	return id, nil
}

// tooBigToLog is what the log keeps of a response too big for it
// (maxLoggedMessage): an error with the request's id, so a resumed stream
// still ends with an answer.
func (s *Server) tooBigToLog(id json.RawMessage) []byte {
	b, _ := s.encodeResponse(nil, id, nil, mcp.NewError(mcp.CodeInternalError,
		"Internal error: the response was too large to keep for a resumed stream; send the request again"))
	return b
}

// resumePostStream serves a GET whose Last-Event-ID names a POST stream:
// that stream's events after the id, then live ones (the call may still
// run, on this replica or another) until its response. wake is the
// session topic's subscription.
func (s *Server) resumePostStream(w http.ResponseWriter, r *http.Request, sess *sessions.Session, wake <-chan []byte, lastEventID string) error {
	logID, token := splitEventID(lastEventID)
	if !validStreamToken(token, postStreamKind) {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Bad Request: Last-Event-ID %q was not issued for this session", mcp.Truncate(lastEventID))
	}
	ctx := r.Context()
	gap := false
	if logID != "" {
		var err error
		if _, gap, err = s.streamCursor(ctx, sess.ID, logID); err != nil {
			return err
		}
	}
	sse, closeStream := s.openStream(w)
	defer closeStream()
	// Say so in the log: the replica running the call holds off
	// cancel_on_disconnect for a stream its client came back for.
	if _, err := s.logStreamEvent(sess.ID, token, kindResumed, nil); err != nil {
		s.logLimited(ctx, slog.LevelWarn, "logging a stream's resumption failed", "err", err, "session", shortID(sess.ID))
	}
	if primes(sess.ProtocolVersion) && sse.prime(lastEventID) != nil {
		return nil
	}
	cursor := logID
	if gap {
		cursor = ""
		if sse.event(streamEventID(logStart, token), gapNotice()) != nil {
			return nil
		}
	}
	keepAlive, stop := s.keepAliveTicks()
	defer stop()
	replaying := true // until the first wait: what the client missed
	for {
		evs, err := s.store.ReadAfter(ctx, sess.ID, cursor, replayBatch)
		switch {
		case errors.Is(err, sessions.ErrNotFound):
			return nil
		case errors.Is(err, sessions.ErrEventGone):
			if sse.event(streamEventID(logStart, token), gapNotice()) != nil {
				return nil
			}
			cursor = ""
			continue
		case err != nil:
			s.logLimited(ctx, slog.LevelWarn, "reading session stream failed", "err", err, "session", shortID(sess.ID))
		}
		for _, e := range evs {
			cursor = e.ID
			le := readLogEvent(e.Data)
			if le.token != token {
				continue
			}
			switch le.kind {
			case kindMessage, kindFinal:
				if sse.event(streamEventID(e.ID, token), le.msg) != nil {
					return nil
				}
				if replaying {
					s.metrics.replayed.Inc()
				}
				if le.kind == kindFinal {
					return nil // the stream is complete
				}
			case kindEnd:
				return nil
			}
		}
		if len(evs) == replayBatch {
			continue
		}
		replaying = false
	wait:
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-s.done:
				_ = sse.retry(retryMillis)
				return nil
			case p, ok := <-wake:
				switch {
				case !ok:
					return nil
				case len(p) == 0 || string(p) == token:
					break wait // news for this stream, or the session's (it may have ended)
				}
			case <-keepAlive:
				if sse.comment("keep-alive") != nil {
					return nil
				}
				break wait // the backstop for a lost hint
			}
		}
	}
}

// resumeGrace is how long a call whose client dropped a resumable stream
// waits for the client to come back (a GET with Last-Event-ID) before
// cancel_on_disconnect cancels it: the retry hint, twice, and the store
// calls of a resume.
func (s *Server) resumeGrace() time.Duration {
	return 2*retryMillis*time.Millisecond + 2*s.cfg.StoreTimeout
}

// resumedSince reports whether a client resumed POST stream token of
// session sid after log id from (the stream's first event); a store
// failure counts as resumed (the call is not cancelled on a guess).
func (s *Server) resumedSince(sid, token, from string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 4*s.cfg.StoreTimeout)
	defer cancel()
	for cursor := from; ; {
		evs, err := s.store.ReadAfter(ctx, sid, cursor, replayBatch)
		if errors.Is(err, sessions.ErrEventGone) && cursor != "" {
			cursor = "" // trimmed past it: what is retained
			continue
		}
		if err != nil {
			return !errors.Is(err, sessions.ErrNotFound)
		}
		for _, e := range evs {
			if le := readLogEvent(e.Data); le.kind == kindResumed && le.token == token {
				return true
			}
			cursor = e.ID
		}
		if len(evs) < replayBatch {
			return false
		}
	}
}
