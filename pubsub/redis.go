package pubsub

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

	// confirmMu guards confirms: channels waiting for Redis to confirm a
	// SUBSCRIBE, closed by Run when the confirmation arrives.
	confirmMu sync.Mutex
	confirms  map[string][]chan struct{}
}

var (
	_ Bus    = (*Redis)(nil)
	_ Runner = (*Redis)(nil)
)

// NewRedis returns a bus whose Redis channels are named prefix+topic. Call
// Run to deliver messages.
func NewRedis(c redis.UniversalClient, prefix string) *Redis {
	r := &Redis{c: c, prefix: prefix, f: newFanout(), confirms: map[string][]chan struct{}{}}
	// The control channel keeps the connection subscribed (and go-redis
	// resubscribing after reconnects) even with no local subscribers.
	r.ps = c.Subscribe(context.Background())

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

// Subscribe returns once Redis has confirmed the subscription, so that no
// message published after it returns is missed while Redis is reachable.
// It fails when Redis does not confirm within ctx or 5 seconds; Run must be
// running to receive the confirmation.
func (r *Redis) Subscribe(ctx context.Context, topic string) (*Subscription, error) {
	confirmed := make(chan struct{})
	r.confirmMu.Lock()
	r.confirms[topic] = append(r.confirms[topic], confirmed)
	r.confirmMu.Unlock()
	sub := r.f.subscribe(ctx, topic)
	// Ask again even when the topic already had local subscribers: Redis
	// answers a repeated SUBSCRIBE with a fresh confirmation and nothing else.
	r.sync(topic)
	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	select {
	case <-confirmed:
		return sub, nil
	case <-wait.Done():
		r.confirmMu.Lock()
		r.confirms[topic] = slices.DeleteFunc(r.confirms[topic], func(c chan struct{}) bool { return c == confirmed })
		r.confirmMu.Unlock()
		sub.Close()
		return nil, fmt.Errorf("pubsub: subscription to %s not confirmed: %w", topic, wait.Err())
	}
}

// confirm releases the Subscribe calls waiting for topic.
func (r *Redis) confirm(topic string) {
	r.confirmMu.Lock()
	waiting := r.confirms[topic]
	delete(r.confirms, topic)
	r.confirmMu.Unlock()
	for _, c := range waiting {
		close(c)
	}
}

// Run delivers messages from Redis to local subscribers until ctx ends.
func (r *Redis) Run(ctx context.Context) error {
	r.redisSubscribe("_control")
	ch := r.ps.ChannelWithSubscriptions(redis.WithChannelHealthCheckInterval(5 * time.Second))
	defer r.ps.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				return nil
			}
			switch m := m.(type) {
			case *redis.Message:
				if topic, ok := strings.CutPrefix(m.Channel, r.prefix); ok {
					r.f.deliver(topic, []byte(m.Payload))
				}
			case *redis.Subscription:
				if topic, ok := strings.CutPrefix(m.Channel, r.prefix); ok && m.Kind == "subscribe" {
					r.confirm(topic)
				}
			}
		}
	}
}
