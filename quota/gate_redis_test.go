package quota

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

// fullAdmission has a part of every kind.
func fullAdmission(tag, member string) Admission {
	return Admission{
		Tag: tag,
		Buckets: []Bucket{
			{Key: "tool", Limit: Limit{Rate: 10, Burst: 5}, Scope: "per_tool"},
			{Key: "client", Limit: Limit{Rate: slow, Burst: 100}, Scope: "per_client"},
		},
		Quotas: []Quota{{Key: "daily", Name: "daily", Limit: 1000, Window: 24 * time.Hour}},
		Slot:   &Slot{Key: "conc", Member: member, Limit: 4, TTL: 30 * time.Second},
	}
}

func TestRedisStoresUnavailable(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	// No go-redis retries, so that each failure is one refused dial; and
	// context deadlines bound each command, as in production.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialerRetries: 1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	p := redistest.Prefix(t)
	g := NewRedisGate(c, p+"g:")
	sc := NewRedisSessionCounter(c, p+"s:")
	adm := fullAdmission("client", "m1")

	v, err := g.Admit(ctx, adm)
	require.NoError(t, err)
	require.True(t, v.Allowed)
	ok, _, err := sc.Open(ctx, "client", "s1", 2, 10, time.Hour)
	require.NoError(t, err)
	require.True(t, ok)

	down := func(t *testing.T) {
		t.Helper()
		_, err := g.Admit(ctx, adm)
		require.ErrorIs(t, err, ErrUnavailable)
		require.ErrorContains(t, err, "quota: store unavailable: ")
		require.ErrorIs(t, g.Release(ctx, "client", *adm.Slot), ErrUnavailable)
		_, _, err = sc.Open(ctx, "client", "s2", 2, 10, time.Hour)
		require.ErrorIs(t, err, ErrUnavailable)
		require.ErrorIs(t, sc.Refresh(ctx, "client", "s1", time.Hour), ErrUnavailable)
		require.ErrorIs(t, sc.Close(ctx, "client", "s1"), ErrUnavailable)
		v, err := g.Admit(ctx, Admission{Tag: "client", Buckets: []Bucket{{Key: "free"}}})
		require.NoError(t, err, "nothing to check must not touch the store")
		require.True(t, v.Allowed)
	}

	t.Run("stopped", func(t *testing.T) {
		srv.Stop()
		down(t)
		// It recovers on its own when Redis returns (empty: data may be lost).
		srv.Start()
		require.Eventually(t, func() bool {
			v, err := g.Admit(ctx, adm)
			return err == nil && v.Allowed
		}, 10*time.Second, 10*time.Millisecond)
	})

	t.Run("stalled", func(t *testing.T) {
		srv.Pause()
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err := g.Admit(short, adm)
		require.ErrorIs(t, err, ErrUnavailable, "a deadline passed waiting for the store is an outage")
		_, _, err = sc.Open(short, "client", "s2", 2, 10, time.Hour)
		require.ErrorIs(t, err, ErrUnavailable)
		srv.Resume()
		require.Eventually(t, func() bool {
			v, err := g.Admit(ctx, adm)
			return err == nil && v.Allowed
		}, 10*time.Second, 10*time.Millisecond)
	})
}

func TestRedisGateErrorsThatAreNotOutages(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	g := NewRedisGate(c, redistest.Prefix(t))

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := g.Admit(canceled, fullAdmission("t", "m"))
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, ErrUnavailable, "the caller gave up; the store is fine")

	// A reply from a healthy server (here WRONGTYPE) is a fault, not an outage.
	require.NoError(t, c.LPush(ctx, g.tagged("t")+"quota:daily", "x").Err())
	_, err = g.Admit(ctx, fullAdmission("t", "m"))
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrUnavailable)
	require.ErrorContains(t, err, "WRONGTYPE")
}

// commandCounter counts the commands and pipelines a client sends.
type commandCounter struct {
	mu    sync.Mutex
	names []string
}

