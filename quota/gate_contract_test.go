package quota

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

// longWindow is a quota window that cannot end during a test: the one
// window it has began at the epoch and ends in 2069.
const longWindow = maxWindow

// gateContract runs the behaviour every Gate must share. newGate returns a
// Gate holding nothing, private to t, and a Limiter of the same kind of
// store.
func gateContract(t *testing.T, newGate func(t *testing.T) (Gate, Limiter)) {
	ctx := context.Background()
	gate := func(t *testing.T) Gate { g, _ := newGate(t); return g }

	t.Run("a bucket decides as the Limiter does", func(t *testing.T) {
		g, l := newGate(t)
		for i, lim := range []Limit{{Rate: 7.0 / 3600, Burst: 3}, {Rate: 10, Burst: 2}} {
			key := "k" + strconv.Itoa(i)
			adm := Admission{Tag: "client", Buckets: []Bucket{{Key: key, Limit: lim, Scope: "per_tool"}}}
			for step := range 5 {
				d, err := l.Allow(ctx, key, lim)
				require.NoError(t, err)
				v, err := g.Admit(ctx, adm)
				require.NoError(t, err)
				require.Equal(t, d.Allowed, v.Allowed, "%+v, step %d", lim, step)
				require.Equal(t, d.Remaining, v.Remaining, "%+v, step %d", lim, step)
				if d.Allowed {
					require.Equal(t, Verdict{Allowed: true, Remaining: d.Remaining}, v)
					continue
				}
				require.Equal(t, KindRateLimited, v.Kind)
				require.Equal(t, "per_tool", v.Scope)
				require.InDelta(t, d.RetryAfter, v.RetryAfter, float64(50*time.Millisecond))
				if step == 3 && d.RetryAfter < time.Second {
					// Both are refilled by waiting what they said.
					wait(max(d.RetryAfter, v.RetryAfter) + time.Millisecond)
				}
			}
		}
	})

	t.Run("an admission takes from every part", func(t *testing.T) {
		g := gate(t)
		p := newParts()
		v, err := g.Admit(ctx, p.admission("whole"))
		require.NoError(t, err)
		require.Equal(t, Verdict{Allowed: true, Remaining: 1}, v, "the least left: b2 and the quota")
		p.requireLeft(t, g, map[string]int{"slot": 1, "b1": 2, "b2": 1, "quota": 1})
	})

	t.Run("a denial by any part changes nothing", func(t *testing.T) {
		for _, denier := range []string{"slot", "b1", "b2", "quota"} {
			t.Run(denier, func(t *testing.T) {
				g := gate(t)
				p := newParts()
				p.exhaust(t, g, denier)
				v, err := g.Admit(ctx, p.admission("whole"))
				require.NoError(t, err)
				p.requireDenial(t, denier, v)
				left := map[string]int{"slot": 2, "b1": 3, "b2": 2, "quota": 2}
				delete(left, denier)
				p.requireLeft(t, g, left)
			})
		}
	})

	t.Run("the first denial is reported: concurrency, buckets in order, quotas", func(t *testing.T) {
		g := gate(t)
		p := newParts()
		for _, part := range []string{"quota", "b2", "b1", "slot"} {
			p.exhaust(t, g, part)
			v, err := g.Admit(ctx, p.admission("whole"))
			require.NoError(t, err)
			p.requireDenial(t, part, v)
		}
	})

	t.Run("nothing to check is admitted", func(t *testing.T) {
		g := gate(t)
		for _, adm := range []Admission{
			{},
			{Tag: "t", Buckets: []Bucket{{Key: "a"}, {Key: "b"}}},
		} {
			for range 3 {
				v, err := g.Admit(ctx, adm)
				require.NoError(t, err)
				require.Equal(t, Verdict{Allowed: true, Remaining: math.MaxInt}, v)
			}
		}
		// Unlimited buckets beside a limited one are skipped.
		adm := Admission{Tag: "t", Buckets: []Bucket{{Key: "free"}, {Key: "b", Limit: Limit{Rate: slow, Burst: 1}, Scope: "s"}, {Key: "free2"}}}
		v, err := g.Admit(ctx, adm)
		require.NoError(t, err)
		require.Equal(t, Verdict{Allowed: true, Remaining: 0}, v)
		v, err = g.Admit(ctx, adm)
		require.NoError(t, err)
		require.Equal(t, KindRateLimited, v.Kind)
		require.Equal(t, "s", v.Scope)
	})

	t.Run("tags are independent, whatever their characters", func(t *testing.T) {
		g := gate(t)
		tags := []string{"", "%", "}", "%7D", "a}b", "{a}", "a", "a}:rate:b", "ünï"}
		p := newParts()
		p.slot.Limit = 1
		adm := func(tag, member string) Admission {
			a := p.admission(member)
			a.Tag = tag
			a.Buckets = a.Buckets[:1]
			a.Buckets[0].Limit.Burst = 1
			a.Quotas[0].Limit = 1
			return a
		}
		for _, tag := range tags {
			v, err := g.Admit(ctx, adm(tag, "first"))
			require.NoError(t, err)
			require.True(t, v.Allowed, "first call under %q", tag)
		}
		for _, tag := range tags {
			v, err := g.Admit(ctx, adm(tag, "second"))
			require.NoError(t, err)
			require.Equal(t, KindConcurrency, v.Kind, "second call under %q", tag)
		}
		// Release frees the slot under its own tag only.
		require.NoError(t, g.Release(ctx, "a", Slot{Key: p.slot.Key, Member: "first"}))
		v, err := g.Admit(ctx, adm("a", "second"))
		require.NoError(t, err)
		require.Equal(t, KindRateLimited, v.Kind, "past the slot, the bucket is still empty")
		v, err = g.Admit(ctx, adm("", "second"))
		require.NoError(t, err)
		require.Equal(t, KindConcurrency, v.Kind)
	})

	t.Run("concurrent admits never exceed a quota", func(t *testing.T) {
		g := gate(t)
		const limit, workers, calls = 37, 50, 4
		q := Quota{Key: "q", Name: "daily", Limit: limit, Window: longWindow}
		allowed := hammer(t, workers, calls, func(int) (Verdict, error) {
			return g.Admit(ctx, Admission{Tag: "t", Quotas: []Quota{q}})
		})
		require.EqualValues(t, limit, allowed, "of %d calls", workers*calls)

		v, err := g.Admit(ctx, Admission{Tag: "t", Quotas: []Quota{q}})
		require.NoError(t, err)
		require.False(t, v.Allowed)
		require.Equal(t, KindQuotaExceeded, v.Kind)
		require.Equal(t, "daily", v.Quota)
		require.Zero(t, v.Remaining)
		require.InDelta(t, untilWindowEnd(longWindow), v.RetryAfter, float64(2*time.Second))
	})

	t.Run("a used-up quota retries at its window's end", func(t *testing.T) {
		g := gate(t)
		// An hour's window on the hour, as the Unix epoch aligns it.
		v, _ := exhaustQuota(t, g, 2, time.Hour)
		require.InDelta(t, untilWindowEnd(time.Hour), v.RetryAfter, float64(time.Second))
	})

	t.Run("a quota's window rolls over", func(t *testing.T) {
		g := gate(t)
		const limit = 3
		v, adm := exhaustQuota(t, g, limit, time.Second)
		require.Greater(t, v.RetryAfter, time.Duration(0))
		require.LessOrEqual(t, v.RetryAfter, time.Second)
		// The window ends on a whole second of Unix time.
		frac := time.Now().Add(v.RetryAfter).UnixMicro() % 1e6
		require.True(t, frac < 50_000 || frac > 950_000, "a window ends %dµs into a second", frac)

		wait(v.RetryAfter + 2*time.Millisecond)
		v, err := g.Admit(ctx, adm)
		require.NoError(t, err)
		require.Equal(t, Verdict{Allowed: true, Remaining: limit - 1}, v, "a new window counts from zero")
	})

	t.Run("a slot holds Limit members until released", func(t *testing.T) {
		g := gate(t)
		slot := func(m string) Admission {
			return Admission{Tag: "t", Slot: &Slot{Key: "conc", Member: m, Limit: 3, TTL: time.Hour}}
		}
		for i, want := range []int{2, 1, 0} {
			v, err := g.Admit(ctx, slot("m"+strconv.Itoa(i)))
			require.NoError(t, err)
			require.Equal(t, Verdict{Allowed: true, Remaining: want}, v)
		}
		v, err := g.Admit(ctx, slot("m3"))
		require.NoError(t, err)
		require.Equal(t, Verdict{Kind: KindConcurrency, RetryAfter: slotRetryCap}, v, "an hour's TTL: retry in at most a second")

		require.NoError(t, g.Release(ctx, "t", Slot{Key: "conc", Member: "m1"}))
		v, err = g.Admit(ctx, slot("m3"))
		require.NoError(t, err)
		require.Equal(t, Verdict{Allowed: true, Remaining: 0}, v, "a release frees a place")
		v, err = g.Admit(ctx, slot("m4"))
		require.NoError(t, err)
		require.False(t, v.Allowed)

		// Releasing what is not held does nothing.
		require.NoError(t, g.Release(ctx, "t", Slot{Key: "conc", Member: "m1"}))
		require.NoError(t, g.Release(ctx, "t", Slot{Key: "conc", Member: "ghost"}))
		require.NoError(t, g.Release(ctx, "t", Slot{Key: "never", Member: "m0"}))
		require.NoError(t, g.Release(ctx, "other", Slot{Key: "conc", Member: "m0"}))
		v, err = g.Admit(ctx, slot("m4"))
		require.NoError(t, err)
		require.False(t, v.Allowed, "still full")
	})

	t.Run("a slot member expires after its TTL", func(t *testing.T) {
		g := gate(t)
		const ttl = 300 * time.Millisecond
		slot := func(m string) Admission {
			return Admission{Tag: "t", Slot: &Slot{Key: "conc", Member: m, Limit: 1, TTL: ttl}}
		}
		v, err := g.Admit(ctx, slot("crashed"))
		require.NoError(t, err)
		require.True(t, v.Allowed)
		v, err = g.Admit(ctx, slot("next"))
		require.NoError(t, err)
		require.Equal(t, KindConcurrency, v.Kind)
		require.Greater(t, v.RetryAfter, time.Duration(0))
		require.LessOrEqual(t, v.RetryAfter, ttl, "retry when the holder expires")

		wait(v.RetryAfter + 2*time.Millisecond)
		v, err = g.Admit(ctx, slot("next"))
		require.NoError(t, err)
		require.True(t, v.Allowed, "the unreleased member has expired")
	})

	t.Run("concurrent admits never exceed a slot", func(t *testing.T) {
		g := gate(t)
		const limit, workers = 5, 50
		allowed := hammer(t, workers, 1, func(w int) (Verdict, error) {
			return g.Admit(ctx, Admission{Tag: "t", Slot: &Slot{Key: "conc", Member: "w" + strconv.Itoa(w), Limit: limit, TTL: time.Hour}})
		})
		require.EqualValues(t, limit, allowed)
	})

	t.Run("invalid admissions are refused and change nothing", func(t *testing.T) {
		g := gate(t)
		ok := Bucket{Key: "ok", Limit: Limit{Rate: slow, Burst: 1}}
		okQuota := Quota{Key: "okq", Limit: 1, Window: time.Hour}
		for i, adm := range []Admission{
			{Buckets: []Bucket{ok, {Key: "b", Limit: Limit{Rate: 0, Burst: 5}}}},
			{Buckets: []Bucket{ok, {Key: "b", Limit: Limit{Rate: 1, Burst: 0}}}},
			{Buckets: []Bucket{ok, {Key: "b", Limit: Limit{Rate: math.NaN(), Burst: 1}}}},
			{Buckets: []Bucket{ok, ok}},
			{Buckets: []Bucket{ok}, Quotas: []Quota{{Key: "q", Limit: 0, Window: time.Hour}}},
			{Buckets: []Bucket{ok}, Quotas: []Quota{{Key: "q", Limit: -1, Window: time.Hour}}},
			{Buckets: []Bucket{ok}, Quotas: []Quota{{Key: "q", Limit: 1<<53 + 1, Window: time.Hour}}},
			{Buckets: []Bucket{ok}, Quotas: []Quota{{Key: "q", Limit: 1, Window: 0}}},
			{Buckets: []Bucket{ok}, Quotas: []Quota{{Key: "q", Limit: 1, Window: -time.Second}}},
			{Buckets: []Bucket{ok}, Quotas: []Quota{{Key: "q", Limit: 1, Window: time.Nanosecond}}},
			{Buckets: []Bucket{ok}, Quotas: []Quota{{Key: "q", Limit: 1, Window: 2 * maxWindow}}},
			{Buckets: []Bucket{ok}, Quotas: []Quota{okQuota, okQuota}},
			{Buckets: []Bucket{ok}, Slot: &Slot{Key: "s", Limit: 0, TTL: time.Hour}},
			{Buckets: []Bucket{ok}, Slot: &Slot{Key: "s", Limit: -1, TTL: time.Hour}},
			{Buckets: []Bucket{ok}, Slot: &Slot{Key: "s", Limit: 1, TTL: 0}},
			{Buckets: []Bucket{ok}, Slot: &Slot{Key: "s", Limit: 1, TTL: 2 * maxWindow}},
			{Buckets: []Bucket{ok}, Slot: &Slot{Key: "s", Limit: 1, TTL: -time.Second}},
		} {
			_, err := g.Admit(ctx, adm)
			require.ErrorIs(t, err, ErrInvalidLimit, "case %d: %+v", i, adm)
		}
		v, err := g.Admit(ctx, Admission{Buckets: []Bucket{ok}})
		require.NoError(t, err)
		require.True(t, v.Allowed, "no refused admission took the token")
	})
}

