package quota

import (
	"context"
	"math"
	"sync"
	"time"
)

// MemorySessionCounter is the in-process SessionCounter: the
// single-replica default. One mutex guards it; Open is not on the hot path.
//
// Expired sessions are dropped lazily, without changing a decision: a
// client's expired sessions when it reaches its cap, everyone's when the
// deployment reaches its cap and some session may have expired (the
// earliest expiry is tracked), and everyone's after as many Opens as the
// last sweep kept sessions (and at least minSweep), so that memory stays
// bounded by about twice the live sessions.
type MemorySessionCounter struct {
	now  func() time.Time
	base time.Time // expiries are offsets from base, on the monotonic clock

	mu      sync.Mutex
	clients map[string]map[string]time.Duration // client → session id → expiry
	n       int                                 // sessions in clients, expired ones not yet dropped included
	next    time.Duration                       // no session in clients expires before next
	ops     int                                 // Opens since the last sweep
	kept    int                                 // sessions kept by the last sweep
}

var _ SessionCounter = (*MemorySessionCounter)(nil)

// NewMemorySessionCounter returns a MemorySessionCounter counting nothing.
// It starts no goroutine.
func NewMemorySessionCounter() *MemorySessionCounter {
	m := &MemorySessionCounter{now: time.Now, clients: map[string]map[string]time.Duration{}, next: math.MaxInt64}
	m.base = m.now()
	return m
}

// Open implements SessionCounter.
func (m *MemorySessionCounter) Open(_ context.Context, client, id string, perClient, total int, ttl time.Duration) (bool, string, error) {
	if err := validateSession(perClient, total, ttl); err != nil {
		return false, "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now().Sub(m.base)
	exp := now + ttl.Truncate(time.Microsecond)
	held := m.clients[client]
	if e, ok := held[id]; ok && e > now {
		held[id] = exp // already counted
		return true, "", nil
	}
	if perClient > 0 && len(held) >= perClient {
		for s, e := range held {
			if e <= now {
				delete(held, s)
				m.n--
			}
		}
		if len(held) >= perClient {
			return false, ScopePerClient, nil
		}
	}
	if total > 0 && m.n >= total && now >= m.next {
		m.sweep(now)
		held = m.clients[client]
	}
	if total > 0 && m.n >= total {
		return false, ScopeTotal, nil
	}
	if held == nil {
		held = map[string]time.Duration{}
		m.clients[client] = held
	}
	if _, ok := held[id]; !ok {
		m.n++ // else it replaces id's own expired entry
	}
	held[id] = exp
	m.next = min(m.next, exp)
	if m.ops++; m.ops >= max(m.kept, minSweep) {
		m.sweep(now)
	}
	return true, "", nil
}

// Refresh implements SessionCounter.
func (m *MemorySessionCounter) Refresh(_ context.Context, client, id string, ttl time.Duration) error {
	if err := validateTTL(ttl); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now().Sub(m.base)
	if held := m.clients[client]; held != nil {
		if e, ok := held[id]; ok && e > now {
			held[id] = now + ttl.Truncate(time.Microsecond) // next stays a lower bound
		}
	}
	return nil
}

// Close implements SessionCounter.
func (m *MemorySessionCounter) Close(_ context.Context, client, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	held := m.clients[client]
	if _, ok := held[id]; ok {
		delete(held, id)
		m.n--
		if len(held) == 0 {
			delete(m.clients, client)
		}
	}
	return nil
}

// sweep keeps only live sessions, copied into new maps (Go maps never give
// back the space of deleted entries), and learns the earliest expiry.
func (m *MemorySessionCounter) sweep(now time.Duration) {
	clients := make(map[string]map[string]time.Duration, len(m.clients)/2)
	n, next := 0, time.Duration(math.MaxInt64)
	for c, held := range m.clients {
		var live map[string]time.Duration
		for id, e := range held {
			if e <= now {
				continue
			}
			if live == nil {
				live = make(map[string]time.Duration, len(held))
			}
			live[id] = e
			next = min(next, e)
		}
		if live != nil {
			clients[c] = live
			n += len(live)
		}
	}
	m.clients, m.n, m.next = clients, n, next
	m.ops, m.kept = 0, n
}

// size is the number of sessions held, expired or not, for tests.
func (m *MemorySessionCounter) size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// Count is the number of live sessions counted: what the deployment (one
// replica) holds open. It walks every session: sample it, do not call it
// per request.
func (m *MemorySessionCounter) Count(context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now().Sub(m.base)
	n := 0
	for _, held := range m.clients {
		for _, e := range held {
			if e > now {
				n++
			}
		}
	}
	return n, nil
}
