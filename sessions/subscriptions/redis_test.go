package subscriptions

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func redisContract(t *testing.T, c redis.UniversalClient) {
	storeContract(t, func(t *testing.T, l Limits) Store {
		p := redistest.Prefix(t)
		redistest.Cleanup(t, c, p)
		return NewRedis(c, p, l)
	})
}

func TestRedisContract(t *testing.T) { redisContract(t, redistest.Standalone(t).Client(t)) }

// On a Cluster a URI's and a subscriber's keys sit in different slots:
// each step must be a script of its own.
func TestRedisClusterContract(t *testing.T) { redisContract(t, redistest.Cluster(t).Client(t)) }

func TestRedisEscapesHashTags(t *testing.T) {
	r := NewRedis(nil, "p:", Limits{})
	for in, want := range map[string]string{
		"res://a":   "p:u:{res://a}",
		"}":         "p:u:{%7D}",
		"%":         "p:u:{%25}",
		"%7D":       "p:u:{%257D}",
		"a}:b{c}":   "p:u:{a%7D:b{c%7D}",
		"{":         "p:u:{{}",
		"with ü ✓ ": "p:u:{with ü ✓ }",
	} {
		require.Equal(t, want, r.uriKey(in), "%q", in)
	}
	require.Equal(t, "p:s:{l:r%7D:1%7D}", r.subKey("l:r}:1}"))
	require.Equal(t, "p:st:{a%7D}", r.stateKey("a}"))
	require.Equal(t, "p:uris", r.urisKey())
}

// keysOf returns every key matching the SCAN pattern match on every
// master of c, with its PTTL.
func keysOf(t *testing.T, c redis.UniversalClient, match string) map[string]time.Duration {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	out := map[string]time.Duration{}
	scan := func(ctx context.Context, node *redis.Client) error {
		iter := node.Scan(ctx, 0, match, 500).Iterator()
		for iter.Next(ctx) {
			k := iter.Val()
			d, err := node.PTTL(ctx, k).Result()
			if err != nil {
				return err
			}
			mu.Lock()
			out[k] = d
			mu.Unlock()
		}
		return iter.Err()
	}
	switch c := c.(type) {
	case *redis.ClusterClient:
		require.NoError(t, c.ForEachMaster(ctx, scan))
	case *redis.Client:
		require.NoError(t, scan(ctx, c))
	}
	return out
}

// exercise leaves subscriptions, lapsed ones and states in s.
func exercise(t *testing.T, s Store) {
	t.Helper()
	ctx := context.Background()
	subs := []string{"s:1", "l:r}1:2"}
	for _, sub := range subs {
		require.NoError(t, s.Add(ctx, sub, "res://a", short))
		require.NoError(t, s.Add(ctx, sub, "res://{b}", long))
	}
	require.NoError(t, s.Refresh(ctx, "s:1", long))
	require.NoError(t, s.Refresh(ctx, "l:r}1:2", long))
	for _, sub := range subs {
		require.NoError(t, s.Add(ctx, sub, "res://lapses", short))
	}
	require.NoError(t, s.Remove(ctx, "s:1", "res://a"))
	require.NoError(t, s.Add(ctx, "s:gone", "res://a", long))
	require.NoError(t, s.RemoveAll(ctx, "s:gone"))
	require.NoError(t, s.SetState(ctx, "res://a", []byte("etag"), long))
	require.NoError(t, s.SetState(ctx, "res://lapses", []byte("etag"), short))
	_, err := s.URIs(ctx)
	require.NoError(t, err)
}

