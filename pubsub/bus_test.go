package pubsub

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func contract(t *testing.T, newBus func(t *testing.T) Bus) {
	ctx := context.Background()
	t.Run("delivers to current subscribers of the topic only", func(t *testing.T) {
		b := newBus(t)
		a1, err := b.Subscribe(ctx, "a")
		require.NoError(t, err)
		defer a1.Close()
		a2, err := b.Subscribe(ctx, "a")
		require.NoError(t, err)
		defer a2.Close()
		other, err := b.Subscribe(ctx, "b")
		require.NoError(t, err)
		defer other.Close()

		require.NoError(t, b.Publish(ctx, "a", []byte("hello")))
		require.Equal(t, "hello", string(<-a1.C()))
		require.Equal(t, "hello", string(<-a2.C()))
		select {
		case m := <-other.C():
			t.Fatalf("topic b got %q", m)
		default:
		}
	})
	t.Run("close ends delivery and is idempotent", func(t *testing.T) {
		b := newBus(t)
		s, err := b.Subscribe(ctx, "t")
		require.NoError(t, err)
		s.Close()
		s.Close()
		_, open := <-s.C()
		require.False(t, open)
		require.NoError(t, b.Publish(ctx, "t", []byte("x")))
	})
	t.Run("context end closes the subscription", func(t *testing.T) {
		b := newBus(t)
		cctx, cancel := context.WithCancel(ctx)
		s, err := b.Subscribe(cctx, "t")
		require.NoError(t, err)
		cancel()
		for range s.C() {
		}
	})
}

func TestMemoryContract(t *testing.T) {
	contract(t, func(*testing.T) Bus { return NewMemory() })
}

func TestMemorySlowSubscriberDoesNotBlock(t *testing.T) {
	b := NewMemory()
	s, err := b.Subscribe(context.Background(), "t")
	require.NoError(t, err)
	defer s.Close()
	for range subscriptionBuffer * 4 {
		require.NoError(t, b.Publish(context.Background(), "t", []byte("x")))
	}
	require.Len(t, s.C(), subscriptionBuffer)
}

func TestClosedSubscriptionsLeaveNoGoroutines(t *testing.T) {
	b := NewMemory()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := runtime.NumGoroutine()
	for range 200 {
		s, err := b.Subscribe(ctx, "t")
		require.NoError(t, err)
		s.Close()
	}
	require.Less(t, runtime.NumGoroutine()-before, 20, "closing must release the context watcher")
}
