package pubsub

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

var prefixSeq atomic.Int64

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

// testPrefix names channels no other test or process uses.
func testPrefix(t *testing.T) string {
	return fmt.Sprintf("mcpgw-test:%d:%d:", os.Getpid(), prefixSeq.Add(1))
}
