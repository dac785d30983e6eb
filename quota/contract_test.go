package quota

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// slow refills one token an hour: within a test, a drained bucket stays
// drained.
const slow = 1.0 / 3600

// contract runs the behaviour every Limiter must share. newLimiter returns
// a Limiter with no buckets, private to t.
func contract(t *testing.T, newLimiter func(t *testing.T) Limiter) {
	ctx := context.Background()

	t.Run("burst is allowed then denied", func(t *testing.T) {
		l := newLimiter(t)
		// 7 an hour: an interval of 514285714.28…µs, which is not whole.
		lim := Limit{Rate: 7.0 / 3600, Burst: 3}
		for want := 2; want >= 0; want-- {
			d, err := l.Allow(ctx, "k", lim)
			require.NoError(t, err)
			require.Equal(t, Decision{Allowed: true, Remaining: want}, d)
		}
		d, err := l.Allow(ctx, "k", lim)
		require.NoError(t, err)
		require.False(t, d.Allowed)
		require.Zero(t, d.Remaining)
		// The next token is an interval after the first was taken, less
		// the moments this test has run.
		iv := 514285714 * time.Microsecond
		require.LessOrEqual(t, d.RetryAfter, iv+time.Microsecond)
		require.Greater(t, d.RetryAfter, iv-time.Minute)

		again, err := l.Allow(ctx, "k", lim)
		require.NoError(t, err)
		require.False(t, again.Allowed, "a denial must not take or give a token")
		require.LessOrEqual(t, again.RetryAfter, d.RetryAfter)
	})

	t.Run("tokens refill at the rate, up to the burst", func(t *testing.T) {
		l := newLimiter(t)
		lim := Limit{Rate: 10, Burst: 2} // a token every 100ms
		for range 2 {
			d, err := l.Allow(ctx, "k", lim)
			require.NoError(t, err)
			require.True(t, d.Allowed)
		}
		d, err := l.Allow(ctx, "k", lim)
		require.NoError(t, err)
		require.False(t, d.Allowed)
		require.Greater(t, d.RetryAfter, time.Duration(0))
		require.LessOrEqual(t, d.RetryAfter, 100*time.Millisecond, "one token short is at most one interval away")

		// Waiting what RetryAfter said is enough (1ms covers the µs rounding
		// between the test's clock and the store's).
		wait(d.RetryAfter + time.Millisecond)
		d, err = l.Allow(ctx, "k", lim)
		require.NoError(t, err)
		require.True(t, d.Allowed, "allowed after waiting RetryAfter")

		// After the time to refill everything, and however much longer,
		// the bucket holds exactly the burst.
		wait(2*100*time.Millisecond + time.Millisecond)
		d, err = l.Allow(ctx, "k", lim)
		require.NoError(t, err)
		require.Equal(t, Decision{Allowed: true, Remaining: 1}, d)
	})

	t.Run("keys are independent", func(t *testing.T) {
		l := newLimiter(t)
		lim := Limit{Rate: slow, Burst: 1}
		for _, k := range []string{"a", "b", "a}b", "{a}", ""} {
			d, err := l.Allow(ctx, k, lim)
			require.NoError(t, err)
			require.True(t, d.Allowed, "first call on %q", k)
		}
		for _, k := range []string{"a", "b", "a}b", "{a}", ""} {
			d, err := l.Allow(ctx, k, lim)
			require.NoError(t, err)
			require.False(t, d.Allowed, "second call on %q", k)
		}
	})

	t.Run("concurrent calls never exceed the burst", func(t *testing.T) {
		l := newLimiter(t)
		const burst, workers, calls = 10, 50, 4
		lim := Limit{Rate: slow, Burst: burst}
		var allowed atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers*calls)
		start := make(chan struct{})
		for range workers {
			wg.Go(func() {
				<-start
				for range calls {
					d, err := l.Allow(ctx, "shared", lim)
					if err != nil {
						errs <- err
						return
					}
					if d.Allowed {
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
		require.EqualValues(t, burst, allowed.Load(), "of %d calls", workers*calls)
	})

	t.Run("the zero limit is unlimited", func(t *testing.T) {
		l := newLimiter(t)
		for range 100 {
			d, err := l.Allow(ctx, "k", Limit{})
			require.NoError(t, err)
			require.Equal(t, Decision{Allowed: true, Remaining: math.MaxInt}, d)
		}
	})

	t.Run("invalid limits are refused", func(t *testing.T) {
		l := newLimiter(t)
		for _, lim := range []Limit{
			{Rate: 0, Burst: 5},
			{Rate: -1, Burst: 5},
			{Rate: math.NaN(), Burst: 5},
			{Rate: math.Inf(1), Burst: 5},
			{Rate: 1, Burst: 0},
			{Rate: 1, Burst: -1},
			{Rate: 1e-12, Burst: 1},
		} {
			_, err := l.Allow(ctx, "k", lim)
			require.ErrorIs(t, err, ErrInvalidLimit, "%+v", lim)
		}
	})
}

// wait blocks for d: the condition under test is the passing of time.
func wait(d time.Duration) { <-time.After(d) }

func TestMemoryContract(t *testing.T) {
	contract(t, func(*testing.T) Limiter { return NewMemory() })
}

func TestRedisContract(t *testing.T) {
	c := redistest.Standalone(t).Client(t)
	contract(t, func(t *testing.T) Limiter {
		p := redistest.Prefix(t)
		redistest.Cleanup(t, c, p)
		return NewRedis(c, p)
	})
}

func TestRedisClusterContract(t *testing.T) {
	c := redistest.Cluster(t).Client(t)
	contract(t, func(t *testing.T) Limiter {
		p := redistest.Prefix(t)
		redistest.Cleanup(t, c, p)
		return NewRedis(c, p)
	})
}
