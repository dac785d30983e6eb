package sessions

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func redisContract(t *testing.T, c redis.UniversalClient) {
	contract(t, func(t *testing.T, l Limits) Store {
		p := redistest.Prefix(t)
		redistest.Cleanup(t, c, p)
		return NewRedis(c, p, l)
	})
}

func TestRedisContract(t *testing.T) { redisContract(t, redistest.Standalone(t).Client(t)) }

// On a Cluster the scripts only work because a session's keys share a slot.
func TestRedisClusterContract(t *testing.T) { redisContract(t, redistest.Cluster(t).Client(t)) }

func TestRedisKeysShareTheSessionSlot(t *testing.T) {
	r := NewRedis(nil, "p:", Limits{})
	require.Equal(t, hashTag(r.recKey("abc")), hashTag(r.logKey("abc")))
	require.Equal(t, "abc", hashTag(r.recKey("abc")))
}

func hashTag(key string) string {
	i := 0
	for i < len(key) && key[i] != '{' {
		i++
	}
	j := i + 1
	for j < len(key) && key[j] != '}' {
		j++
	}
	return key[i+1 : j]
}

func TestRedisUnavailableAndBack(t *testing.T) {
	srv := redistest.Standalone(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond, DialerRetries: 1})
	t.Cleanup(func() { c.Close() }) // after the key cleanup below (cleanups run last-in first-out)
	p := redistest.Prefix(t)
	redistest.Cleanup(t, c, p)
	s := NewRedis(c, p, Limits{})
	ctx := context.Background()
	require.NoError(t, s.Create(ctx, &Session{ID: "a"}))

	srv.Stop()
	_, err := s.Get(ctx, "a")
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorIs(t, s.Ping(ctx), ErrUnavailable)
	require.ErrorIs(t, s.Create(ctx, &Session{ID: "b"}), ErrUnavailable)
	_, err = s.Append(ctx, "a", []byte("x"))
	require.ErrorIs(t, err, ErrUnavailable)
	require.NotErrorIs(t, err, ErrNotFound, "an outage must never look like an ended session")

	srv.Start() // same port, empty data
	require.Eventually(t, func() bool { return s.Ping(ctx) == nil }, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, s.Create(ctx, &Session{ID: "b"}))
}

// A record stored before a field existed still reads, with the field zero.
func TestRedisReadsRecordsWithoutNewerFields(t *testing.T) {
	ctx := context.Background()
	c := redistest.Standalone(t).Client(t)
	p := redistest.Prefix(t)
	r := NewRedis(c, p, Limits{})
	require.NoError(t, c.HSet(ctx, r.recKey("old"), "d", `{"id":"old","v":"2025-06-18","ca":"2025-01-01T00:00:00Z","ls":"0001-01-01T00:00:00Z"}`, "ls", time.Now().UnixMilli()).Err())
	got, err := r.Get(ctx, "old")
	require.NoError(t, err)
	require.Equal(t, "2025-06-18", got.ProtocolVersion)
	require.Zero(t, got.Push.Owner)
	upd, err := r.Update(ctx, "old", func(x *Session) error { x.Push.Owner = "t"; return nil })
	require.NoError(t, err)
	require.Equal(t, "t", upd.Push.Owner)
}
