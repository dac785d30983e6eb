package quota

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// Memory is the in-process Limiter: the single-replica default. Its buckets
// live in shards, each behind its own mutex, so unrelated keys rarely
// contend. Memory stays bounded: after as many calls as its last sweep kept
// keys (and at least minSweep), a shard drops every key whose bucket has
// refilled, which changes no decision (a missing key is a full bucket). The
// sweep costs O(1) per call amortized, and a shard holds at most twice the
// keys that were refilling at its last sweep, or that plus minSweep.
type Memory struct {
	now    func() time.Time
	base   time.Time // TATs are offsets from base, on the monotonic clock
	seed   maphash.Seed
	shards [memShards]memShard
}

var _ Limiter = (*Memory)(nil)

const (
	memShards = 64
	// minSweep is the shard size below which no sweep runs.
	minSweep = 256
)

type memShard struct {
	mu   sync.Mutex
	tats map[string]time.Duration // key → theoretical arrival time
	ops  int                      // calls since the last sweep
	kept int                      // keys kept by the last sweep
}

// NewMemory returns a Memory with no buckets. It starts no goroutine.
func NewMemory() *Memory {
	m := &Memory{now: time.Now, seed: maphash.MakeSeed()}
	m.base = m.now()
	for i := range m.shards {
		m.shards[i].tats = map[string]time.Duration{}
	}
	return m
}

func (m *Memory) Allow(_ context.Context, key string, limit Limit) (Decision, error) {
	if limit.Unlimited() {
		return unlimited, nil
	}
	if err := limit.validate(); err != nil {
		return Decision{}, err
	}
	sh := &m.shards[maphash.String(m.seed, key)%memShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := m.now().Sub(m.base)
	d, tat := gcra(now, sh.tats[key], limit)
	if d.Allowed {
		sh.tats[key] = tat
	}
	// Each call adds at most one key, so between sweeps the shard grows to
	// at most twice what the last sweep kept (or kept + minSweep).
	if sh.ops++; sh.ops >= max(sh.kept, minSweep) {
		sh.sweep(now)
	}
	return d, nil
}

// sweep keeps only the keys whose buckets are still refilling. It copies
// them into a new map because Go maps never give back the space of deleted
// entries: after a spike of keys, memory returns to what is in use.
func (sh *memShard) sweep(now time.Duration) {
	live := make(map[string]time.Duration, len(sh.tats)/2)
	for k, tat := range sh.tats {
		if tat > now {
			live[k] = tat
		}
	}
	sh.tats = live
	sh.ops, sh.kept = 0, len(live)
}

// size is the number of keys held, for tests.
func (m *Memory) size() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.tats)
		sh.mu.Unlock()
	}
	return n
}

// gcra decides one request arriving at now for a key whose stored
// theoretical arrival time is tat (zero or past for a full bucket). It
// returns the decision and, when allowed, the TAT to store.
//
// With interval T = 1/Rate and tolerance τ = Burst·T, a request is allowed
// when now ≥ max(tat, now) + T − τ; it then moves the TAT on by T. The
// bucket holds ⌊(τ − (TAT − now)) / T⌋ tokens.
func gcra(now, tat time.Duration, l Limit) (Decision, time.Duration) {
	iv := l.interval()
	tolerance := iv * time.Duration(l.Burst)
	tat = max(tat, now)
	next := tat + iv
	if allowAt := next - tolerance; now < allowAt {
		return Decision{RetryAfter: allowAt - now}, tat
	}
	return Decision{Allowed: true, Remaining: int((tolerance - (next - now)) / iv)}, next
}
