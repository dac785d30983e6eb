package quota

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestGCRA(t *testing.T) {
	ms := time.Millisecond
	lim := Limit{Rate: 10, Burst: 3} // T = 100ms, τ = 300ms
	for _, tc := range []struct {
		name     string
		now, tat time.Duration
		want     Decision
		wantTAT  time.Duration
	}{
		{"new key", 1000 * ms, 0, Decision{Allowed: true, Remaining: 2}, 1100 * ms},
		{"full bucket, stale TAT", 1000 * ms, 500 * ms, Decision{Allowed: true, Remaining: 2}, 1100 * ms},
		{"one taken", 1000 * ms, 1100 * ms, Decision{Allowed: true, Remaining: 1}, 1200 * ms},
		{"last token", 1000 * ms, 1200 * ms, Decision{Allowed: true, Remaining: 0}, 1300 * ms},
		{"empty", 1000 * ms, 1300 * ms, Decision{RetryAfter: 100 * ms}, 1300 * ms},
		{"empty, partly refilled", 1040 * ms, 1300 * ms, Decision{RetryAfter: 60 * ms}, 1300 * ms},
		{"just refilled one", 1100 * ms, 1300 * ms, Decision{Allowed: true, Remaining: 0}, 1400 * ms},
		{"half a token is none", 1050 * ms, 1200 * ms, Decision{Allowed: true, Remaining: 0}, 1300 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, tat := gcra(tc.now, tc.tat, lim)
			require.Equal(t, tc.want, d)
			if d.Allowed {
				require.Equal(t, tc.wantTAT, tat)
			}
		})
	}
}

func TestMemoryFakeClock(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	now := m.base
	m.now = func() time.Time { return now }
	lim := Limit{Rate: 2, Burst: 2} // T = 500ms

	for _, want := range []int{1, 0} {
		d, err := m.Allow(ctx, "k", lim)
		require.NoError(t, err)
		require.Equal(t, Decision{Allowed: true, Remaining: want}, d)
	}
	d, err := m.Allow(ctx, "k", lim)
	require.NoError(t, err)
	require.Equal(t, Decision{RetryAfter: 500 * time.Millisecond}, d)

	now = now.Add(499 * time.Millisecond)
	d, err = m.Allow(ctx, "k", lim)
	require.NoError(t, err)
	require.Equal(t, Decision{RetryAfter: time.Millisecond}, d)
	now = now.Add(time.Millisecond)
	d, err = m.Allow(ctx, "k", lim)
	require.NoError(t, err)
	require.Equal(t, Decision{Allowed: true}, d)

	now = now.Add(time.Hour) // long idle: full, not more
	for _, want := range []int{1, 0} {
		d, err := m.Allow(ctx, "k", lim)
		require.NoError(t, err)
		require.Equal(t, Decision{Allowed: true, Remaining: want}, d)
	}
}

func TestMemoryDropsRefilledBuckets(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	now := m.base
	m.now = func() time.Time { return now }
	lim := Limit{Rate: 1, Burst: 5}

	// A spike of one-off keys: each bucket is full again a second later.
	const spike = 100_000
	for i := range spike {
		_, err := m.Allow(ctx, "spike-"+strconv.Itoa(i), lim)
		require.NoError(t, err)
	}
	require.Equal(t, spike, m.size(), "nothing has refilled yet")

	now = now.Add(2 * time.Second)
	// Steady traffic on a few keys sweeps the refilled ones away.
	for i := range spike {
		_, err := m.Allow(ctx, "steady-"+strconv.Itoa(i%1000), lim)
		require.NoError(t, err)
	}
	require.LessOrEqual(t, m.size(), 1000+memShards*minSweep, "held keys are bounded by the keys in use")

	// A dropped key decides as a full bucket, as before.
	d, err := m.Allow(ctx, "spike-1", lim)
	require.NoError(t, err)
	require.Equal(t, Decision{Allowed: true, Remaining: 4}, d)
}

func TestMemoryBoundedUnderEndlessNewKeys(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	now := m.base
	m.now = func() time.Time { return now }
	lim := Limit{Rate: 1, Burst: 1} // each bucket is full a second after use

	// A new key every millisecond: about 1000 buckets are refilling at
	// any moment, however many keys have been seen.
	peak := 0
	for i := range 200_000 {
		now = now.Add(time.Millisecond)
		_, err := m.Allow(ctx, "k"+strconv.Itoa(i), lim)
		require.NoError(t, err)
		if i%1000 == 0 {
			peak = max(peak, m.size())
		}
	}
	require.LessOrEqual(t, peak, 2*memShards*minSweep)
}
