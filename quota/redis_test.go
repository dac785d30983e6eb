package quota

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

func TestRedisUnavailable(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	// No go-redis retries, so that each failure is one refused dial.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { c.Close() })
	l := NewRedis(c, redistest.Prefix(t))
	lim := Limit{Rate: 1, Burst: 5}

	d, err := l.Allow(ctx, "k", lim)
	require.NoError(t, err)
	require.True(t, d.Allowed)

	srv.Stop()
	_, err = l.Allow(ctx, "k", lim)
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorContains(t, err, "quota: store unavailable: ")
	d, err = l.Allow(ctx, "k", Limit{})
	require.NoError(t, err, "the zero limit must not touch the store")
	require.True(t, d.Allowed)

	// It recovers on its own when Redis returns (empty: data may be lost).
	srv.Start()
	require.Eventually(t, func() bool {
		d, err := l.Allow(ctx, "k", lim)
		return err == nil && d.Allowed
	}, 10*time.Second, 10*time.Millisecond)
}

func TestRedisErrorsThatAreNotOutages(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	p := redistest.Prefix(t)
	l := NewRedis(c, p)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := l.Allow(canceled, "k", Limit{Rate: 1, Burst: 1})
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, ErrUnavailable, "the caller gave up; the store is fine")

	// A reply from a healthy server (here WRONGTYPE) is a fault, not an outage.
	require.NoError(t, c.LPush(ctx, l.bucketKey("list"), "x").Err())
	_, err = l.Allow(ctx, "list", Limit{Rate: 1, Burst: 1})
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrUnavailable)
	require.ErrorContains(t, err, "WRONGTYPE")
}

func TestRedisKeysAndExpiry(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	p := redistest.Prefix(t)
	l := NewRedis(c, p)
	lim := Limit{Rate: 10, Burst: 5} // 100ms a token

	_, err := l.Allow(ctx, "tenant/1", lim)
	require.NoError(t, err)
	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	require.Equal(t, []string{p + "{tenant/1}"}, keys, "prefix and hash tag")
	ttl, err := c.PTTL(ctx, p+"{tenant/1}").Result()
	require.NoError(t, err)
	require.Greater(t, ttl, time.Duration(0))
	require.LessOrEqual(t, ttl, 100*time.Millisecond, "one token taken: full again in one interval")

	for range 4 {
		_, err := l.Allow(ctx, "tenant/1", lim)
		require.NoError(t, err)
	}
	ttl, err = c.PTTL(ctx, p+"{tenant/1}").Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 400*time.Millisecond-50*time.Millisecond)
	require.LessOrEqual(t, ttl, 500*time.Millisecond, "empty: full again in burst intervals")

	d, err := l.Allow(ctx, "tenant/1", lim)
	require.NoError(t, err)
	require.False(t, d.Allowed)
	after, err := c.PTTL(ctx, p+"{tenant/1}").Result()
	require.NoError(t, err)
	require.LessOrEqual(t, after, ttl, "a denial writes nothing")

	// The key goes once the bucket is full again.
	require.Eventually(t, func() bool {
		n, err := c.Exists(ctx, p+"{tenant/1}").Result()
		return err == nil && n == 0
	}, 5*time.Second, 10*time.Millisecond)
}

func TestRedisRunsAfterScriptFlush(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t) // our own server: SCRIPT FLUSH touches no one else
	l := NewRedis(c, redistest.Prefix(t))
	lim := Limit{Rate: slow, Burst: 2}

	_, err := l.Allow(ctx, "k", lim)
	require.NoError(t, err)
	require.NoError(t, c.ScriptFlush(ctx).Err())
	d, err := l.Allow(ctx, "k", lim)
	require.NoError(t, err, "NOSCRIPT falls back to EVAL")
	require.Equal(t, Decision{Allowed: true, Remaining: 0}, d)
	cached, err := c.ScriptExists(ctx, allowScript.Hash()).Result()
	require.NoError(t, err)
	require.Equal(t, []bool{true}, cached, "EVAL cached the script again")
}
