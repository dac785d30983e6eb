package lease

import (
	"context"
	"math"
	"sync"
	"time"
)

// Memory is the in-process Lease: the single-replica default, where the
// only contenders are goroutines of one process. One mutex guards it.
//
// Expired leases are dropped lazily: the one a call finds expired, all of
// them when Sweep is called, and all of them after as many acquisitions as
// the last sweep kept leases (at least minSweep), so that names nobody
// asks for again take memory for about as long as the live ones.
type Memory struct {
	base time.Time // expiries are offsets from base, on the monotonic clock

	mu     sync.Mutex
	leases map[string]held
	ops    int // acquisitions since the last sweep
	kept   int // leases kept by the last sweep
}

// held is one lease: who holds it and until when.
type held struct {
	holder string
	exp    time.Duration // since base
}

// minSweep is the fewest acquisitions between two sweeps of Acquire's own.
const minSweep = 64

var _ Lease = (*Memory)(nil)

// NewMemory returns a Memory holding no lease. It starts no goroutine.
func NewMemory() *Memory {
	return &Memory{base: time.Now(), leases: map[string]held{}}
}

func (m *Memory) now() time.Duration { return time.Since(m.base) }

// Acquire implements Lease.
func (m *Memory) Acquire(_ context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if err := validate(name, holder); err != nil {
		return false, err
	}
	if err := validateTTL(ttl); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if h, ok := m.leases[name]; ok && h.exp > now && h.holder != holder {
		return false, nil
	}
	exp := time.Duration(math.MaxInt64)
	if ttl < exp-now {
		exp = now + ttl
	}
	m.leases[name] = held{holder: holder, exp: exp}
	if m.ops++; m.ops >= max(m.kept, minSweep) {
		m.sweep(now)
	}
	return true, nil
}

// Release implements Lease.
func (m *Memory) Release(_ context.Context, name, holder string) error {
	if err := validate(name, holder); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.leases[name]; ok && h.holder == holder {
		delete(m.leases, name) // expired or not: either way nobody holds it now
	}
	return nil
}

// Holder implements Lease.
func (m *Memory) Holder(_ context.Context, name string) (string, error) {
	if err := validateName(name); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.leases[name]
	if !ok {
		return "", nil
	}
	if h.exp <= m.now() {
		delete(m.leases, name)
		return "", nil
	}
	return h.holder, nil
}

// Sweep drops every expired lease and returns how many it dropped.
func (m *Memory) Sweep() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sweep(m.now())
}

// sweep keeps only live leases, copied into a new map (Go maps never give
// back the space of deleted entries), and returns how many it dropped.
func (m *Memory) sweep(now time.Duration) int {
	live := make(map[string]held, len(m.leases))
	for name, h := range m.leases {
		if h.exp > now {
			live[name] = h
		}
	}
	dropped := len(m.leases) - len(live)
	m.leases = live
	m.ops, m.kept = 0, len(live)
	return dropped
}

// size is the number of leases kept, expired ones not yet dropped
// included, for tests.
func (m *Memory) size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.leases)
}