// parts is an Admission of every kind of part, and how to exhaust and
// probe each alone. Each part names its own key, under one Tag.
type parts struct {
	tag    string
	slot   Slot
	b1, b2 Bucket
	quota  Quota
	seq    int
}

func newParts() *parts {
	return &parts{
		tag:   "client-1",
		slot:  Slot{Key: "conc", Limit: 2, TTL: time.Hour},
		b1:    Bucket{Key: "tool", Limit: Limit{Rate: slow, Burst: 3}, Scope: "per_tool"},
		b2:    Bucket{Key: "client", Limit: Limit{Rate: slow, Burst: 2}, Scope: "per_client"},
		quota: Quota{Key: "q", Name: "daily", Limit: 2, Window: longWindow},
	}
}

func (p *parts) admission(member string) Admission {
	s := p.slot
	s.Member = member
	return Admission{Tag: p.tag, Buckets: []Bucket{p.b1, p.b2}, Quotas: []Quota{p.quota}, Slot: &s}
}

// alone is an Admission of one part; a slot's member is new each time.
func (p *parts) alone(part string) Admission {
	adm := Admission{Tag: p.tag}
	switch part {
	case "slot":
		p.seq++
		s := p.slot
		s.Member = "probe-" + strconv.Itoa(p.seq)
		adm.Slot = &s
	case "b1":
		adm.Buckets = []Bucket{p.b1}
	case "b2":
		adm.Buckets = []Bucket{p.b2}
	case "quota":
		adm.Quotas = []Quota{p.quota}
	default:
		panic(part)
	}
	return adm
}

