package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// sessionCache keeps recently used session records in the replica so that a
// request on a live session costs no store round trip. Other replicas'
// changes arrive as invalidations on the bus; maxAge bounds how stale an
// entry can be when an invalidation is lost.
type sessionCache struct {
	maxAge time.Duration
	// endedFor is how long an ended session is remembered: longer than
	// any store call that started before the end can take.
	endedFor time.Duration
	mu       sync.Mutex
	m        map[string]cachedSession
	// ended remembers sessions that ended here or elsewhere, so that a
	// lookup racing the end cannot put the record back.
	ended map[string]time.Time
}

type cachedSession struct {
	s       *sessions.Session
	fetched time.Time
}

func newSessionCache(maxAge time.Duration) *sessionCache {
	return &sessionCache{maxAge: maxAge, endedFor: maxAge, m: map[string]cachedSession{}, ended: map[string]time.Time{}}
}

// touched records a successful touch on the entry that is cached now: its
// LastSeen moves on, and nothing else (a touch of an older copy must not
// undo a refresh or an update that landed meanwhile, nor make the entry
// look freshly fetched).
func (c *sessionCache) touched(id string, lastSeen time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || !e.s.LastSeen.Before(lastSeen) {
		return
	}
	cp := *e.s
	cp.LastSeen = lastSeen
	c.m[id] = cachedSession{s: &cp, fetched: e.fetched}
}

// get returns a fresh cached record; callers must not modify it.
func (c *sessionCache) get(id string, now time.Time) *sessions.Session {
	s, fresh := c.lookup(id, now)
	if !fresh {
		return nil
	}
	return s
}

// staleFactor: an entry older than maxAge is stale, but is kept (and
// served while a refresh runs, so a slow store does not stall requests)
// up to staleFactor times maxAge.
const staleFactor = 15

// lookup returns a cached record and whether it is fresh (fetched within
// maxAge); a stale one is returned too, up to staleFactor × maxAge.
func (c *sessionCache) lookup(id string, now time.Time) (s *sessions.Session, fresh bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	switch age := now.Sub(e.fetched); {
	case !ok || age > staleFactor*c.maxAge:
		return nil, false
	case age > c.maxAge:
		return e.s, false
	}
	return e.s, true
}

func (c *sessionCache) put(s *sessions.Session, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, gone := c.ended[s.ID]; gone {
		return
	}
	c.m[s.ID] = cachedSession{s: s, fetched: now}
}

// end drops a session for good: it is never cached again.
func (c *sessionCache) end(id string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
	c.ended[id] = now
}

func (c *sessionCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

// sweep drops stale entries so the cache holds only sessions in use.
func (c *sessionCache) sweep(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, e := range c.m {
		if now.Sub(e.fetched) > staleFactor*c.maxAge {
			delete(c.m, id)
		}
	}
	// A lookup or refresh that raced the end has long finished by then.
	for id, at := range c.ended {
		if now.Sub(at) > c.endedFor {
			delete(c.ended, id)
		}
	}
}

// The broadcast topic carries what every replica must hear: a session
// changed or ended (drop it from the cache), or a request must be cancelled
// (whichever replica runs it stops it).
const broadcastTopic = "replicas"

// broadcastKind says what a broadcast announces. Its values are the wire
// form replicas of every version exchange: never renumber or rename one.
type broadcastKind string

const (
	// kindChanged: a session record changed; drop the cached copy.
	kindChanged broadcastKind = "changed"
	// kindEnded: a session ended; drop it and never cache it again.
	kindEnded broadcastKind = "ended"
	// kindCancel: cancel the session's request Request, wherever it runs.
	kindCancel broadcastKind = "cancel"
)

type broadcast struct {
	Kind    broadcastKind   `json:"k"`
	Session string          `json:"s"`
	Request json.RawMessage `json:"r,omitempty"`
}

func (s *Server) announce(ctx context.Context, b broadcast) {
	data, err := json.Marshal(b)
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
		err = s.bus.Publish(pctx, broadcastTopic, data)
		cancel()
	}
	if err != nil {
		s.logLimited(ctx, slog.LevelWarn, "broadcast to replicas failed", "err", err, "kind", b.Kind, "session", shortID(b.Session))
	}
}

// forgetSession is what this replica does once it learns a session ended
// (deleted here or elsewhere, or expired): its cached copy goes, and calls
// waiting for its client's answers end.
func (s *Server) forgetSession(sid string) {
	s.cache.end(sid, time.Now())
	s.endWaiters(sid)
}

// listenReplicas applies other replicas' broadcasts until ctx ends.
func (s *Server) listenReplicas(ctx context.Context) {
	s.follow(ctx, broadcastTopic, "replica broadcasts", func() { s.listeningOnce.Do(func() { close(s.listening) }) }, func(data []byte) {
		var b broadcast
		if json.Unmarshal(data, &b) != nil {
			return
		}
		switch b.Kind {
		case kindChanged:
			s.cache.drop(b.Session)
		case kindEnded:
			s.forgetSession(b.Session)
		case kindCancel:
			s.cancelLocal(b.Session, b.Request)
		}
	})
}

// follow hands each message of a bus topic to handle until ctx ends,
// subscribing again (once a second) whenever the subscription fails or
// ends; subscribed, when not nil, runs each time the subscription is live.
func (s *Server) follow(ctx context.Context, topic, what string, subscribed func(), handle func([]byte)) {
	for ctx.Err() == nil {
		sub, err := s.bus.Subscribe(ctx, topic)
		if err != nil {
			s.logLimited(ctx, slog.LevelWarn, "subscribing to "+what+" failed", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		if subscribed != nil {
			subscribed()
		}
		for data := range sub.C() {
			handle(data)
		}
		sub.Close()
	}
}
