package documents

import (
	"bytes"
	"context"
	"sync"
	"time"
)

// Memory is the in-process Store: for a single replica, and the reference
// the Redis store is tested against. Like Redis, it honours a context that
// has ended.
type Memory struct {
	now func() time.Time

	mu      sync.Mutex
	cur     Version           // zero ID: nothing published
	docs    map[string][]byte // the current and the previous version's
	reports map[string]report
}

var _ Store = (*Memory)(nil)

type report struct {
	id      string
	expires time.Time
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{now: time.Now, docs: map[string][]byte{}, reports: map[string]report{}}
}

func (m *Memory) Publish(ctx context.Context, id string, doc []byte) (Version, bool, error) {
	if err := validatePublish(id, doc); err != nil {
		return Version{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return Version{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur.ID == id {
		return m.cur, false, nil
	}
	docs := map[string][]byte{id: bytes.Clone(doc)}
	if m.cur.ID != "" {
		docs[m.cur.ID] = m.docs[m.cur.ID]
	}
	m.docs = docs
	// Microseconds, as Redis keeps it; Truncate also drops the monotonic
	// reading, so Versions compare equal however they were obtained.
	m.cur = Version{ID: id, PublishedAt: m.now().Truncate(time.Microsecond)}
	return m.cur, true, nil
}

func (m *Memory) Current(ctx context.Context) (Version, bool, error) {
	if err := ctx.Err(); err != nil {
		return Version{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur, m.cur.ID != "", nil
}

func (m *Memory) Document(ctx context.Context, id string) ([]byte, error) {
	if err := validateID(id); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.docs[id]
	if !ok {
		return nil, ErrNotFound
	}
	return bytes.Clone(d), nil
}

func (m *Memory) Report(ctx context.Context, replica, id string, ttl time.Duration) error {
	if err := validateReport(replica, id, ttl); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.dropExpired(now)
	m.reports[replica] = report{id: id, expires: now.Add(ttl)}
	return nil
}

func (m *Memory) Leave(ctx context.Context, replica string) error {
	if err := validateReplica(replica); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.reports, replica)
	return nil
}

func (m *Memory) Replicas(ctx context.Context) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropExpired(m.now())
	out := make(map[string]string, len(m.reports))
	for r, rep := range m.reports {
		out[r] = rep.id
	}
	return out, nil
}

// dropExpired forgets lapsed reports. Callers hold m.mu.
func (m *Memory) dropExpired(now time.Time) {
	for r, rep := range m.reports {
		if !now.Before(rep.expires) {
			delete(m.reports, r)
		}
	}
}
