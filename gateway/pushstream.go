package gateway

// One message, one stream: a session may hold several GET streams, on one
// replica or several, but each event of its push-stream log goes on
// exactly one of them, the newest open one. The session record keeps the
// open streams in the order they opened, the owner (the stream that
// delivers) and, when the owner gives its place up, where delivery
// stopped (sessions.PushStreams):
//
//   - A stream registers before it answers. When no stream delivers, it
//     does, from its own start (Last-Event-ID, else the log's end). A
//     stream that resumes another (its Last-Event-ID names that stream)
//     takes its place at once: the client says that one is gone.
//   - The owner hands over to a newer stream as soon as it sees one, and
//     to the newest one left when it closes, recording its cursor; the new
//     owner goes on from there (from its Last-Event-ID if it resumes). A
//     new stream answers once it has taken over (or after a short wait,
//     when the owner's replica died), so its client sees every event sent
//     after its stream opened.
//   - Every stream renews its lease each keep-alive tick (the owner also
//     records its cursor then). A lapsed registration, whose replica died,
//     counts as closed: a lapsed owner's place goes to the newest open
//     stream, which goes on from the cursor last recorded.
//
// Changes go through the store's Update (and the "changed" broadcast);
// a hint on the session topic tells the session's streams, wherever they
// are, to look at the record again. Only the owner reads the log.

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// maxPushStreams bounds a session's open GET streams: each is a lease in
// the record, rewritten on every tick.
const maxPushStreams = 8

// streamsHint is the session-topic payload that says the record's streams
// changed (log wake-ups carry none, a POST stream's carry its token).
var streamsHint = []byte("streams")

var (
	errTooManyStreams = errors.New("too many push streams")
	errStreamLapsed   = errors.New("the stream's registration lapsed")
	errUnchanged      = errors.New("nothing to change")
)

// pushTick is how often a push stream renews its lease: the keep-alive
// interval, or 15s when keep-alives are off.
func (s *Server) pushTick() time.Duration {
	if s.cfg.SSEKeepAlive > 0 {
		return s.cfg.SSEKeepAlive
	}
	return 15 * time.Second
}

// pushLease is how long a registration lives unrenewed: a few ticks, so
// one slow renewal does not lose the place.
func (s *Server) pushLease() time.Duration { return 3 * s.pushTick() }

// pushStream is one GET stream's view of the delivery.
type pushStream struct {
	srv   *Server
	sid   string
	token string
	// cursor is the last event this stream went past (delivered or
	// skipped), or where it starts.
	cursor string
	// resume: cursor is the client's Last-Event-ID, which wins over the
	// record's cursor the first time the stream takes over.
	resume bool
	// resumed: the client sent Last-Event-ID, so what the stream first
	// delivers is a replay (mcpgw_events_replayed_total).
	resumed bool
	// replaces is the token of the stream the client resumes: it is gone.
	replaces string
	owner    bool
	// surface is what the session is served, as its record said when the
	// stream opened (list_changed falls back on it; listchanged.go).
	surface mcp.Surface
}

// newest is the token of the newest open stream, or "".
func newest(g *sessions.PushStreams) string {
	if len(g.Open) == 0 {
		return ""
	}
	return g.Open[len(g.Open)-1].Token
}

func leaseOf(g *sessions.PushStreams, token string) int {
	return slices.IndexFunc(g.Open, func(l sessions.StreamLease) bool { return l.Token == token })
}

// settle drops lapsed registrations and gives a lapsed owner's place to the
// newest open stream.
func settle(g *sessions.PushStreams, now time.Time) {
	dropLapsed(g, now)
	if g.Owner != "" && leaseOf(g, g.Owner) < 0 {
		g.Owner = newest(g)
	}
}

func dropLapsed(g *sessions.PushStreams, now time.Time) {
	g.Open = slices.DeleteFunc(g.Open, func(l sessions.StreamLease) bool { return !l.Until.After(now) })
}