func TestRedisKeysAndExpiry(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t) // our own server: every key on it is ours
	p := redistest.Prefix(t)
	s := NewRedis(c, p, Limits{})
	exercise(t, s)

	keys := keysOf(t, c, "*")
	require.ElementsMatch(t, []string{
		p + "uris",
		p + "u:{res://a}", p + "u:{res://{b%7D}", p + "u:{res://lapses}",
		p + "s:{s:1}", p + "s:{l:r%7D1:2}",
		p + "st:{res://a}", p + "st:{res://lapses}",
	}, slices.Collect(mapsKeys(keys)), "every key under the prefix; s:gone left none")
	for k, ttl := range keys {
		require.Greater(t, ttl, time.Duration(0), "%s has no expiry", k)
		require.LessOrEqual(t, ttl, long+uriSlack, k)
	}
	require.InDelta(t, long, keys[p+"u:{res://a}"], float64(time.Minute), "a set expires with its last member")
	require.InDelta(t, long+uriSlack, keys[p+"uris"], float64(time.Minute))

	members, err := c.ZRange(ctx, p+"u:{res://a}", 0, -1).Result()
	require.NoError(t, err)
	require.Equal(t, []string{"l:r}1:2"}, members)
	members, err = c.ZRange(ctx, p+"uris", 0, -1).Result()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"res://a", "res://{b}", "res://lapses"}, members)

	// The short entries lapse: their keys go by themselves, and reads
	// drop expired members from the keys that stay.
	eventually(t, func() bool {
		n, err := c.Exists(ctx, p+"u:{res://lapses}", p+"st:{res://lapses}").Result()
		return err == nil && n == 0
	}, "keys expire with their last member")
	for _, sub := range []string{"s:1", "l:r}1:2"} {
		got, err := s.Of(ctx, sub)
		require.NoError(t, err)
		require.NotContains(t, got, "res://lapses")
	}
	members, err = c.ZRange(ctx, p+"s:{s:1}", 0, -1).Result()
	require.NoError(t, err)
	require.Equal(t, []string{"res://{b}"}, members, "Of dropped the expired member")
	got, err := s.URIs(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"res://a", "res://{b}"}, got)
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestRedisClusterKeysStayUnderThePrefixWithATTL(t *testing.T) {
	c := redistest.Cluster(t).Client(t)
	p := redistest.Prefix(t)
	redistest.Cleanup(t, c, p)
	exercise(t, NewRedis(c, p, Limits{}))
	keys := keysOf(t, c, p+"*") // the prefix has no glob metacharacters
	require.Len(t, keys, 8)
	for k, ttl := range keys {
		require.Greater(t, ttl, time.Duration(0), "%s has no expiry", k)
	}
}

func TestRedisUnavailable(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	// No go-redis retries, so that each failure is one refused dial.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	s := NewRedis(c, redistest.Prefix(t), Limits{})
	require.NoError(t, s.Add(ctx, "s:1", "res://a", long))

	srv.Stop()
	down := func(err error, what string) {
		t.Helper()
		require.ErrorIs(t, err, ErrUnavailable, what)
		require.ErrorContains(t, err, "subscriptions: store unavailable: ", what)
	}
	down(s.Add(ctx, "s:1", "res://b", long), "add")
	down(s.Remove(ctx, "s:1", "res://a"), "remove")
	down(s.RemoveAll(ctx, "s:1"), "remove all")
	down(s.Refresh(ctx, "s:1", long), "refresh")
	_, err := s.Subscribers(ctx, "res://a")
	down(err, "subscribers")
	_, err = s.Of(ctx, "s:1")
	down(err, "of")
	_, err = s.URIs(ctx)
	down(err, "uris")
	_, err = s.State(ctx, "res://a")
	down(err, "state")
	down(s.SetState(ctx, "res://a", nil, long), "set state")

	// It recovers on its own when Redis returns (empty: data may be lost).
	srv.Start()
	eventually(t, func() bool { return s.Add(ctx, "s:1", "res://a", long) == nil }, "back")
	got, err := s.URIs(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"res://a"}, got)
}

func TestRedisErrorsThatAreNotOutages(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	p := redistest.Prefix(t)
	s := NewRedis(c, p, Limits{})

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	require.Equal(t, context.Canceled, s.Add(canceled, "s:1", "res://a", long), "passed through, unwrapped")
	_, err := s.Of(canceled, "s:1")
	require.Equal(t, context.Canceled, err)
	expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	_, err = s.State(expired, "res://a")
	require.Equal(t, context.DeadlineExceeded, err)

	// A reply from a healthy server (here WRONGTYPE) is a fault, not an outage.
	require.NoError(t, c.LPush(ctx, s.uriKey("res://list"), "x").Err())
	err = s.Add(ctx, "s:1", "res://list", long)
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrUnavailable)
	require.ErrorContains(t, err, "WRONGTYPE")
}

