package pending

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Memory is the in-process Store: the single-replica default. One mutex
// guards it.
//
// Reads skip expired entries and Add drops its session's expired
// records; nothing else drops them. The owner calls Sweep
// now and then (it has the method of sessions.Sweeper) so that records
// of sessions that never end and used marks do not pile up. Shared keys
// never expire.
type Memory struct {
	mu       sync.Mutex
	sessions map[string]map[string]memRecord // session → id → record
	marks    map[string]time.Time            // token → when its mark lapses
	keys     map[string][]byte
}

var _ Store = (*Memory)(nil)

type memRecord struct {
	replica  string
	deadline time.Time // wall clock, to the millisecond, as Redis keeps it
}

// NewMemory returns an empty Memory. It starts no goroutine.
func NewMemory() *Memory {
	return &Memory{
		sessions: map[string]map[string]memRecord{},
		marks:    map[string]time.Time{},
		keys:     map[string][]byte{},
	}
}

// Add implements Store.
func (m *Memory) Add(_ context.Context, rec Record, max int) error {
	now := time.Now()
	rec, err := checkRecord(rec, now)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	held := m.sessions[rec.Session]
	if held == nil {
		held = map[string]memRecord{}
		m.sessions[rec.Session] = held
	}
	// As the Redis script does: drop the expired, count the others.
	others := 0
	for id, r := range held {
		switch {
		case !now.Before(r.deadline):
			delete(held, id)
		case id != rec.ID:
			others++
		}
	}
	if max > 0 && others >= max {
		return fmt.Errorf("%w: %d per session", ErrFull, max)
	}
	held[rec.ID] = memRecord{replica: rec.Replica, deadline: rec.Deadline}
	return nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, session, id string) (Record, error) {
	if err := checkKey(session, id); err != nil {
		return Record{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.sessions[session][id]
	if !ok || !time.Now().Before(r.deadline) {
		return Record{}, ErrNotFound
	}
	return Record{Session: session, ID: id, Replica: r.replica, Deadline: r.deadline}, nil
}

// Remove implements Store.
func (m *Memory) Remove(_ context.Context, session, id string) (bool, error) {
	if err := checkKey(session, id); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	held := m.sessions[session]
	r, ok := held[id]
	if !ok {
		return false, nil
	}
	delete(held, id)
	if len(held) == 0 {
		delete(m.sessions, session)
	}
	return time.Now().Before(r.deadline), nil
}

// RemoveSession implements Store.
func (m *Memory) RemoveSession(_ context.Context, session string) ([]Record, error) {
	if err := checkSession(session); err != nil {
		return nil, err
	}
	m.mu.Lock()
	held := m.sessions[session]
	delete(m.sessions, session)
	m.mu.Unlock()
	now := time.Now()
	var out []Record
	for id, r := range held {
		if now.Before(r.deadline) {
			out = append(out, Record{Session: session, ID: id, Replica: r.replica, Deadline: r.deadline})
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Consume implements Store.
func (m *Memory) Consume(_ context.Context, token string, ttl time.Duration) (bool, error) {
	ttl, err := checkConsume(token, ttl)
	if err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if until, ok := m.marks[token]; ok && now.Before(until) {
		return false, nil
	}
	m.marks[token] = now.Add(ttl)
	return true, nil
}

// SharedKey implements Store.
func (m *Memory) SharedKey(_ context.Context, name string, candidate []byte) ([]byte, error) {
	if err := checkShared(name, candidate); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.keys[name]
	if !ok {
		k = slices.Clone(candidate)
		m.keys[name] = k
	}
	return slices.Clone(k), nil
}

// Sweep drops expired records and marks and returns how many it dropped.
// It keeps the live entries in new maps, since Go maps never give back
// the space of deleted entries.
func (m *Memory) Sweep() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	n := 0
	sessions := make(map[string]map[string]memRecord, len(m.sessions))
	for session, held := range m.sessions {
		kept := make(map[string]memRecord, len(held))
		for id, r := range held {
			if !now.Before(r.deadline) {
				n++
				continue
			}
			kept[id] = r
		}
		if len(kept) > 0 {
			sessions[session] = kept
		}
	}
	m.sessions = sessions
	marks := make(map[string]time.Time, len(m.marks))
	for token, until := range m.marks {
		if !now.Before(until) {
			n++
			continue
		}
		marks[token] = until
	}
	m.marks = marks
	return n
}