// updatePush changes a session's push streams through updateSession; fn
// reports whether it changed anything (nothing is written when not). It
// returns the streams as they are after fn.
func (s *Server) updatePush(ctx context.Context, sid string, fn func(*sessions.PushStreams) (bool, error)) (sessions.PushStreams, error) {
	var seen sessions.PushStreams
	_, err := s.updateSession(ctx, sid, func(x *sessions.Session) error {
		changed, err := fn(&x.Push)
		seen = x.Push
		seen.Open = slices.Clone(x.Push.Open)
		if err == nil && !changed {
			return errUnchanged
		}
		return err
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return seen, err
}

// hint tells the session's streams to look at the record again.
func (p *pushStream) hint(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, p.srv.cfg.StoreTimeout)
	defer cancel()
	if err := p.srv.bus.Publish(pctx, sessionTopic(p.sid), streamsHint); err != nil {
		p.srv.logLimited(ctx, slog.LevelWarn, "publishing session wake-up failed", "err", err, "session", shortID(p.sid))
	}
}

// follow takes the record's word on who delivers.
func (p *pushStream) follow(g sessions.PushStreams) {
	switch {
	case g.Owner == p.token && !p.owner:
		p.owner = true
		if !p.resume {
			p.cursor = g.Cursor
		}
		p.resume = false
	case g.Owner != p.token && p.owner:
		p.owner = false
	}
}

// register adds the stream to the record: an error is the GET's answer.
func (p *pushStream) register(ctx context.Context) error {
	now := time.Now()
	lease := sessions.StreamLease{Token: p.token, Until: now.Add(p.srv.pushLease())}
	g, err := p.srv.updatePush(ctx, p.sid, func(g *sessions.PushStreams) (bool, error) {
		dropLapsed(g, now)
		if i := leaseOf(g, p.replaces); p.replaces != "" && i >= 0 {
			g.Open = slices.Delete(g.Open, i, i+1)
		}
		if len(g.Open) >= maxPushStreams {
			return false, errTooManyStreams
		}
		g.Open = append(g.Open, lease)
		switch {
		case g.Owner == "":
			// Nobody delivers: this stream starts where it stands.
			g.Owner, g.Cursor = p.token, p.cursor
		case leaseOf(g, g.Owner) < 0:
			// The owner lapsed (go on from where it last was), or it is
			// the stream this one resumes.
			g.Owner = p.token
		}
		return true, nil
	})
	if errors.Is(err, errTooManyStreams) {
		return reject(http.StatusTooManyRequests, mcp.CodeInvalidRequest, "Too Many Requests: %d streams of this session are open", maxPushStreams)
	}
	if err != nil {
		return err
	}
	p.follow(g)
	p.hint(ctx) // the owner hands over
	return nil
}

// sync renews the stream's lease (renew) or only looks at the record, and
// hands the place on when a newer stream opened. errStreamLapsed: the
// registration is gone; sessions.ErrNotFound: so is the session.
func (p *pushStream) sync(ctx context.Context, renew bool) error {
	now := time.Now()
	var moved bool
	g, err := p.srv.updatePush(ctx, p.sid, func(g *sessions.PushStreams) (bool, error) {
		moved = false
		i := leaseOf(g, p.token)
		if i < 0 {
			return false, errStreamLapsed
		}
		changed := renew
		if renew {
			g.Open[i].Until = now.Add(p.srv.pushLease())
		}
		owner, open := g.Owner, len(g.Open)
		settle(g, now)
		changed = changed || owner != g.Owner || open != len(g.Open)
		if g.Owner == p.token {
			if p.owner && renew {
				g.Cursor = p.cursor // a replica that dies loses a tick at most
			}
			if n := newest(g); n != p.token {
				if p.owner {
					g.Cursor = p.cursor
				}
				g.Owner, changed = n, true
			}
		}
		moved = owner != g.Owner
		return changed, nil
	})
	if err != nil {
		return err
	}
	p.follow(g)
	if moved {
		p.hint(ctx)
	}
	return nil
}

// release takes the stream out of the record, handing its place to the
// newest one left.
func (p *pushStream) release(ctx context.Context) {
	now := time.Now()
	var moved bool
	_, err := p.srv.updatePush(ctx, p.sid, func(g *sessions.PushStreams) (bool, error) {
		moved = false
		i := leaseOf(g, p.token)
		if i >= 0 {
			g.Open = slices.Delete(g.Open, i, i+1)
		}
		if g.Owner != p.token {
			return i >= 0, nil
		}
		if p.owner {
			g.Cursor = p.cursor
		}
		settle(g, now)
		g.Owner, moved = newest(g), true
		return true, nil
	})
	if err != nil && !errors.Is(err, sessions.ErrNotFound) {
		p.srv.logLimited(ctx, slog.LevelWarn, "releasing a push stream failed", "err", err, "session", shortID(p.sid))
		return
	}
	if moved {
		p.hint(ctx)
	}
}

// awaitPlace waits, up to d, for the owner to hand delivery over to the
// newly registered stream, so that once the client has its stream open,
// events go on it. An owner whose replica died does not answer: the stream
// then opens anyway and takes over when that owner's lease lapses. An
// error is the GET's answer.
func (p *pushStream) awaitPlace(ctx context.Context, wake <-chan []byte, d time.Duration) error {
	if p.owner {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for !p.owner {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		case payload, ok := <-wake:
			if !ok {
				return nil
			}
			if string(payload) != string(streamsHint) {
				continue // the log grew: the owner carries it
			}
			if err := p.sync(ctx, false); errors.Is(err, sessions.ErrNotFound) {
				return err
			} else if err != nil {
				return nil // the pump copes
			}
		}
	}
	return nil
}

// pushSession carries a session's push-stream log on one GET stream while
// the stream owns the delivery, until the client goes, the session ends,
// or the server shuts down.
func (s *Server) pushSession(ctx context.Context, sse *sseWriter, p *pushStream, wake <-chan []byte) {
	defer s.local.add(&localStream{sid: p.sid, principal: principalOf(ctx), surface: p.surface})()
	tick := time.NewTicker(s.pushTick())
	defer tick.Stop()
	read := p.owner
	replaying := p.resumed // until the first wait: what the client missed
	for {
		if read && p.owner {
			evs, err := s.store.ReadAfter(ctx, p.sid, p.cursor, replayBatch)
			switch {
			case errors.Is(err, sessions.ErrNotFound):
				return // the session ended: end its stream
			case errors.Is(err, sessions.ErrEventGone):
				// Fell behind the log's bound: say so, then go on from what is retained.
				if sse.event(streamEventID(logStart, p.token), gapNotice()) != nil {
					return
				}
				p.cursor = ""
				continue
			case err != nil:
				s.logLimited(ctx, slog.LevelWarn, "reading session stream failed", "err", err, "session", shortID(p.sid))
			}
			for _, e := range evs {
				if le := readLogEvent(e.Data); le.kind == 0 {
					if sse.event(streamEventID(e.ID, p.token), le.msg) != nil {
						return
					}
					if replaying {
						s.metrics.replayed.Inc()
					}
				}
				p.cursor = e.ID
			}
			if len(evs) == replayBatch {
				continue
			}
			replaying = false
		}
		read = false
		select {
		case <-ctx.Done():
			return
		case <-s.done:
			_ = sse.retry(retryMillis) // tell the client to come back (to another replica) soon
			return
		case payload, ok := <-wake:
			switch {
			case !ok:
				return // the bus closed under us: let the client reconnect
			case len(payload) == 0:
				read = true // the log grew, or the session ended
			case string(payload) == string(streamsHint):
				if !p.syncOrEnd(ctx, sse, false) {
					return
				}
				read = true
			}
			// Else a POST stream's event: not this stream's.
		case <-tick.C:
			if s.cfg.SSEKeepAlive > 0 && sse.comment("keep-alive") != nil {
				return
			}
			if !p.syncOrEnd(ctx, sse, true) {
				return
			}
			// The tick doubles as the backstop for missed hints: the loop
			// re-reads the log and notices an ended session.
			read = true
		}
	}
}

// syncOrEnd syncs; it reports false when the stream must end.
func (p *pushStream) syncOrEnd(ctx context.Context, sse *sseWriter, renew bool) bool {
	err := p.sync(ctx, renew)
	switch {
	case err == nil:
		return true
	case errors.Is(err, sessions.ErrNotFound):
		return false
	case errors.Is(err, errStreamLapsed):
		// The others count this stream as closed: come back anew.
		_ = sse.retry(retryMillis)
		return false
	}
	p.srv.logLimited(ctx, slog.LevelWarn, "renewing a push stream failed", "err", err, "session", shortID(p.sid))
	return true
}
