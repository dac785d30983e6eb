package pubsub

import (
	"context"
	"errors"
	"sync"
)

// ErrClosed is returned by operations on a closed Bus.
var ErrClosed = errors.New("pubsub: closed")

// Bus publishes messages to topics and delivers them to current subscribers.
type Bus interface {
	// Publish sends payload to every current subscriber of topic.
	Publish(ctx context.Context, topic string, payload []byte) error
	// Subscribe starts delivering topic's messages to the returned
	// Subscription until it is closed or ctx ends. It returns once messages
	// published from then on will be delivered.
	Subscribe(ctx context.Context, topic string) (*Subscription, error)
}

// Subscription receives one topic's messages. A slow reader loses messages
// rather than block publishers: its channel holds a few, the rest are dropped.
type Subscription struct {
	c     chan []byte
	once  sync.Once
	close func()
}

// C delivers messages; it is closed when the subscription ends.
func (s *Subscription) C() <-chan []byte { return s.c }

// Close ends the subscription. It is safe to call more than once.
func (s *Subscription) Close() { s.once.Do(s.close) }

// subscriptionBuffer is deep enough for bursts of wake-up hints, which carry
// no data a reader cannot recover from the stores.
const subscriptionBuffer = 16

// fanout delivers messages to this process's subscribers. Memory is a
// fanout; Redis puts one in front of its Redis subscription.
type fanout struct {
	mu     sync.Mutex
	topics map[string]map[*Subscription]struct{}
	// first and last are told when a topic gains its first or loses its
	// last local subscriber (Redis subscribes and unsubscribes then).
	first, last func(topic string)
}

func newFanout() *fanout { return &fanout{topics: map[string]map[*Subscription]struct{}{}} }

func (f *fanout) deliver(topic string, payload []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.topics[topic] {
		select {
		case s.c <- payload:
		default: // at most once: a full subscriber misses this hint
		}
	}
}

func (f *fanout) count(topic string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.topics[topic])
}

func (f *fanout) subscribe(ctx context.Context, topic string) *Subscription {
	s := &Subscription{c: make(chan []byte, subscriptionBuffer)}
	s.close = func() {
		f.mu.Lock()
		delete(f.topics[topic], s)
		gone := len(f.topics[topic]) == 0
		if gone {
			delete(f.topics, topic)
		}
		close(s.c)
		f.mu.Unlock()
		if gone && f.last != nil {
			f.last(topic)
		}
	}
	f.mu.Lock()
	isFirst := f.topics[topic] == nil
	if isFirst {
		f.topics[topic] = map[*Subscription]struct{}{}
	}
	f.topics[topic][s] = struct{}{}
	f.mu.Unlock()
	if isFirst && f.first != nil {
		f.first(topic)
	}
	if ctx.Done() != nil {
		// The context's end closes the subscription; an explicit Close
		// unregisters that, so no waiter outlives the subscription.
		inner := s.close
		stop := context.AfterFunc(ctx, func() { s.once.Do(inner) })
		s.close = func() { stop(); inner() }
	}
	return s
}

// Memory is the in-process Bus for a single replica.
type Memory struct{ f *fanout }

var _ Bus = (*Memory)(nil)

// NewMemory returns an empty in-process bus.
func NewMemory() *Memory { return &Memory{f: newFanout()} }

func (m *Memory) Publish(_ context.Context, topic string, payload []byte) error {
	m.f.deliver(topic, payload)
	return nil
}

func (m *Memory) Subscribe(ctx context.Context, topic string) (*Subscription, error) {
	return m.f.subscribe(ctx, topic), nil
}

// Runner is a bus with a loop of its own (a Redis connection that
// subscribes and reconnects); the gateway's Run runs it until its context
// ends. Buses without one (Memory) do not implement it.
type Runner interface {
	Run(ctx context.Context) error
}
