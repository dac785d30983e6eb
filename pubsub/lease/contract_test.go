package lease

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

const (
	short = 200 * time.Millisecond // a lease the test lets lapse
	long  = time.Hour              // a lease that outlives the test
	// hangGuard only stops a test that would otherwise hang; it is not a
	// deadline under test.
	hangGuard = 10 * time.Second
)

// wait blocks for d: the condition under test is the passing of time.
func wait(d time.Duration) { <-time.After(d) }

// await polls cond until it reports true.
func await(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	guard := time.After(hangGuard)
	for {
		ok, err := cond()
		require.NoError(t, err, what)
		if ok {
			return
		}
		select {
		case <-tick.C:
		case <-guard:
			t.Fatalf("%s: still not after %v", what, hangGuard)
		}
	}
}

// leaseContract runs the behaviour every Lease must share. newLease returns
// a Lease holding nothing, private to t.
func leaseContract(t *testing.T, newLease func(t *testing.T) Lease) {
	ctx := context.Background()

	acquire := func(t *testing.T, l Lease, name, holder string, ttl time.Duration, want bool) {
		t.Helper()
		ok, err := l.Acquire(ctx, name, holder, ttl)
		require.NoError(t, err)
		require.Equal(t, want, ok, "%s acquires %s", holder, name)
	}
	holderIs := func(t *testing.T, l Lease, name, want string) {
		t.Helper()
		h, err := l.Holder(ctx, name)
		require.NoError(t, err)
		require.Equal(t, want, h, "holder of %s", name)
	}
	release := func(t *testing.T, l Lease, name, holder string) {
		t.Helper()
		require.NoError(t, l.Release(ctx, name, holder))
	}

	t.Run("the first acquire wins and others are refused while it is held", func(t *testing.T) {
		l := newLease(t)
		acquire(t, l, "openapi", "r1", long, true)
		acquire(t, l, "openapi", "r2", long, false)
		acquire(t, l, "openapi", "r3", short, false)
		holderIs(t, l, "openapi", "r1")
		acquire(t, l, "openapi", "r1", long, true) // a renewal
		acquire(t, l, "openapi", "r2", long, false)
		holderIs(t, l, "openapi", "r1")
	})

	t.Run("a renewal by the holder extends the lease", func(t *testing.T) {
		l := newLease(t)
		acquire(t, l, "openapi", "r1", short, true)
		acquire(t, l, "openapi", "r1", long, true) // long before the first expires
		wait(short + short/2)                      // past the first acquire's expiry
		acquire(t, l, "openapi", "r2", long, false)
		holderIs(t, l, "openapi", "r1")

		// A renewal holds it for ttl from now, shorter ones included.
		acquire(t, l, "openapi", "r1", short, true)
		await(t, "r2 takes the lease r1 renewed for a short ttl", func() (bool, error) {
			return l.Acquire(ctx, "openapi", "r2", long)
		})
		holderIs(t, l, "openapi", "r2")
	})

	t.Run("an expired lease goes to the next holder", func(t *testing.T) {
		l := newLease(t)
		before := time.Now()
		acquire(t, l, "resource:file:///etc/motd", "r1", short, true)
		acquire(t, l, "resource:file:///etc/motd", "r2", long, false)
		await(t, "r2 takes the lapsed lease", func() (bool, error) {
			return l.Acquire(ctx, "resource:file:///etc/motd", "r2", long)
		})
		// Safety, not speed: the lease was not taken before it expired.
		// The slack covers Redis's whole milliseconds.
		require.GreaterOrEqual(t, time.Since(before), short-5*time.Millisecond, "taken before its ttl passed")
		t.Logf("taken over %v after the first acquire (ttl %v)", time.Since(before), short)
		holderIs(t, l, "resource:file:///etc/motd", "r2")
		acquire(t, l, "resource:file:///etc/motd", "r1", long, false)
	})

	t.Run("release lets another take it at once", func(t *testing.T) {
		l := newLease(t)
		acquire(t, l, "openapi", "r1", long, true)
		release(t, l, "openapi", "r1")
		holderIs(t, l, "openapi", "")
		acquire(t, l, "openapi", "r2", long, true)
		holderIs(t, l, "openapi", "r2")
		release(t, l, "openapi", "r2")
		release(t, l, "openapi", "r2") // twice is fine
		acquire(t, l, "openapi", "r1", long, true)
	})

	t.Run("release by a non-holder does nothing", func(t *testing.T) {
		l := newLease(t)
		release(t, l, "never-held", "r1")
		acquire(t, l, "openapi", "r1", long, true)
		release(t, l, "openapi", "r2")
		holderIs(t, l, "openapi", "r1")
		acquire(t, l, "openapi", "r2", long, false)
		release(t, l, "other", "r1") // r1's name is openapi, not other
		holderIs(t, l, "openapi", "r1")
	})

	t.Run("holder reports who holds it", func(t *testing.T) {
		l := newLease(t)
		holderIs(t, l, "openapi", "")
		acquire(t, l, "openapi", "replica-7f3a", short, true)
		holderIs(t, l, "openapi", "replica-7f3a")
		await(t, "the lapsed lease has no holder", func() (bool, error) {
			h, err := l.Holder(ctx, "openapi")
			return h == "", err
		})
		acquire(t, l, "openapi", "r2", long, true)
		holderIs(t, l, "openapi", "r2")
		release(t, l, "openapi", "r2")
		holderIs(t, l, "openapi", "")
	})

	t.Run("names are independent", func(t *testing.T) {
		l := newLease(t)
		names := []string{"openapi", "resource:https://api.example.com/items/{id}", "a}b{c", "{x}", "ünïcode", "with space"}
		for i, n := range names {
			acquire(t, l, n, "r"+strconv.Itoa(i), long, true)
		}
		for i, n := range names {
			holderIs(t, l, n, "r"+strconv.Itoa(i))
			acquire(t, l, n, "other", long, false)
		}
		release(t, l, names[0], "r0")
		holderIs(t, l, names[0], "")
		for i, n := range names[1:] {
			holderIs(t, l, n, "r"+strconv.Itoa(i+1))
		}
		// The same holder may hold many names.
		acquire(t, l, names[0], "r1", long, true)
		holderIs(t, l, names[0], "r1")
		holderIs(t, l, names[1], "r1")
	})

	t.Run("concurrent acquires: exactly one wins per round", func(t *testing.T) {
		l := newLease(t)
		const rounds, workers = 20, 32
		for round := range rounds {
			start := make(chan struct{})
			var (
				mu      sync.Mutex
				winners []string
				errs    []error
				wg      sync.WaitGroup
			)
			for w := range workers {
				holder := "w" + strconv.Itoa(w)
				wg.Go(func() {
					<-start
					ok, err := l.Acquire(ctx, "poll:resource", holder, long)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						errs = append(errs, err)
					}
					if ok {
						winners = append(winners, holder)
					}
				})
			}
			close(start)
			wg.Wait()
			require.Empty(t, errs, "round %d", round)
			require.Len(t, winners, 1, "round %d: winners %v", round, winners)
			holderIs(t, l, "poll:resource", winners[0])
			release(t, l, "poll:resource", winners[0])
		}
	})

	t.Run("invalid input is refused", func(t *testing.T) {
		l := newLease(t)
		for _, tc := range []struct {
			name, holder string
			ttl          time.Duration
		}{
			{"", "r1", long},
			{"openapi", "", long},
			{"openapi", "r1", 0},
			{"openapi", "r1", -time.Second},
			{"openapi", "r1", time.Millisecond - 1},
		} {
			ok, err := l.Acquire(ctx, tc.name, tc.holder, tc.ttl)
			require.Error(t, err, "%+v", tc)
			require.NotErrorIs(t, err, ErrUnavailable, "%+v", tc)
			require.False(t, ok)
		}
		require.Error(t, l.Release(ctx, "", "r1"))
		require.Error(t, l.Release(ctx, "openapi", ""))
		_, err := l.Holder(ctx, "")
		require.Error(t, err)
		holderIs(t, l, "openapi", "")
		acquire(t, l, "openapi", "r1", time.Millisecond, true) // the shortest valid ttl
	})
}

func TestMemoryContract(t *testing.T) {
	leaseContract(t, func(*testing.T) Lease { return NewMemory() })
}

func TestRedisContract(t *testing.T) {
	c := redistest.Standalone(t).Client(t)
	leaseContract(t, func(t *testing.T) Lease {
		p := redistest.Prefix(t)
		redistest.Cleanup(t, c, p)
		return NewRedis(c, p)
	})
}

func TestRedisClusterContract(t *testing.T) {
	c := redistest.Cluster(t).Client(t)
	leaseContract(t, func(t *testing.T) Lease {
		p := redistest.Prefix(t)
		redistest.Cleanup(t, c, p)
		return NewRedis(c, p)
	})
}
