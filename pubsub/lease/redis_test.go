package lease

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

func TestRedisKeyAndExpiry(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	p := redistest.Prefix(t)
	l := NewRedis(c, p)

	ok, err := l.Acquire(ctx, "openapi", "replica-1", 10*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	require.Equal(t, []string{p + "l:{openapi}"}, keys, "prefix, l: and the name in a hash tag")
	v, err := c.Get(ctx, p+"l:{openapi}").Result()
	require.NoError(t, err)
	require.Equal(t, "replica-1", v, "the value is the holder")
	pttl, err := c.PTTL(ctx, p+"l:{openapi}").Result()
	require.NoError(t, err)
	require.Greater(t, pttl, time.Duration(0))
	require.LessOrEqual(t, pttl, 10*time.Second, "PX is the ttl")

	// A renewal sets the expiry anew; a refusal leaves it alone.
	ok, err = l.Acquire(ctx, "openapi", "replica-1", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	pttl, err = c.PTTL(ctx, p+"l:{openapi}").Result()
	require.NoError(t, err)
	require.Greater(t, pttl, 10*time.Second)
	require.LessOrEqual(t, pttl, time.Minute)
	ok, err = l.Acquire(ctx, "openapi", "replica-2", time.Hour)
	require.NoError(t, err)
	require.False(t, ok)
	after, err := c.PTTL(ctx, p+"l:{openapi}").Result()
	require.NoError(t, err)
	require.LessOrEqual(t, after, pttl)

	// A ttl that is not whole milliseconds is rounded up, never down to 0.
	ok, err = l.Acquire(ctx, "sub-ms", "replica-1", 1500*time.Microsecond)
	require.NoError(t, err)
	require.True(t, ok)

	// Release deletes the key; a non-holder's release does not.
	require.NoError(t, l.Release(ctx, "openapi", "replica-2"))
	n, err := c.Exists(ctx, p+"l:{openapi}").Result()
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.NoError(t, l.Release(ctx, "openapi", "replica-1"))
	n, err = c.Exists(ctx, p+"l:{openapi}").Result()
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestRedisClusterKeySlot(t *testing.T) {
	ctx := context.Background()
	c := redistest.Cluster(t).Client(t)
	p := redistest.Prefix(t)
	redistest.Cleanup(t, c, p)
	l := NewRedis(c, p)
	for _, name := range []string{"openapi", "resource:file:///etc/motd", "resource:https://api.example.com/a"} {
		want, err := c.ClusterKeySlot(ctx, name).Result()
		require.NoError(t, err)
		got, err := c.ClusterKeySlot(ctx, l.key(name)).Result()
		require.NoError(t, err)
		require.Equal(t, want, got, "the slot of %q is its name's alone", name)
	}
}

func TestRedisAcquireIsOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: redistest.Standalone(t).Addr})
	t.Cleanup(func() { _ = c.Close() })
	hook := &redistest.Commands{}
	c.AddHook(hook)
	l := NewRedis(c, redistest.Prefix(t))

	// The first calls load the scripts (EVALSHA, NOSCRIPT, then EVAL).
	_, err := l.Acquire(ctx, "warm", "r1", long)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx, "warm", "r1"))
	hook.Take()

	one := [][]string{{"evalsha"}}
	for _, step := range []struct {
		what   string
		holder string
		want   bool
	}{
		{"take", "r1", true},
		{"renew", "r1", true},
		{"refuse", "r2", false},
	} {
		ok, err := l.Acquire(ctx, "openapi", step.holder, long)
		require.NoError(t, err)
		require.Equal(t, step.want, ok, step.what)
		require.Equal(t, one, hook.Take(), "%s: one round trip", step.what)
	}
	require.NoError(t, l.Release(ctx, "openapi", "r1"))
	require.Equal(t, one, hook.Take(), "release: one round trip")
	_, err = l.Holder(ctx, "openapi")
	require.NoError(t, err)
	require.Equal(t, [][]string{{"get"}}, hook.Take(), "holder: one round trip")
}

func TestRedisUnavailable(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	// No go-redis retries, so that each failure is one refused dial.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = c.Close() })
	l := NewRedis(c, redistest.Prefix(t))
	ok, err := l.Acquire(ctx, "openapi", "r1", long)
	require.NoError(t, err)
	require.True(t, ok)

	srv.Stop()
	ok, err = l.Acquire(ctx, "openapi", "r1", long)
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorContains(t, err, "lease: store unavailable: ")
	require.False(t, ok)
	require.ErrorIs(t, l.Release(ctx, "openapi", "r1"), ErrUnavailable)
	_, err = l.Holder(ctx, "openapi")
	require.ErrorIs(t, err, ErrUnavailable)

	// It recovers on its own when Redis returns (empty: data may be lost).
	srv.Start()
	await(t, "acquire after Redis is back", func() (bool, error) {
		ok, err := l.Acquire(ctx, "openapi", "r2", long)
		return err == nil && ok, nil
	})
}

func TestRedisErrorsThatAreNotOutages(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	p := redistest.Prefix(t)
	l := NewRedis(c, p)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := l.Acquire(canceled, "openapi", "r1", long)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, ErrUnavailable, "the caller gave up; the store is fine")
	_, err = l.Holder(canceled, "openapi")
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, ErrUnavailable)

	expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	err = l.Release(expired, "openapi", "r1")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, ErrUnavailable)

	// A reply from a healthy server (here WRONGTYPE) is a fault, not an outage.
	require.NoError(t, c.LPush(ctx, l.key("list"), "x").Err())
	_, err = l.Acquire(ctx, "list", "r1", long)
	require.ErrorContains(t, err, "WRONGTYPE")
	require.NotErrorIs(t, err, ErrUnavailable)
	_, err = l.Holder(ctx, "list")
	require.ErrorContains(t, err, "WRONGTYPE")
	require.NotErrorIs(t, err, ErrUnavailable)
}

func TestRedisRunsAfterScriptFlush(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t) // our own server: SCRIPT FLUSH touches no one else
	l := NewRedis(c, redistest.Prefix(t))

	ok, err := l.Acquire(ctx, "openapi", "r1", long)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, c.ScriptFlush(ctx).Err())
	ok, err = l.Acquire(ctx, "openapi", "r1", long)
	require.NoError(t, err, "NOSCRIPT falls back to EVAL")
	require.True(t, ok, "the renewal found the lease")
	ok, err = l.Acquire(ctx, "openapi", "r2", long)
	require.NoError(t, err)
	require.False(t, ok)

	require.NoError(t, c.ScriptFlush(ctx).Err())
	require.NoError(t, l.Release(ctx, "openapi", "r1"))
	h, err := l.Holder(ctx, "openapi")
	require.NoError(t, err)
	require.Empty(t, h, "the release ran")
	ok, err = l.Acquire(ctx, "openapi", "r2", long)
	require.NoError(t, err)
	require.True(t, ok)
	cached, err := c.ScriptExists(ctx, acquireScript.Hash(), releaseScript.Hash()).Result()
	require.NoError(t, err)
	require.Equal(t, []bool{true, true}, cached, "EVAL cached the scripts again")
}