// capacity is how many calls a fresh part admits.
func (p *parts) capacity(part string) int {
	switch part {
	case "slot":
		return p.slot.Limit
	case "b1":
		return p.b1.Limit.Burst
	case "b2":
		return p.b2.Limit.Burst
	}
	return int(p.quota.Limit)
}

// exhaust admits part alone until it denies.
func (p *parts) exhaust(t *testing.T, g Gate, part string) {
	t.Helper()
	for {
		v, err := g.Admit(context.Background(), p.alone(part))
		require.NoError(t, err)
		if !v.Allowed {
			return
		}
	}
}

// requireDenial checks that v is part's denial.
func (p *parts) requireDenial(t *testing.T, part string, v Verdict) {
	t.Helper()
	switch part {
	case "slot":
		require.Equal(t, Verdict{Kind: KindConcurrency, RetryAfter: slotRetryCap}, v, "denied by the slot")
		return
	case "quota":
		require.InDelta(t, untilWindowEnd(longWindow), v.RetryAfter, float64(2*time.Second))
		v.RetryAfter = 0
		require.Equal(t, Verdict{Kind: KindQuotaExceeded, Quota: p.quota.Name}, v, "denied by the quota")
		return
	}
	// A slow bucket's next token is an hour after its first was taken.
	require.Greater(t, v.RetryAfter, time.Hour-time.Minute)
	require.LessOrEqual(t, v.RetryAfter, time.Hour)
	v.RetryAfter = 0
	require.Equal(t, Verdict{Kind: KindRateLimited, Scope: map[string]string{"b1": p.b1.Scope, "b2": p.b2.Scope}[part]}, v, "denied by %s", part)
}

