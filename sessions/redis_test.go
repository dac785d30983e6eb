package sessions

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

var prefixSeq atomic.Int64

// sharedRedis connects to the Redis named by MCPGW_TEST_REDIS_URL (or the
// machine's 127.0.0.1:6379), skipping when none answers.
func sharedRedis(t *testing.T) redis.UniversalClient {
	t.Helper()
	url := os.Getenv("MCPGW_TEST_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	opts, err := redis.ParseURL(url)
	require.NoError(t, err)
	c := redis.NewClient(opts)
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Skipf("no Redis at %s (set MCPGW_TEST_REDIS_URL): %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testPrefix is unique per test; its keys are deleted when the test ends.
func testPrefix(t *testing.T, c redis.UniversalClient) string {
	p := fmt.Sprintf("mcpgw-test:%d:%d:", os.Getpid(), prefixSeq.Add(1))
	t.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, p+"*", 100).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return p
}

func TestRedisContract(t *testing.T) {
	c := sharedRedis(t)
	contract(t, func(t *testing.T, l Limits) Store { return NewRedis(c, testPrefix(t, c), l) })
}

func TestRedisKeysShareTheSessionSlot(t *testing.T) {
	r := NewRedis(nil, "p:", Limits{})
	require.Equal(t, redisHashTag(r.recKey("abc")), redisHashTag(r.logKey("abc")))
}

func redisHashTag(key string) string {
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

func TestRedisUnavailable(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	s := NewRedis(c, "x:", Limits{})
	ctx := context.Background()
	_, err := s.Get(ctx, "a")
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorIs(t, s.Ping(ctx), ErrUnavailable)
	require.ErrorIs(t, s.Create(ctx, &Session{ID: "a"}), ErrUnavailable)
	_, err = s.Append(ctx, "a", []byte("x"))
	require.ErrorIs(t, err, ErrUnavailable)
}
