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
	// Subscription until it is closed or ctx ends.
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

// Memory is the in-process Bus for a single replica.
type Memory struct {
	mu     sync.Mutex
	topics map[string]map[*Subscription]struct{}
}

var _ Bus = (*Memory)(nil)

// NewMemory returns an empty in-process bus.
func NewMemory() *Memory { return &Memory{topics: map[string]map[*Subscription]struct{}{}} }

func (m *Memory) Publish(_ context.Context, topic string, payload []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for s := range m.topics[topic] {
		select {
		case s.c <- payload:
		default: // at most once: a full subscriber misses this hint
		}
	}
	return nil
}

func (m *Memory) Subscribe(ctx context.Context, topic string) (*Subscription, error) {
	s := &Subscription{c: make(chan []byte, subscriptionBuffer)}
	s.close = func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.topics[topic], s)
		if len(m.topics[topic]) == 0 {
			delete(m.topics, topic)
		}
		close(s.c)
	}
	m.mu.Lock()
	if m.topics[topic] == nil {
		m.topics[topic] = map[*Subscription]struct{}{}
	}
	m.topics[topic][s] = struct{}{}
	m.mu.Unlock()
	if ctx.Done() != nil {
		go func() {
			<-ctx.Done()
			s.Close()
		}()
	}
	return s, nil
}
