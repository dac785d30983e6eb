package quota

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeGate returns a MemoryGate on a clock that moves only when the test
// moves it, starting at start.
func fakeGate(start time.Time) (*MemoryGate, *time.Time) {
	g := NewMemoryGate()
	now := start
	g.now = func() time.Time { return now }
	g.base = start
	return g, &now
}

func TestMemoryGateDailyQuotaResetsAtMidnightUTC(t *testing.T) {
	ctx := context.Background()
	// 23:59:59.25 in UTC is 00:59:59.25 in Paris: the window is UTC's.
	paris := time.FixedZone("CET", 3600)
	g, now := fakeGate(time.Date(2026, 3, 1, 0, 59, 59, 250_000_000, paris))
	adm := Admission{Tag: "t", Quotas: []Quota{{Key: "q", Name: "daily", Limit: 2, Window: 24 * time.Hour}}}

	for _, want := range []int{1, 0} {
		v, err := g.Admit(ctx, adm)
		require.NoError(t, err)
		require.Equal(t, Verdict{Allowed: true, Remaining: want}, v)
	}
	v, err := g.Admit(ctx, adm)
	require.NoError(t, err)
	require.Equal(t, Verdict{Kind: KindQuotaExceeded, Quota: "daily", RetryAfter: 750 * time.Millisecond}, v)

	*now = now.Add(749 * time.Millisecond)
	v, err = g.Admit(ctx, adm)
	require.NoError(t, err)
	require.Equal(t, Verdict{Kind: KindQuotaExceeded, Quota: "daily", RetryAfter: time.Millisecond}, v)

	*now = now.Add(time.Millisecond) // 00:00:00 UTC
	v, err = g.Admit(ctx, adm)
	require.NoError(t, err)
	require.Equal(t, Verdict{Allowed: true, Remaining: 1}, v)
}

func TestMemoryGateSlotFakeClock(t *testing.T) {
	ctx := context.Background()
	g, now := fakeGate(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	slot := func(m string) Admission {
		return Admission{Tag: "t", Slot: &Slot{Key: "conc", Member: m, Limit: 1, TTL: 10 * time.Second}}
	}
	v, err := g.Admit(ctx, slot("a"))
	require.NoError(t, err)
	require.True(t, v.Allowed)

	v, err = g.Admit(ctx, slot("b"))
	require.NoError(t, err)
	require.Equal(t, Verdict{Kind: KindConcurrency, RetryAfter: time.Second}, v, "capped")
	*now = now.Add(9*time.Second + 600*time.Millisecond)
	v, err = g.Admit(ctx, slot("b"))
	require.NoError(t, err)
	require.Equal(t, Verdict{Kind: KindConcurrency, RetryAfter: 400 * time.Millisecond}, v, "until the holder expires")
	*now = now.Add(400 * time.Millisecond)
	v, err = g.Admit(ctx, slot("b"))
	require.NoError(t, err)
	require.Equal(t, Verdict{Allowed: true, Remaining: 0}, v)
}

func TestMemoryGateStaysBounded(t *testing.T) {
	ctx := context.Background()
	g, now := fakeGate(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	// Every part is done with a second after use: a bucket refilled, a
	// window ended, a slot member expired (never released).
	adm := func(i int) Admission {
		return Admission{
			Tag:     "client-" + strconv.Itoa(i),
			Buckets: []Bucket{{Key: "b", Limit: Limit{Rate: 1, Burst: 1}}},
			Quotas:  []Quota{{Key: "q", Limit: 5, Window: time.Second}},
			Slot:    &Slot{Key: "s", Member: "m", Limit: 1, TTL: time.Second},
		}
	}
	// A new client every millisecond: about 1000 clients' parts (3 each)
	// matter at any moment, however many have been seen.
	peak := 0
	for i := range 200_000 {
		*now = now.Add(time.Millisecond)
		v, err := g.Admit(ctx, adm(i))
		require.NoError(t, err)
		require.True(t, v.Allowed)
		if i%1000 == 0 {
			peak = max(peak, g.size())
		}
	}
	require.LessOrEqual(t, peak, 2*3*1000+memShards*(minSweep+3), "twice the parts in use, plus what a shard adds before its first sweep")

	// What was dropped decides as before: a new client.
	v, err := g.Admit(ctx, adm(0))
	require.NoError(t, err)
	require.Equal(t, Verdict{Allowed: true, Remaining: 0}, v)
}

func TestMemorySessionCounterStaysBounded(t *testing.T) {
	ctx := context.Background()
	c := NewMemorySessionCounter()
	now := c.base
	c.now = func() time.Time { return now }

	// A new session every millisecond, never closed, each lapsing after a
	// second: about 1000 count at any moment.
	peak := 0
	for i := range 200_000 {
		now = now.Add(time.Millisecond)
		ok, _, err := c.Open(ctx, "client-"+strconv.Itoa(i%5000), strconv.Itoa(i), 0, 0, time.Second)
		require.NoError(t, err)
		require.True(t, ok)
		if i%1000 == 0 {
			peak = max(peak, c.size())
		}
	}
	require.LessOrEqual(t, peak, 2*1000+minSweep)

	// At the total cap, lapsed sessions make room.
	ok, scope, err := c.Open(ctx, "x", "x1", 0, 1000, time.Second)
	require.NoError(t, err)
	require.False(t, ok, "about 1000 sessions are live")
	require.Equal(t, ScopeTotal, scope)
	now = now.Add(time.Second)
	ok, _, err = c.Open(ctx, "x", "x1", 0, 1000, time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 1, c.size())
}
