package quota

import (
	"context"
	"hash/maphash"
	"math"
	"sync"
	"time"
)

// MemoryGate is the in-process Gate: the single-replica default. Its state
// lives in shards chosen by the Admission's Tag, each behind its own mutex:
// every key of one Admission shares the Tag, so one lock makes Admit atomic,
// and unrelated Tags rarely contend.
//
// It decides exactly as RedisGate does (the same GCRA, windows and slot
// rules, in the same units), with the process's clock: buckets and slots
// on the monotonic clock, quota windows on the wall clock (they are aligned
// to the Unix epoch).
//
// MemoryGate stays bounded as Memory does: after as many additions as its
// last sweep kept entries (and at least minSweep), a shard drops every
// refilled bucket, every count of an ended window and every expired slot
// member, none of which changes a decision.
type MemoryGate struct {
	now    func() time.Time
	base   time.Time // bucket TATs and slot expiries are offsets from base
	seed   maphash.Seed
	shards [memShards]gateShard
}

var _ Gate = (*MemoryGate)(nil)

// partKey names one bucket, quota or slot: its Tag and its Key.
type partKey struct{ tag, key string }

type gateShard struct {
	mu     sync.Mutex
	tats   map[partKey]time.Duration            // bucket → theoretical arrival time
	counts map[partKey]windowCount              // quota → its count in the latest window
	slots  map[partKey]map[string]time.Duration // slot → member → expiry
	ops    int                                  // entries possibly added since the last sweep
	kept   int                                  // entries kept by the last sweep
}

// windowCount is a quota's count in the window numbered index, which ends
// at end (µs since the Unix epoch).
type windowCount struct {
	index, n, end int64
}

// NewMemoryGate returns a MemoryGate holding nothing. It starts no
// goroutine.
func NewMemoryGate() *MemoryGate {
	g := &MemoryGate{now: time.Now, seed: maphash.MakeSeed()}
	g.base = g.now()
	for i := range g.shards {
		sh := &g.shards[i]
		sh.tats = map[partKey]time.Duration{}
		sh.counts = map[partKey]windowCount{}
		sh.slots = map[partKey]map[string]time.Duration{}
	}
	return g
}

func (g *MemoryGate) shard(tag string) *gateShard {
	return &g.shards[maphash.String(g.seed, tag)%memShards]
}

// Admit implements Gate.
func (g *MemoryGate) Admit(_ context.Context, req Admission) (Verdict, error) {
	if err := req.validate(); err != nil {
		return Verdict{}, err
	}
	if req.empty() {
		return admitted, nil
	}
	sh := g.shard(req.Tag)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	t := g.now()
	now := t.Sub(g.base)
	wall := t.UnixMicro()
	remaining := math.MaxInt

	// Check everything first, in the documented order, keeping what to
	// write; write only once all have admitted.
	var held map[string]time.Duration
	if s := req.Slot; s != nil {
		held = sh.slots[partKey{req.Tag, s.Key}]
		earliest := time.Duration(math.MaxInt64)
		for m, exp := range held {
			if exp <= now {
				delete(held, m) // expired: not held, whatever happens next
			} else {
				earliest = min(earliest, exp)
			}
		}
		if len(held) >= s.Limit {
			return Verdict{Kind: KindConcurrency, RetryAfter: min(earliest-now, slotRetryCap)}, nil
		}
		remaining = min(remaining, s.Limit-len(held)-1)
	}
	var tatBuf [4]time.Duration
	tats := tatBuf[:0]
	for _, b := range req.Buckets {
		if b.Limit.Unlimited() {
			tats = append(tats, 0)
			continue
		}
		d, tat := gcra(now, sh.tats[partKey{req.Tag, b.Key}], b.Limit)
		if !d.Allowed {
			return Verdict{Kind: KindRateLimited, Scope: b.Scope, RetryAfter: d.RetryAfter}, nil
		}
		tats = append(tats, tat)
		remaining = min(remaining, d.Remaining)
	}
	var countBuf [2]windowCount
	counts := countBuf[:0]
	for _, q := range req.Quotas {
		index, end := quotaWindow(wall, q.Window.Microseconds())
		c := sh.counts[partKey{req.Tag, q.Key}]
		if c.index != index {
			c = windowCount{index: index, end: end}
		}
		if c.n >= q.Limit {
			return Verdict{Kind: KindQuotaExceeded, Quota: q.Name, RetryAfter: time.Duration(end-wall) * time.Microsecond}, nil
		}
		c.n++
		counts = append(counts, c)
		remaining = min(remaining, int(min(q.Limit-c.n, math.MaxInt)))
	}

	if s := req.Slot; s != nil {
		if held == nil {
			held = map[string]time.Duration{}
			sh.slots[partKey{req.Tag, s.Key}] = held
		}
		held[s.Member] = now + s.TTL.Truncate(time.Microsecond)
	}
	for i, b := range req.Buckets {
		if !b.Limit.Unlimited() {
			sh.tats[partKey{req.Tag, b.Key}] = tats[i]
		}
	}
	for i, q := range req.Quotas {
		sh.counts[partKey{req.Tag, q.Key}] = counts[i]
	}
	// Each Admit adds at most one entry per part, so between sweeps the
	// shard grows to at most twice what the last sweep kept (or kept +
	// minSweep), plus one Admission's parts.
	sh.ops += len(req.Buckets) + len(req.Quotas) + 1
	if sh.ops >= max(sh.kept, minSweep) {
		sh.sweep(now, wall)
	}
	return Verdict{Allowed: true, Remaining: remaining}, nil
}

// Release implements Gate.
func (g *MemoryGate) Release(_ context.Context, tag string, slot Slot) error {
	sh := g.shard(tag)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	k := partKey{tag, slot.Key}
	if held, ok := sh.slots[k]; ok {
		delete(held, slot.Member)
		if len(held) == 0 {
			delete(sh.slots, k)
		}
	}
	return nil
}

// sweep keeps only the entries that can still change a decision: buckets
// still refilling, counts of windows not yet ended and slots with members
// not yet expired. Like Memory's sweep it copies what it keeps into new
// maps, which gives back the space of what it drops.
func (sh *gateShard) sweep(now time.Duration, wall int64) {
	tats := make(map[partKey]time.Duration, len(sh.tats)/2)
	for k, tat := range sh.tats {
		if tat > now {
			tats[k] = tat
		}
	}
	counts := make(map[partKey]windowCount, len(sh.counts)/2)
	for k, c := range sh.counts {
		if c.end > wall {
			counts[k] = c
		}
	}
	slots := make(map[partKey]map[string]time.Duration, len(sh.slots)/2)
	for k, held := range sh.slots {
		for m, exp := range held {
			if exp <= now {
				delete(held, m)
			}
		}
		if len(held) > 0 {
			slots[k] = held // at most Limit members: no need to copy
		}
	}
	sh.tats, sh.counts, sh.slots = tats, counts, slots
	sh.ops, sh.kept = 0, len(tats)+len(counts)+len(slots)
}

// size is the number of entries held, for tests.
func (g *MemoryGate) size() int {
	n := 0
	for i := range g.shards {
		sh := &g.shards[i]
		sh.mu.Lock()
		n += len(sh.tats) + len(sh.counts) + len(sh.slots)
		sh.mu.Unlock()
	}
	return n
}