func TestRedisRunsAfterScriptFlush(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t) // our own server: SCRIPT FLUSH touches no one else
	s := NewRedis(c, redistest.Prefix(t), Limits{})
	flush := func() {
		t.Helper()
		require.NoError(t, c.ScriptFlush(ctx).Err())
	}
	require.NoError(t, s.Add(ctx, "s:1", "res://a", long))
	flush()
	require.NoError(t, s.Add(ctx, "s:1", "res://b", long), "NOSCRIPT falls back to EVAL")
	flush()
	require.NoError(t, s.Refresh(ctx, "s:1", long), "in a pipeline too")
	flush()
	got, err := s.Of(ctx, "s:1")
	require.NoError(t, err)
	require.Equal(t, []string{"res://a", "res://b"}, got)
	flush()
	got, err = s.URIs(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"res://a", "res://b"}, got)
	flush()
	got, err = s.Subscribers(ctx, "res://a")
	require.NoError(t, err)
	require.Equal(t, []string{"s:1"}, got)
	flush()
	require.NoError(t, s.RemoveAll(ctx, "s:1"))
	got, err = s.URIs(ctx)
	require.NoError(t, err)
	require.Empty(t, got)
	cached, err := c.ScriptExists(ctx, probeScript.Hash(), liveScript.Hash()).Result()
	require.NoError(t, err)
	require.Equal(t, []bool{true, true}, cached, "EVAL cached the scripts again")
}

// commandLog records the round trips a client makes: each command, and
// each pipeline as one.
type commandLog struct {
	mu    sync.Mutex
	names []string
	// failAfter, when not negative, lets that many round trips through
	// and fails the rest, as if the replica crashed.
	failAfter int
}

var errCrashed = errors.New("the replica crashed")

func (h *commandLog) note(name string) error {
	if name == "hello" || name == "client" {
		return nil // a new connection's handshake
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failAfter >= 0 && len(h.names) >= h.failAfter {
		return errCrashed
	}
	h.names = append(h.names, name)
	return nil
}

// DialHook, ProcessHook and ProcessPipelineHook implement redis.Hook.
func (h *commandLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *commandLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.note(cmd.Name()); err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (h *commandLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		name := "pipeline"
		if len(cmds) > 0 && (cmds[0].Name() == "hello" || cmds[0].Name() == "client") {
			name = "hello"
		}
		if err := h.note(name); err != nil {
			for _, cmd := range cmds {
				cmd.SetErr(err)
			}
			return err
		}
		return next(ctx, cmds)
	}
}

// take returns the round trips so far and starts afresh, failing after n
// more (-1: never).
func (h *commandLog) take(n int) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	names := h.names
	h.names, h.failAfter = nil, n
	return names
}

func TestRedisRoundTrips(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	s := NewRedis(c, redistest.Prefix(t), Limits{MaxPerSubscriber: 2})
	exercise(t, NewRedis(c, redistest.Prefix(t), Limits{})) // loads every script
	log := &commandLog{failAfter: -1}
	c.AddHook(log)

	steps := []struct {
		what string
		do   func() error
		want []string
	}{
		{"add", func() error { return s.Add(ctx, "s:1", "res://a", long) }, []string{"evalsha", "evalsha", "evalsha", "evalsha"}},
		{"add again", func() error { return s.Add(ctx, "s:1", "res://b", long) }, []string{"evalsha", "evalsha", "evalsha", "evalsha"}},
		{"add refused at the cap", func() error { return s.Add(ctx, "s:1", "res://c", long) }, []string{"evalsha"}},
		{"refresh", func() error { return s.Refresh(ctx, "s:1", long) }, []string{"evalsha", "evalsha", "pipeline", "evalsha"}},
		{"refresh of nothing", func() error { return s.Refresh(ctx, "s:none", long) }, []string{"evalsha"}},
		{"subscribers", func() error { _, err := s.Subscribers(ctx, "res://a"); return err }, []string{"evalsha"}},
		{"of", func() error { _, err := s.Of(ctx, "s:1"); return err }, []string{"evalsha", "pipeline"}},
		{"uris", func() error { _, err := s.URIs(ctx); return err }, []string{"evalsha", "pipeline"}},
		{"set state", func() error { return s.SetState(ctx, "res://a", []byte("x"), long) }, []string{"set"}},
		{"state", func() error { _, err := s.State(ctx, "res://a"); return err }, []string{"get"}},
		{"remove", func() error { return s.Remove(ctx, "s:1", "res://a") }, []string{"zrem", "zrem"}},
		{"add a third", func() error { return s.Add(ctx, "s:1", "res://c", long) }, []string{"evalsha", "evalsha", "evalsha", "evalsha"}},
		{"remove all", func() error { return s.RemoveAll(ctx, "s:1") }, []string{"evalsha", "pipeline"}},
		{"remove all of nothing", func() error { return s.RemoveAll(ctx, "s:1") }, []string{"evalsha"}},
	}
	for _, st := range steps {
		log.take(-1)
		err := st.do()
		if st.what == "add refused at the cap" {
			require.ErrorIs(t, err, ErrTooMany)
		} else {
			require.NoError(t, err, st.what)
		}
		require.Equal(t, st.want, log.take(-1), st.what)
	}
}

