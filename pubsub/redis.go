package pubsub

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis carries messages between replicas over Redis pub/sub. One Redis
// subscription per replica serves all local subscribers of a topic; Redis
// SUBSCRIBE and UNSUBSCRIBE follow the first and last local subscriber.
// Messages published while this replica's connection is down are lost:
// they are hints, and the stores hold the truth.
type Redis struct {
	c      redis.UniversalClient
	prefix string
	f      *fanout

	mu sync.Mutex
	ps *redis.PubSub
}

var _ Bus = (*Redis)(nil)

// NewRedis returns a bus whose Redis channels are named prefix+topic. Call
// Run to deliver messages.
func NewRedis(c redis.UniversalClient, prefix string) *Redis {
	r := &Redis{c: c, prefix: prefix, f: newFanout()}
	// The control channel keeps the connection subscribed (and go-redis
	// resubscribing after reconnects) even with no local subscribers.
	r.ps = c.Subscribe(context.Background())
	r.f.first = r.sync
	r.f.last = r.sync
	return r
}

// sync makes the Redis subscription of topic match whether it has local
// subscribers now. Serialized and state-based, so a subscribe racing an
// unsubscribe of the same topic always ends in the right state.
func (r *Redis) sync(topic string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// A failure is not fatal: go-redis resubscribes every channel it was
	// asked for when the connection comes back.
	if r.f.count(topic) > 0 {
		_ = r.ps.Subscribe(ctx, r.prefix+topic)
	} else {
		_ = r.ps.Unsubscribe(ctx, r.prefix+topic)
	}
}

func (r *Redis) redisSubscribe(topic string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = r.ps.Subscribe(ctx, r.prefix+topic)
}

func (r *Redis) Publish(ctx context.Context, topic string, payload []byte) error {
	if err := r.c.Publish(ctx, r.prefix+topic, payload).Err(); err != nil {
		return fmt.Errorf("pubsub: publish %s: %w", topic, err)
	}
	return nil
}

func (r *Redis) Subscribe(ctx context.Context, topic string) (*Subscription, error) {
	return r.f.subscribe(ctx, topic), nil
}

// Run delivers messages from Redis to local subscribers until ctx ends.
func (r *Redis) Run(ctx context.Context) error {
	r.redisSubscribe("_control")
	ch := r.ps.Channel(redis.WithChannelHealthCheckInterval(5 * time.Second))
	defer r.ps.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				return nil
			}
			if len(m.Channel) >= len(r.prefix) {
				r.f.deliver(m.Channel[len(r.prefix):], []byte(m.Payload))
			}
		}
	}
}