// requireLeft probes each part alone: it must admit exactly left[part]
// more calls.
func (p *parts) requireLeft(t *testing.T, g Gate, left map[string]int) {
	t.Helper()
	for part, n := range left {
		for i := range n {
			v, err := g.Admit(context.Background(), p.alone(part))
			require.NoError(t, err)
			require.Equal(t, Verdict{Allowed: true, Remaining: n - 1 - i}, v, "%s: call %d of the %d left (of %d)", part, i+1, n, p.capacity(part))
		}
		v, err := g.Admit(context.Background(), p.alone(part))
		require.NoError(t, err)
		require.False(t, v.Allowed, "%s: more than %d left", part, n)
	}
}

// hammer runs workers goroutines making calls each, all released at once,
// and returns how many were allowed.
func hammer(t *testing.T, workers, calls int, call func(worker int) (Verdict, error)) int64 {
	t.Helper()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers*calls)
	start := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			<-start
			for range calls {
				v, err := call(w)
				if err != nil {
					errs <- err
					return
				}
				if v.Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return allowed.Load()
}

// untilWindowEnd is how long, by this process's clock, until the current
// window of length w ends (windows are aligned to the Unix epoch).
func untilWindowEnd(w time.Duration) time.Duration {
	now := time.Now()
	_, end := quotaWindow(now.UnixMicro(), w.Microseconds())
	return time.UnixMicro(end).Sub(now)
}

