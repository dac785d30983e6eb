package pubsub

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// runBus runs a Redis bus for the rest of the test.
func runBus(t *testing.T, c redis.UniversalClient, prefix string) *Redis {
	b := NewRedis(c, prefix)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = b.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return b
}

func redisContract(t *testing.T, c redis.UniversalClient) {
	contract(t, func(t *testing.T) Bus { return runBus(t, c, redistest.Prefix(t)) })
}

func TestRedisContract(t *testing.T) { redisContract(t, redistest.Standalone(t).Client(t)) }

func TestRedisClusterContract(t *testing.T) { redisContract(t, redistest.Cluster(t).Client(t)) }

func TestRedisCrossReplica(t *testing.T) {
	for name, c := range map[string]redis.UniversalClient{
		"standalone": redistest.Standalone(t).Client(t),
		"cluster":    redistest.Cluster(t).Client(t),
	} {
		t.Run(name, func(t *testing.T) {
			prefix := redistest.Prefix(t)
			a, b := runBus(t, c, prefix), runBus(t, c, prefix)
			ctx := context.Background()
			sub, err := b.Subscribe(ctx, "session:x")
			require.NoError(t, err)
			defer sub.Close()
			// Subscribe returned: Redis confirmed it, so one publish suffices.
			require.NoError(t, a.Publish(ctx, "session:x", []byte("wake")))
			select {
			case m := <-sub.C():
				require.Equal(t, "wake", string(m))
			case <-time.After(5 * time.Second):
				t.Fatal("message did not cross replicas")
			}
		})
	}
}
