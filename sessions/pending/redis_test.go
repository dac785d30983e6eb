package pending

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// redisContract runs the contract with two stores on two clients of the
// same server, as two replicas are.
func redisContract(t *testing.T, newClient func(t *testing.T) redis.UniversalClient) {
	storeContract(t, func(t *testing.T) (Store, Store) {
		p := redistest.Prefix(t)
		a, b := newClient(t), newClient(t)
		redistest.Cleanup(t, a, p)
		return NewRedis(a, p), NewRedis(b, p)
	})
}

func TestRedisContract(t *testing.T) {
	srv := redistest.Standalone(t)
	redisContract(t, func(t *testing.T) redis.UniversalClient { return srv.Client(t) })
}

// On a Cluster every call must touch the one key of its session, token or
// name.
func TestRedisClusterContract(t *testing.T) {
	cs := redistest.Cluster(t)
	redisContract(t, func(t *testing.T) redis.UniversalClient { return cs.Client(t) })
}

func TestRedisKeys(t *testing.T) {
	r := NewRedis(nil, "p:")
	require.Equal(t, "p:r:{s-1}", r.sessionKey("s-1"))
	require.Equal(t, "p:r:{a%7D:b{c%25}", r.sessionKey("a}:b{c%"))
	require.Equal(t, "p:c:{tok%7D}", r.markKey("tok}"))
	require.Equal(t, "p:k:{mrtr}", r.sharedKey("mrtr"))
}

func TestRedisKeysAndExpiry(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t) // our own server: every key on it is ours
	p := redistest.Prefix(t)
	s := NewRedis(c, p)
	now := time.Now()
	require.NoError(t, s.Add(ctx, Record{Session: "s1", ID: "7", Replica: "replica-a", Deadline: now.Add(10 * time.Minute)}, 0))
	require.NoError(t, s.Add(ctx, Record{Session: "s1", ID: "8", Replica: "replica:b", Deadline: now.Add(time.Minute)}, 0))
	_, err := s.Consume(ctx, "tok", 30*time.Second)
	require.NoError(t, err)
	_, err = s.SharedKey(ctx, "mrtr", []byte("secret"))
	require.NoError(t, err)

	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{p + "r:{s1}", p + "c:{tok}", p + "k:{mrtr}"}, keys)

	fields, err := c.HGetAll(ctx, p+"r:{s1}").Result()
	require.NoError(t, err)
	require.Len(t, fields, 2)
	require.Equal(t, strconv.FormatInt(now.Add(10*time.Minute).UnixMilli(), 10)+":replica-a", fields["7"], "deadline in ms, then the replica")
	require.Regexp(t, `^\d{13}:replica:b$`, fields["8"])

	pttl := func(k string) time.Duration {
		t.Helper()
		d, err := c.PTTL(ctx, k).Result()
		require.NoError(t, err)
		return d
	}
	require.InDelta(t, 10*time.Minute+hashSlack, pttl(p+"r:{s1}"), float64(5*time.Second), "the latest deadline and the slack")
	require.InDelta(t, 30*time.Second, pttl(p+"c:{tok}"), float64(5*time.Second))
	require.Equal(t, time.Duration(-1), pttl(p+"k:{mrtr}"), "no expiry")

	// A later Add with an earlier deadline does not shorten the hash.
	require.NoError(t, s.Add(ctx, Record{Session: "s1", ID: "9", Replica: "r", Deadline: time.Now().Add(time.Second)}, 0))
	require.InDelta(t, 10*time.Minute+hashSlack, pttl(p+"r:{s1}"), float64(5*time.Second))
	// Removing the longest keeps the expiry until the next Add sets it.
	ok, err := s.Remove(ctx, "s1", "7")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, s.Add(ctx, Record{Session: "s1", ID: "10", Replica: "r", Deadline: time.Now().Add(2 * time.Minute)}, 0))
	require.InDelta(t, 2*time.Minute+hashSlack, pttl(p+"r:{s1}"), float64(5*time.Second))
}