// exhaustQuota uses up a quota of limit calls per window on a fresh key and
// returns the denial that follows and the Admission of that quota, all
// within one window: a window that ends on the way spoils the attempt, and
// a new key is tried.
func exhaustQuota(t *testing.T, g Gate, limit int64, window time.Duration) (Verdict, Admission) {
	t.Helper()
	ctx := context.Background()
attempts:
	for attempt := range 3 {
		adm := Admission{Tag: "t", Quotas: []Quota{{Key: fmt.Sprintf("q%d", attempt), Name: "q", Limit: limit, Window: window}}}
		for i := range limit {
			v, err := g.Admit(ctx, adm)
			require.NoError(t, err)
			if v != (Verdict{Allowed: true, Remaining: int(limit - 1 - i)}) {
				continue attempts // the window rolled over: a count restarted
			}
		}
		v, err := g.Admit(ctx, adm)
		require.NoError(t, err)
		if v.Allowed {
			continue // the window rolled over before the last call
		}
		require.Equal(t, KindQuotaExceeded, v.Kind)
		require.Equal(t, "q", v.Quota)
		require.Zero(t, v.Remaining)
		return v, adm
	}
	t.Fatalf("no %v window lasted for %d calls", window, limit+1)
	return Verdict{}, Admission{}
}

func TestMemoryGateContract(t *testing.T) {
	gateContract(t, func(*testing.T) (Gate, Limiter) { return NewMemoryGate(), NewMemory() })
}

func TestRedisGateContract(t *testing.T) {
	c := redistest.Standalone(t).Client(t)
	gateContract(t, func(t *testing.T) (Gate, Limiter) {
		p := redistest.Prefix(t)
		redistest.Cleanup(t, c, p)
		return NewRedisGate(c, p+"g:"), NewRedis(c, p+"l:")
	})
}

func TestRedisClusterGateContract(t *testing.T) {
	c := redistest.Cluster(t).Client(t)
	gateContract(t, func(t *testing.T) (Gate, Limiter) {
		p := redistest.Prefix(t)
		redistest.Cleanup(t, c, p)
		return NewRedisGate(c, p+"g:"), NewRedis(c, p+"l:")
	})
}