// DialHook, ProcessHook and ProcessPipelineHook implement redis.Hook.
func (h *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		h.names = append(h.names, cmd.Name())
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (h *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.mu.Lock()
		h.names = append(h.names, "pipeline")
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (h *commandCounter) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.names
	h.names = nil
	return n
}

func TestRedisGateKeysAndOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	p := redistest.Prefix(t)
	g := NewRedisGate(c, p)
	hook := &commandCounter{}
	c.AddHook(hook)

	adm := fullAdmission("tenant/1", "call-1")
	adm.Buckets = append(adm.Buckets, Bucket{Key: "unlimited", Scope: "none"})
	v, err := g.Admit(ctx, adm)
	require.NoError(t, err)
	require.Equal(t, Verdict{Allowed: true, Remaining: 3}, v, "the slot's 4 places, less this call")
	hook.take() // the first run may load the script: EVALSHA, then EVAL

	for i := range 3 {
		adm.Slot.Member = "call-" + strconv.Itoa(i+2)
		_, err := g.Admit(ctx, adm)
		require.NoError(t, err)
		require.Equal(t, []string{"evalsha"}, hook.take(), "one round trip per Admit")
	}
	v, err = g.Admit(ctx, adm)
	require.NoError(t, err)
	require.Equal(t, KindConcurrency, v.Kind)
	require.Equal(t, []string{"evalsha"}, hook.take(), "a denial too")

	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	slices.Sort(keys)
	tag := p + "{tenant/1}:"
	require.Equal(t, []string{tag + "quota:daily", tag + "rate:client", tag + "rate:tool", tag + "slot:conc"}, keys,
		"prefix, hash tag and part; unlimited buckets keep nothing")

	pttl := func(key string) time.Duration {
		d, err := c.PTTL(ctx, key).Result()
		require.NoError(t, err)
		return d
	}
	// Four tokens of 100ms taken: the bucket is full again in 400ms.
	require.InDelta(t, 400*time.Millisecond, pttl(tag+"rate:tool"), float64(50*time.Millisecond))
	require.InDelta(t, 30*time.Second, pttl(tag+"slot:conc"), float64(time.Second), "the last member's TTL")
	require.InDelta(t, untilWindowEnd(24*time.Hour)+quotaMargin, pttl(tag+"quota:daily"), float64(time.Second),
		"a count lives until its window ends, and a moment more")
	count, err := c.HGetAll(ctx, tag+"quota:daily").Result()
	require.NoError(t, err)
	day, _ := quotaWindow(time.Now().UnixMicro(), (24 * time.Hour).Microseconds())
	require.Equal(t, map[string]string{"w": strconv.FormatInt(day, 10), "n": "4"}, count, "the window (days since the epoch) and its count")
	members, err := c.ZRange(ctx, tag+"slot:conc", 0, -1).Result()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"call-1", "call-2", "call-3", "call-4"}, members)

	hook.take()
	require.NoError(t, g.Release(ctx, "tenant/1", Slot{Key: "conc", Member: "call-2"}))
	require.Equal(t, []string{"zrem"}, hook.take())
	members, err = c.ZRange(ctx, tag+"slot:conc", 0, -1).Result()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"call-1", "call-3", "call-4"}, members)
}

func TestRedisGateEscapesTags(t *testing.T) {
	g := NewRedisGate(nil, "p:")
	for tag, want := range map[string]string{
		"":          "p:{%}:",
		"%":         "p:{%25}:",
		"}":         "p:{%7D}:",
		"a}:rate:b": "p:{a%7D:rate:b}:",
		"{a}":       "p:{{a%7D}:",
		"tenant/1":  "p:{tenant/1}:",
	} {
		require.Equal(t, want, g.tagged(tag), "%q", tag)
	}
}

func TestRedisGateRunsAfterScriptFlush(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t) // our own server: SCRIPT FLUSH touches no one else
	g := NewRedisGate(c, redistest.Prefix(t))

	_, err := g.Admit(ctx, fullAdmission("t", "m1"))
	require.NoError(t, err)
	require.NoError(t, c.ScriptFlush(ctx).Err())
	v, err := g.Admit(ctx, fullAdmission("t", "m2"))
	require.NoError(t, err, "NOSCRIPT falls back to EVAL")
	require.Equal(t, Verdict{Allowed: true, Remaining: 2}, v)
	cached, err := c.ScriptExists(ctx, admitScript.Hash()).Result()
	require.NoError(t, err)
	require.Equal(t, []bool{true}, cached, "EVAL cached the script again")
}

func TestRedisSessionCounterKeys(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	p := redistest.Prefix(t)
	sc := NewRedisSessionCounter(c, p)

	// Expired sessions leave the sets on the next Open.
	const ttl = 100 * time.Millisecond
	for i := range 50 {
		ok, _, err := sc.Open(ctx, "c"+strconv.Itoa(i%5), "s"+strconv.Itoa(i), 0, 0, ttl)
		require.NoError(t, err)
		require.True(t, ok)
	}
	wait(ttl + 10*time.Millisecond)
	ok, _, err := sc.Open(ctx, "c0", "live", 0, 0, time.Hour)
	require.NoError(t, err)
	require.True(t, ok)
	total, err := c.ZRange(ctx, p+"sessions", 0, -1).Result()
	require.NoError(t, err)
	require.Equal(t, []string{"2:c0live"}, total, "the deployment's set: expired members removed")
	mine, err := c.ZRange(ctx, p+"{c0}:sessions", 0, -1).Result()
	require.NoError(t, err)
	require.Equal(t, []string{"live"}, mine)
	left, err := c.PTTL(ctx, p+"sessions").Result()
	require.NoError(t, err)
	require.InDelta(t, time.Hour, left, float64(time.Second), "a set expires with its last member")

	// The other clients' sets expired with their members.
	require.Eventually(t, func() bool {
		keys, err := c.Keys(ctx, "*").Result()
		slices.Sort(keys)
		return err == nil && slices.Equal(keys, []string{p + "sessions", p + "{c0}:sessions"})
	}, 5*time.Second, 10*time.Millisecond)
}