// TestRedisInterruptedWritesKeepTheIndexes cuts Add, Refresh, Remove and
// RemoveAll short after each of their round trips and checks what the
// package comment promises: no live subscription is missing from URIs,
// and after a cut Add or Refresh none is missing from Of either.
func TestRedisInterruptedWritesKeepTheIndexes(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	healthy := srv.Client(t)
	crashing := srv.Client(t)
	log := &commandLog{failAfter: -1}
	crashing.AddHook(log)
	exercise(t, NewRedis(healthy, redistest.Prefix(t), Limits{})) // loads every script

	subs := []string{"s:1", "s:2"}
	check := func(t *testing.T, s Store, ofToo bool) {
		t.Helper()
		all, err := s.URIs(ctx)
		require.NoError(t, err)
		for _, u := range []string{"res://a", "res://b", "res://c"} {
			holders, err := s.Subscribers(ctx, u)
			require.NoError(t, err)
			if len(holders) > 0 {
				require.Contains(t, all, u, "a live subscription is missing from URIs")
			}
			for _, sub := range holders {
				of, err := s.Of(ctx, sub)
				require.NoError(t, err)
				if ofToo {
					require.Contains(t, of, u, "a live subscription is missing from Of")
				}
			}
		}
		for _, u := range all {
			holders, err := s.Subscribers(ctx, u)
			require.NoError(t, err)
			require.NotEmpty(t, holders, "URIs lists %q, which has no subscriber", u)
		}
		for _, sub := range subs {
			of, err := s.Of(ctx, sub)
			require.NoError(t, err)
			for _, u := range of {
				holders, err := s.Subscribers(ctx, u)
				require.NoError(t, err)
				require.Contains(t, holders, sub, "Of lists a subscription Subscribers lacks")
			}
		}
	}

	for _, op := range []struct {
		name  string
		steps int
		do    func(s Store) error
		ofToo bool
	}{
		{"add", 4, func(s Store) error { return s.Add(ctx, "s:1", "res://c", long) }, true},
		{"refresh", 4, func(s Store) error { return s.Refresh(ctx, "s:1", long) }, true},
		{"remove", 2, func(s Store) error { return s.Remove(ctx, "s:1", "res://a") }, false},
		{"remove all", 2, func(s Store) error { return s.RemoveAll(ctx, "s:1") }, false},
	} {
		for cut := range op.steps {
			p := redistest.Prefix(t)
			good := NewRedis(healthy, p, Limits{})
			require.NoError(t, good.Add(ctx, "s:1", "res://a", long))
			require.NoError(t, good.Add(ctx, "s:1", "res://b", long))
			require.NoError(t, good.Add(ctx, "s:2", "res://b", long))
			log.take(cut)
			err := op.do(NewRedis(crashing, p, Limits{}))
			log.take(-1)
			require.ErrorIs(t, err, ErrUnavailable, "%s cut after %d", op.name, cut)
			check(t, good, op.ofToo)
			// Done again, whole, it leaves the views agreeing (but a
			// RemoveAll cut short has lost the list of what to remove:
			// the rest lapses).
			require.NoError(t, op.do(good), "%s retried", op.name)
			check(t, good, op.name != "remove all")
		}
	}
}
