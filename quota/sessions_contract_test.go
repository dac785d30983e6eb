package quota

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

// sessionsContract runs the behaviour every SessionCounter must share.
// newCounter returns a SessionCounter counting nothing, private to t.
func sessionsContract(t *testing.T, newCounter func(t *testing.T) SessionCounter) {
	ctx := context.Background()
	const long = time.Hour

	// open opens a session and checks the outcome: want is "" when it must
	// be admitted, else the scope of the refusal.
	open := func(t *testing.T, c SessionCounter, client, id string, perClient, total int, ttl time.Duration, want string) {
		t.Helper()
		ok, scope, err := c.Open(ctx, client, id, perClient, total, ttl)
		require.NoError(t, err)
		if want == "" {
			require.True(t, ok, "open %s/%s", client, id)
			require.Empty(t, scope)
		} else {
			require.False(t, ok, "open %s/%s", client, id)
			require.Equal(t, want, scope, "open %s/%s", client, id)
		}
	}

	t.Run("a client holds at most perClient sessions", func(t *testing.T) {
		c := newCounter(t)
		open(t, c, "alice", "s1", 2, 0, long, "")
		open(t, c, "alice", "s2", 2, 0, long, "")
		open(t, c, "alice", "s3", 2, 0, long, ScopePerClient)
		open(t, c, "bob", "s1", 2, 0, long, "")
		open(t, c, "", "s1", 2, 0, long, "")
		open(t, c, "alice", "s1", 2, 0, long, "") // already counted

		require.NoError(t, c.Close(ctx, "alice", "s1"))
		open(t, c, "alice", "s3", 2, 0, long, "")
		open(t, c, "alice", "s4", 2, 0, long, ScopePerClient)
		open(t, c, "alice", "s4", 0, 0, long, "") // no cap
	})

	t.Run("the deployment holds at most total sessions", func(t *testing.T) {
		c := newCounter(t)
		open(t, c, "alice", "a1", 1, 3, long, "")
		open(t, c, "bob", "b1", 1, 3, long, "")
		open(t, c, "carol", "c1", 1, 3, long, "")
		open(t, c, "dave", "d1", 1, 3, long, ScopeTotal)
		open(t, c, "alice", "a2", 1, 3, long, ScopePerClient) // the client's cap is checked first
		open(t, c, "alice", "a1", 1, 3, long, "")             // already counted

		require.NoError(t, c.Close(ctx, "bob", "b1"))
		// dave's refused session was not left counted against dave.
		open(t, c, "dave", "d2", 1, 3, long, "")
		open(t, c, "erin", "e1", 1, 3, long, ScopeTotal)
	})

	t.Run("a session counts until it is not refreshed for its ttl", func(t *testing.T) {
		c := newCounter(t)
		const ttl = 300 * time.Millisecond
		open(t, c, "alice", "kept", 0, 2, ttl, "")
		open(t, c, "alice", "lapsed", 0, 2, ttl, "")
		require.NoError(t, c.Refresh(ctx, "alice", "kept", long))
		open(t, c, "bob", "b1", 0, 2, long, ScopeTotal)

		wait(ttl + 10*time.Millisecond)
		open(t, c, "bob", "b1", 0, 2, long, "")
		open(t, c, "bob", "b2", 0, 2, long, ScopeTotal) // kept was refreshed
		// A lapsed session is not counted again by a refresh.
		require.NoError(t, c.Refresh(ctx, "alice", "lapsed", long))
		require.NoError(t, c.Close(ctx, "bob", "b1"))
		open(t, c, "bob", "b2", 0, 2, long, "")
	})

	t.Run("a client's sessions expire", func(t *testing.T) {
		c := newCounter(t)
		const ttl = 300 * time.Millisecond
		open(t, c, "alice", "s1", 1, 0, ttl, "")
		open(t, c, "alice", "s2", 1, 0, ttl, ScopePerClient)
		wait(ttl + 10*time.Millisecond)
		open(t, c, "alice", "s2", 1, 0, ttl, "")
	})

	t.Run("closing or refreshing what is not counted does nothing", func(t *testing.T) {
		c := newCounter(t)
		require.NoError(t, c.Close(ctx, "nobody", "s"))
		require.NoError(t, c.Refresh(ctx, "nobody", "s", long))
		open(t, c, "alice", "s1", 1, 1, long, "")
		require.NoError(t, c.Close(ctx, "bob", "s1"), "bob's s1 is not alice's")
		require.NoError(t, c.Refresh(ctx, "ghost", "g", long))
		open(t, c, "ghost", "g", 1, 1, long, ScopeTotal)
		require.NoError(t, c.Close(ctx, "alice", "s1"))
		require.NoError(t, c.Close(ctx, "alice", "s1"))
		open(t, c, "ghost", "g", 1, 1, long, "")
	})

	t.Run("sessions are counted per client", func(t *testing.T) {
		// The same id under two clients is two sessions.
		c := newCounter(t)
		open(t, c, "alice", "s", 1, 2, long, "")
		open(t, c, "bob", "s", 1, 2, long, "")
		open(t, c, "carol", "s", 1, 2, long, ScopeTotal)
		require.NoError(t, c.Close(ctx, "alice", "s"))
		open(t, c, "carol", "s", 1, 2, long, "")
	})

	t.Run("concurrent opens never exceed the caps", func(t *testing.T) {
		c := newCounter(t)
		const workers = 50
		total := hammer(t, workers, 1, func(w int) (Verdict, error) {
			ok, _, err := c.Open(ctx, "client-"+strconv.Itoa(w), "s", 0, 10, long)
			return Verdict{Allowed: ok}, err
		})
		require.EqualValues(t, 10, total)
		perClient := hammer(t, workers, 1, func(w int) (Verdict, error) {
			ok, _, err := c.Open(ctx, "shared", "s"+strconv.Itoa(w), 5, 0, long)
			return Verdict{Allowed: ok}, err
		})
		require.EqualValues(t, 5, perClient)
	})

	t.Run("invalid caps are refused", func(t *testing.T) {
		c := newCounter(t)
		for _, tc := range []struct {
			perClient, total int
			ttl              time.Duration
		}{{-1, 0, long}, {0, -1, long}, {1, 1, 0}, {1, 1, -time.Second}, {1, 1, 2 * maxWindow}} {
			_, _, err := c.Open(ctx, "alice", "s", tc.perClient, tc.total, tc.ttl)
			require.ErrorIs(t, err, ErrInvalidLimit, "%+v", tc)
		}
		require.ErrorIs(t, c.Refresh(ctx, "alice", "s", 0), ErrInvalidLimit)
		open(t, c, "alice", "s", 1, 1, long, "")
	})
}

func TestMemorySessionCounterContract(t *testing.T) {
	sessionsContract(t, func(*testing.T) SessionCounter { return NewMemorySessionCounter() })
}

func TestRedisSessionCounterContract(t *testing.T) {
	c := redistest.Standalone(t).Client(t)
	sessionsContract(t, func(t *testing.T) SessionCounter {
		p := redistest.Prefix(t)
		redistest.Cleanup(t, c, p)
		return NewRedisSessionCounter(c, p)
	})
}

func TestRedisClusterSessionCounterContract(t *testing.T) {
	c := redistest.Cluster(t).Client(t)
	sessionsContract(t, func(t *testing.T) SessionCounter {
		p := redistest.Prefix(t)
		redistest.Cleanup(t, c, p)
		return NewRedisSessionCounter(c, p)
	})
}
