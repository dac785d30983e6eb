package subscriptions

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Memory is the in-process Store: the single-replica default. One mutex
// guards it; the subscription methods are not on a request's hot path.
//
// Every subscription is kept twice, under its subscriber and under its URI,
// with the same expiry, so each view is a lookup. Reads skip expired
// entries; Add drops a subscriber's expired entries when it reaches its
// cap. Nothing else drops them: the owner calls Sweep now and then (it has
// the method of sessions.Sweeper) so that abandoned subscribers do not pile
// up.
type Memory struct {
	limits Limits
	base   time.Time // expiries are offsets from base, on the monotonic clock

	mu     sync.Mutex
	bySub  map[string]map[string]time.Duration // subscriber → uri → expiry
	byURI  map[string]map[string]time.Duration // uri → subscriber → expiry
	states map[string]memState
}

var _ Store = (*Memory)(nil)

type memState struct {
	b   []byte
	exp time.Duration
}

// NewMemory returns an empty Memory. It starts no goroutine.
func NewMemory(l Limits) *Memory {
	return &Memory{
		limits: l.withDefaults(),
		base:   time.Now(),
		bySub:  map[string]map[string]time.Duration{},
		byURI:  map[string]map[string]time.Duration{},
		states: map[string]memState{},
	}
}

func (m *Memory) now() time.Duration { return time.Since(m.base) }

// Add implements Store.
func (m *Memory) Add(_ context.Context, subscriber, uri string, ttl time.Duration) error {
	if err := checkPair(subscriber, uri); err != nil {
		return err
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	exp := now + ttl
	held := m.bySub[subscriber]
	if e, ok := held[uri]; ok && e > now {
		exp = max(exp, e)
	} else if len(held) >= m.limits.MaxPerSubscriber {
		for u, e := range held {
			if e <= now {
				m.drop(subscriber, u)
			}
		}
		if len(m.bySub[subscriber]) >= m.limits.MaxPerSubscriber {
			return ErrTooMany
		}
	}
	m.put(subscriber, uri, exp)
	return nil
}

// put sets the subscription's expiry in both maps. Callers hold m.mu.
func (m *Memory) put(subscriber, uri string, exp time.Duration) {
	held := m.bySub[subscriber]
	if held == nil {
		held = map[string]time.Duration{}
		m.bySub[subscriber] = held
	}
	held[uri] = exp
	subs := m.byURI[uri]
	if subs == nil {
		subs = map[string]time.Duration{}
		m.byURI[uri] = subs
	}
	subs[subscriber] = exp
}

// drop removes the subscription from both maps. Callers hold m.mu.
func (m *Memory) drop(subscriber, uri string) {
	if held, ok := m.bySub[subscriber]; ok {
		delete(held, uri)
		if len(held) == 0 {
			delete(m.bySub, subscriber)
		}
	}
	if subs, ok := m.byURI[uri]; ok {
		delete(subs, subscriber)
		if len(subs) == 0 {
			delete(m.byURI, uri)
		}
	}
}

// Remove implements Store.
func (m *Memory) Remove(_ context.Context, subscriber, uri string) error {
	if err := checkPair(subscriber, uri); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.drop(subscriber, uri)
	return nil
}

// RemoveAll implements Store.
func (m *Memory) RemoveAll(_ context.Context, subscriber string) error {
	if err := checkSubscriber(subscriber); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for uri := range m.bySub[subscriber] {
		m.drop(subscriber, uri)
	}
	return nil
}

// Refresh implements Store.
func (m *Memory) Refresh(_ context.Context, subscriber string, ttl time.Duration) error {
	if err := checkSubscriber(subscriber); err != nil {
		return err
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for uri, e := range m.bySub[subscriber] {
		if e > now {
			m.put(subscriber, uri, max(e, now+ttl))
		}
	}
	return nil
}

// live returns the keys of set whose expiry is after now, sorted.
func live(set map[string]time.Duration, now time.Duration) []string {
	var out []string
	for k, e := range set {
		if e > now {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Subscribers implements Store.
func (m *Memory) Subscribers(_ context.Context, uri string) ([]string, error) {
	if err := checkURI(uri); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return live(m.byURI[uri], m.now()), nil
}

// Of implements Store.
func (m *Memory) Of(_ context.Context, subscriber string) ([]string, error) {
	if err := checkSubscriber(subscriber); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return live(m.bySub[subscriber], m.now()), nil
}

// URIs implements Store.
func (m *Memory) URIs(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var out []string
	for uri, subs := range m.byURI {
		for _, e := range subs {
			if e > now {
				out = append(out, uri)
				break
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// State implements Store.
func (m *Memory) State(_ context.Context, uri string) ([]byte, error) {
	if err := checkURI(uri); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.states[uri]
	if !ok || st.exp <= m.now() {
		return nil, nil
	}
	return append([]byte{}, st.b...), nil
}

// SetState implements Store.
func (m *Memory) SetState(_ context.Context, uri string, state []byte, ttl time.Duration) error {
	if err := checkURI(uri); err != nil {
		return err
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.states[uri] = memState{b: append([]byte{}, state...), exp: m.now() + ttl}
	return nil
}

// Sweep drops expired subscriptions and states and returns how many it
// dropped (a subscription counts once). It keeps the live entries in new
// maps, since Go maps never give back the space of deleted entries.
func (m *Memory) Sweep() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	n := 0
	old := m.bySub
	m.bySub = make(map[string]map[string]time.Duration, len(old))
	m.byURI = make(map[string]map[string]time.Duration, len(m.byURI))
	for sub, held := range old {
		for uri, e := range held {
			if e <= now {
				n++
				continue
			}
			m.put(sub, uri, e)
		}
	}
	states := make(map[string]memState, len(m.states))
	for uri, st := range m.states {
		if st.exp <= now {
			n++
			continue
		}
		states[uri] = st
	}
	m.states = states
	return n
}
