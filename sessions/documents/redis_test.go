package documents

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func redisContract(t *testing.T, c redis.UniversalClient) {
	contract(t, func(t *testing.T) Store {
		p := redistest.Prefix(t)
		redistest.Cleanup(t, c, p)
		return NewRedis(c, p)
	})
}

func TestRedisContract(t *testing.T) { redisContract(t, redistest.Standalone(t).Client(t)) }

// On a Cluster the scripts only work because the keys each touches share a slot.
func TestRedisClusterContract(t *testing.T) { redisContract(t, redistest.Cluster(t).Client(t)) }

func TestRedisClusterKeysShareSlots(t *testing.T) {
	ctx := context.Background()
	c := redistest.Cluster(t).Client(t).(*redis.ClusterClient)
	r := NewRedis(c, redistest.Prefix(t))
	slot := func(key string) int64 {
		t.Helper()
		n, err := c.ClusterKeySlot(ctx, key).Result()
		require.NoError(t, err)
		return n
	}
	require.Equal(t, slot(r.curKey()), slot(r.docKey("sha256:abc")))
	require.Equal(t, slot(r.curKey()), slot(r.docKey("{odd}id")), "a brace in an id does not move its bytes")
	require.Equal(t, slot(r.idsKey()), slot(r.expKey()))
}

func TestRedisKeysAreUnderThePrefix(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t) // our own server: KEYS * sees only this test's keys
	p := redistest.Prefix(t)
	s := NewRedis(c, p)
	for _, id := range []string{"v1", "v2", "v3"} {
		_, _, err := s.Publish(ctx, id, []byte(id))
		require.NoError(t, err)
	}
	require.NoError(t, s.Report(ctx, "replica-a", "v3", time.Hour))
	require.NoError(t, s.Report(ctx, "replica-b", "v2", time.Hour))

	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	for _, k := range keys {
		require.True(t, strings.HasPrefix(k, p), "key %q is outside the prefix %q", k, p)
	}
	require.ElementsMatch(t, []string{
		p + "{doc}:cur", p + "{doc}:d:v2", p + "{doc}:d:v3",
		p + "{replicas}:ids", p + "{replicas}:exp",
	}, keys)
}

func TestRedisReportKeysExpireWithTheLastReport(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	p := redistest.Prefix(t)
	s := NewRedis(c, p)

	require.NoError(t, s.Report(ctx, "replica-a", "v1", time.Hour))
	for _, k := range []string{p + "{replicas}:ids", p + "{replicas}:exp"} {
		ttl, err := c.PTTL(ctx, k).Result()
		require.NoError(t, err)
		require.Greater(t, ttl, time.Duration(0), "%s expires", k)
		require.LessOrEqual(t, ttl, time.Hour, k)
	}

	// The only report, shortened: the keys go with it, without another call.
	require.NoError(t, s.Report(ctx, "replica-a", "v1", 200*time.Millisecond))
	require.Eventually(t, func() bool {
		n, err := c.Exists(ctx, p+"{replicas}:ids", p+"{replicas}:exp").Result()
		return err == nil && n == 0
	}, 10*time.Second, 10*time.Millisecond)
}

func TestRedisPublishRefusesAStalePointer(t *testing.T) {
	// The script's guard against a Publish that ran between another's read
	// of the pointer and its script; the contract's concurrent publishes
	// reach it only by chance.
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	s := NewRedis(c, redistest.Prefix(t))
	_, _, err := s.Publish(ctx, "v1", []byte("one"))
	require.NoError(t, err)
	_, _, err = s.Publish(ctx, "v2", []byte("two"))
	require.NoError(t, err)

	for _, stale := range [][2]string{{"", ""}, {"v1", ""}, {"v2", ""}, {"v2", "v0"}} {
		res, err := publishScript.Run(ctx, c, []string{s.curKey(), s.docKey("v3"), s.docKey(stale[1])},
			"v3", "three", stale[0], stale[1]).Slice()
		require.NoError(t, err)
		require.Equal(t, []any{int64(publishConflict), "v2", "v1"}, res, "read %v", stale)
	}
	_, err = s.Document(ctx, "v3")
	require.ErrorIs(t, err, ErrNotFound, "a refused publish writes no bytes")
	v, _, err := s.Current(ctx)
	require.NoError(t, err)
	require.Equal(t, "v2", v.ID)
	_, err = s.Document(ctx, "v1")
	require.NoError(t, err, "nor drops any")
}