func TestRedisAddDropsExpiredFields(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	p := redistest.Prefix(t)
	s := NewRedis(c, p)
	require.NoError(t, s.Add(ctx, Record{Session: "s", ID: "old", Replica: "r", Deadline: time.Now().Add(short)}, 0))
	eventually(t, func() bool {
		_, err := s.Get(ctx, "s", "old")
		return err != nil
	}, "the record lapses")
	require.NoError(t, s.Add(ctx, Record{Session: "s", ID: "new", Replica: "r", Deadline: time.Now().Add(long)}, 0))
	fields, err := c.HKeys(ctx, p+"r:{s}").Result()
	require.NoError(t, err)
	require.Equal(t, []string{"new"}, fields)
}

func TestRedisClusterKeySlot(t *testing.T) {
	ctx := context.Background()
	c := redistest.Cluster(t).Client(t)
	p := redistest.Prefix(t)
	r := NewRedis(c, p)
	for _, name := range []string{"session-1", "0f3a9c", "a}b"} {
		want, err := c.ClusterKeySlot(ctx, "{"+name+"}").Result()
		require.NoError(t, err)
		if name == "a}b" {
			want, err = c.ClusterKeySlot(ctx, "{a%7Db}").Result()
			require.NoError(t, err)
		}
		for _, k := range []string{r.sessionKey(name), r.markKey(name), r.sharedKey(name)} {
			got, err := c.ClusterKeySlot(ctx, k).Result()
			require.NoError(t, err)
			require.Equal(t, want, got, "the slot of %q is its hash tag's alone", k)
		}
	}
}

// exercise calls every method once, loading every script.
func exercise(t *testing.T, s Store) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.Add(ctx, Record{Session: "w", ID: "1", Replica: "r", Deadline: time.Now().Add(long)}, 1))
	_, err := s.Get(ctx, "w", "1")
	require.NoError(t, err)
	_, err = s.Remove(ctx, "w", "1")
	require.NoError(t, err)
	_, err = s.RemoveSession(ctx, "w")
	require.NoError(t, err)
	_, err = s.Consume(ctx, "w", long)
	require.NoError(t, err)
	_, err = s.SharedKey(ctx, "w", []byte("k"))
	require.NoError(t, err)
}

func TestRedisRoundTrips(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	hook := &redistest.Commands{}
	c.AddHook(hook)
	s := NewRedis(c, redistest.Prefix(t))
	exercise(t, s)
	hook.Take()

	evalsha := [][]string{{"evalsha"}}
	for _, step := range []struct {
		what string
		do   func() error
		want [][]string
	}{
		{"add", func() error {
			return s.Add(ctx, Record{Session: "s", ID: "1", Replica: "r", Deadline: time.Now().Add(long)}, 1)
		}, evalsha},
		{"add refused at the cap", func() error {
			err := s.Add(ctx, Record{Session: "s", ID: "2", Replica: "r", Deadline: time.Now().Add(long)}, 1)
			require.ErrorIs(t, err, ErrFull)
			return nil
		}, evalsha},
		{"get", func() error { _, err := s.Get(ctx, "s", "1"); return err }, [][]string{{"hget"}}},
		{"get of nothing", func() error {
			_, err := s.Get(ctx, "s", "none")
			require.ErrorIs(t, err, ErrNotFound)
			return nil
		}, [][]string{{"hget"}}},
		{"remove", func() error { _, err := s.Remove(ctx, "s", "1"); return err }, evalsha},
		{"remove session", func() error { _, err := s.RemoveSession(ctx, "s"); return err }, evalsha},
		{"consume", func() error { _, err := s.Consume(ctx, "t", long); return err }, [][]string{{"set"}}},
		{"replay", func() error { _, err := s.Consume(ctx, "t", long); return err }, [][]string{{"set"}}},
		{"shared key", func() error { _, err := s.SharedKey(ctx, "k", []byte("x")); return err }, evalsha},
	} {
		hook.Take()
		require.NoError(t, step.do(), step.what)
		require.Equal(t, step.want, hook.Take(), "%s: one round trip", step.what)
	}
}

