package sessions

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Limits bound what a store keeps. Zero fields take the defaults noted.
type Limits struct {
	// TTL is how long an untouched session lives. Zero means 30 minutes.
	TTL time.Duration
	// MaxEvents bounds each session's event log. Zero means 1000.
	MaxEvents int
	// MaxEventAge drops events older than this from the log. Zero means 1 hour.
	MaxEventAge time.Duration
	// MaxBytes bounds each session's event log in bytes: the oldest events
	// go first (the newest always stays). Zero means 256 KiB.
	MaxBytes int64
}

func (l Limits) withDefaults() Limits {
	if l.TTL <= 0 {
		l.TTL = 30 * time.Minute
	}
	if l.MaxEvents <= 0 {
		l.MaxEvents = 1000
	}
	if l.MaxEventAge <= 0 {
		l.MaxEventAge = time.Hour
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = 256 << 10
	}
	return l
}

// Memory is the in-process Store: the embedded single-replica default.
type Memory struct {
	limits Limits
	now    func() time.Time

	mu       sync.Mutex
	sessions map[string]*memSession
}

var (
	_ Store   = (*Memory)(nil)
	_ Sweeper = (*Memory)(nil)
)

type memSession struct {
	s       Session
	events  []memEvent // oldest first
	nextSeq uint64     // sequence of the next appended event; ids start at 1
	bytes   int64      // the events' data, in all
}

type memEvent struct {
	seq  uint64
	at   time.Time
	data []byte
}

// NewMemory returns an empty in-memory store.
func NewMemory(limits Limits) *Memory {
	return &Memory{limits: limits.withDefaults(), now: time.Now, sessions: map[string]*memSession{}}
}

// live returns the session if it exists and has not expired; expired
// sessions are removed on sight. Callers hold m.mu.
func (m *Memory) live(id string) *memSession {
	ms, ok := m.sessions[id]
	if !ok {
		return nil
	}
	if m.now().Sub(ms.s.LastSeen) > m.limits.TTL {
		delete(m.sessions, id)
		return nil
	}
	return ms
}

func (m *Memory) Create(_ context.Context, s *Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live(s.ID) != nil {
		return ErrExists
	}
	cp := *s.clone()
	if cp.LastSeen.IsZero() {
		cp.LastSeen = m.now()
	}
	m.sessions[s.ID] = &memSession{s: cp, nextSeq: 1}
	return nil
}

func (m *Memory) Get(_ context.Context, id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := m.live(id)
	if ms == nil {
		return nil, ErrNotFound
	}
	return ms.s.clone(), nil
}

func (m *Memory) Update(_ context.Context, id string, fn func(*Session) error) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := m.live(id)
	if ms == nil {
		return nil, ErrNotFound
	}
	cp := ms.s.clone()
	if err := fn(cp); err != nil {
		return nil, err
	}
	cp.ID = id // the id is the key; fn may not move the record
	ms.s = *cp
	return cp.clone(), nil
}

func (m *Memory) Touch(_ context.Context, id string, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := m.live(id)
	if ms == nil {
		return ErrNotFound
	}
	if now.After(ms.s.LastSeen) {
		ms.s.LastSeen = now
	}
	return nil
}

func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live(id) == nil {
		return ErrNotFound
	}
	delete(m.sessions, id)
	return nil
}

func (m *Memory) Append(_ context.Context, id string, data []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := m.live(id)
	if ms == nil {
		return "", ErrNotFound
	}
	now := m.now()
	seq := ms.nextSeq
	ms.nextSeq++
	ms.events = append(ms.events, memEvent{seq: seq, at: now, data: append([]byte(nil), data...)})
	ms.bytes += int64(len(data))
	m.trim(ms, now)
	return formatSeq(seq), nil
}

// trim drops events beyond the length bound or older than the age bound.
func (m *Memory) trim(ms *memSession, now time.Time) {
	drop := 0
	if over := len(ms.events) - m.limits.MaxEvents; over > 0 {
		drop = over
	}
	for drop < len(ms.events) && now.Sub(ms.events[drop].at) > m.limits.MaxEventAge {
		drop++
	}
	kept := ms.bytes
	for _, e := range ms.events[:drop] {
		kept -= int64(len(e.data))
	}
	for drop < len(ms.events)-1 && kept > m.limits.MaxBytes {
		kept -= int64(len(ms.events[drop].data))
		drop++
	}
	ms.bytes = kept
	if drop > 0 {
		ms.events = append(ms.events[:0:0], ms.events[drop:]...)
	}
}

func (m *Memory) ReadAfter(_ context.Context, id string, after string, max int) ([]Event, error) {
	var afterSeq uint64
	if after != "" {
		n, err := parseSeq(after)
		if err != nil {
			return nil, err
		}
		afterSeq = n
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := m.live(id)
	if ms == nil {
		return nil, ErrNotFound
	}
	m.trim(ms, m.now())
	if afterSeq >= ms.nextSeq {
		return nil, fmt.Errorf("%w: %q is newer than the log", ErrBadEventID, after)
	}
	// The first retained event must directly follow the cursor, or events
	// between them have been dropped: say so rather than leave a silent gap.
	oldest := ms.nextSeq // the seq the log would start at if empty
	if len(ms.events) > 0 {
		oldest = ms.events[0].seq
	}
	if after != "" && afterSeq+1 < oldest {
		return nil, ErrEventGone
	}
	var out []Event
	for _, e := range ms.events {
		if e.seq <= afterSeq {
			continue
		}
		if max > 0 && len(out) == max {
			break
		}
		out = append(out, Event{ID: formatSeq(e.seq), Data: e.data})
	}
	return out, nil
}

func (m *Memory) LastEventID(_ context.Context, id string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := m.live(id)
	if ms == nil {
		return "", ErrNotFound
	}
	if ms.nextSeq == 1 {
		return "", nil
	}
	return formatSeq(ms.nextSeq - 1), nil
}

func (m *Memory) Ping(context.Context) error { return nil }

// Sweep removes every expired session. The gateway calls it periodically so
// that abandoned sessions do not hold memory until someone asks for them.
func (m *Memory) Sweep() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id := range m.sessions {
		if m.live(id) == nil {
			n++
		}
	}
	return n
}

func formatSeq(n uint64) string { return strconv.FormatUint(n, 10) }

func parseSeq(s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%w: %q", ErrBadEventID, s)
	}
	return n, nil
}

// Count is the number of live sessions. It walks the store (and drops
// the expired ones it meets): sample it, do not call it per request.
func (m *Memory) Count(context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id := range m.sessions {
		if m.live(id) != nil {
			n++
		}
	}
	return n, nil
}