func TestRedisUnavailableAndBack(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	// No go-redis retries, so that each failure is one refused dial.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond, DialerRetries: 1})
	t.Cleanup(func() { c.Close() })
	s := NewRedis(c, redistest.Prefix(t))
	_, _, err := s.Publish(ctx, "v1", []byte("one"))
	require.NoError(t, err)

	srv.Stop()
	for name, call := range map[string]func() error{
		"Publish":  func() error { _, _, err := s.Publish(ctx, "v2", []byte("two")); return err },
		"Current":  func() error { _, _, err := s.Current(ctx); return err },
		"Document": func() error { _, err := s.Document(ctx, "v1"); return err },
		"Report":   func() error { return s.Report(ctx, "r", "v1", time.Hour) },
		"Leave":    func() error { return s.Leave(ctx, "r") },
		"Replicas": func() error { _, err := s.Replicas(ctx); return err },
	} {
		err := call()
		require.ErrorIs(t, err, ErrUnavailable, name)
		require.ErrorContains(t, err, "documents: store unavailable: ", name)
		require.NotErrorIs(t, err, ErrNotFound, "%s: an outage must never look like a missing version", name)
	}

	srv.Start() // same port, empty data
	require.Eventually(t, func() bool {
		_, changed, err := s.Publish(ctx, "v2", []byte("two"))
		return err == nil && changed
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, s.Report(ctx, "r", "v2", time.Hour))
}

func TestRedisErrorsThatAreNotOutages(t *testing.T) {
	// A reply from a healthy server (here WRONGTYPE) is a fault, not an outage.
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	s := NewRedis(c, redistest.Prefix(t))
	require.NoError(t, c.LPush(ctx, s.curKey(), "x").Err())
	require.NoError(t, c.LPush(ctx, s.expKey(), "x").Err())
	for name, call := range map[string]func() error{
		"Publish":  func() error { _, _, err := s.Publish(ctx, "v1", []byte("one")); return err },
		"Current":  func() error { _, _, err := s.Current(ctx); return err },
		"Report":   func() error { return s.Report(ctx, "r", "v1", time.Hour) },
		"Replicas": func() error { _, err := s.Replicas(ctx); return err },
	} {
		err := call()
		require.ErrorContains(t, err, "WRONGTYPE", name)
		require.NotErrorIs(t, err, ErrUnavailable, name)
	}
}

func TestRedisRunsAfterScriptFlush(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t) // our own server: SCRIPT FLUSH touches no one else
	s := NewRedis(c, redistest.Prefix(t))
	_, _, err := s.Publish(ctx, "v1", []byte("one"))
	require.NoError(t, err)
	require.NoError(t, s.Report(ctx, "r", "v1", time.Hour))
	_, err = s.Replicas(ctx)
	require.NoError(t, err)

	require.NoError(t, c.ScriptFlush(ctx).Err())
	_, changed, err := s.Publish(ctx, "v2", []byte("two"))
	require.NoError(t, err, "NOSCRIPT falls back to EVAL")
	require.True(t, changed)
	require.NoError(t, s.Report(ctx, "r", "v2", time.Hour))
	got, err := s.Replicas(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"r": "v2"}, got)
	cached, err := c.ScriptExists(ctx, publishScript.Hash(), reportScript.Hash(), replicasScript.Hash()).Result()
	require.NoError(t, err)
	require.Equal(t, []bool{true, true, true}, cached, "EVAL cached the scripts again")
}