func TestRedisRunsAfterScriptFlush(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t) // our own server: SCRIPT FLUSH touches no one else
	s := NewRedis(c, redistest.Prefix(t))
	flush := func() {
		t.Helper()
		require.NoError(t, c.ScriptFlush(ctx).Err())
	}
	exercise(t, s)
	flush()
	require.NoError(t, s.Add(ctx, Record{Session: "s", ID: "1", Replica: "r", Deadline: time.Now().Add(long)}, 0), "NOSCRIPT falls back to EVAL")
	flush()
	ok, err := s.Remove(ctx, "s", "1")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, s.Add(ctx, Record{Session: "s", ID: "2", Replica: "r", Deadline: time.Now().Add(long)}, 0))
	flush()
	got, err := s.RemoveSession(ctx, "s")
	require.NoError(t, err)
	require.Len(t, got, 1)
	flush()
	k, err := s.SharedKey(ctx, "w", []byte("other"))
	require.NoError(t, err)
	require.Equal(t, []byte("k"), k)
	cached, err := c.ScriptExists(ctx, addScript.Hash(), removeScript.Hash(), takeScript.Hash(), sharedScript.Hash()).Result()
	require.NoError(t, err)
	require.Equal(t, []bool{false, false, false, true}, cached, "EVAL cached the script it ran")
}

func TestRedisUnavailable(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	// No go-redis retries, so that each failure is one refused dial.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	s := NewRedis(c, redistest.Prefix(t))
	exercise(t, s)

	srv.Stop()
	down := func(err error, what string) {
		t.Helper()
		require.ErrorIs(t, err, ErrUnavailable, what)
		require.ErrorContains(t, err, "pending: store unavailable: ", what)
	}
	down(s.Add(ctx, Record{Session: "s", ID: "1", Replica: "r", Deadline: time.Now().Add(long)}, 0), "add")
	_, err := s.Get(ctx, "s", "1")
	down(err, "get")
	require.NotErrorIs(t, err, ErrNotFound)
	_, err = s.Remove(ctx, "s", "1")
	down(err, "remove")
	_, err = s.RemoveSession(ctx, "s")
	down(err, "remove session")
	_, err = s.Consume(ctx, "t", long)
	down(err, "consume")
	_, err = s.SharedKey(ctx, "k", []byte("x"))
	down(err, "shared key")

	// It recovers on its own when Redis returns (empty: data may be lost).
	srv.Start()
	eventually(t, func() bool {
		first, err := s.Consume(ctx, "t", long)
		return err == nil && first
	}, "back")
}

func TestRedisErrorsThatAreNotOutages(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	p := redistest.Prefix(t)
	s := NewRedis(c, p)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	err := s.Add(canceled, Record{Session: "s", ID: "1", Replica: "r", Deadline: time.Now().Add(long)}, 0)
	require.Equal(t, context.Canceled, err, "passed through, unwrapped")
	_, err = s.Consume(canceled, "t", long)
	require.Equal(t, context.Canceled, err)
	expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	_, err = s.Get(expired, "s", "1")
	require.Equal(t, context.DeadlineExceeded, err)

	// A reply from a healthy server (here WRONGTYPE) is a fault, not an outage.
	require.NoError(t, c.LPush(ctx, s.sessionKey("list"), "x").Err())
	err = s.Add(ctx, Record{Session: "list", ID: "1", Replica: "r", Deadline: time.Now().Add(long)}, 0)
	require.ErrorContains(t, err, "WRONGTYPE")
	require.NotErrorIs(t, err, ErrUnavailable)
	_, err = s.Get(ctx, "list", "1")
	require.ErrorContains(t, err, "WRONGTYPE")
	require.NotErrorIs(t, err, ErrNotFound)

	// A field another writer left unreadable is an error, not a record.
	require.NoError(t, c.HSet(ctx, s.sessionKey("bad"), "1", "not-a-deadline").Err())
	_, err = s.Get(ctx, "bad", "1")
	require.ErrorContains(t, err, "malformed record")
	require.NotErrorIs(t, err, ErrNotFound)
}
