package subscriptions

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMemorySweepDropsOnlyExpiredEntries(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(Limits{})
	require.NoError(t, m.Add(ctx, "s:1", "res://a", short))
	require.NoError(t, m.Add(ctx, "s:1", "res://b", long))
	require.NoError(t, m.Add(ctx, "s:2", "res://a", short))
	require.NoError(t, m.SetState(ctx, "res://a", []byte("x"), short))
	require.NoError(t, m.SetState(ctx, "res://b", []byte("y"), long))
	require.Zero(t, m.Sweep(), "nothing has expired yet")

	eventually(t, func() bool {
		got, err := m.Subscribers(ctx, "res://a")
		return err == nil && len(got) == 0
	}, "the short entries lapse")
	require.Equal(t, 3, m.Sweep(), "two subscriptions and a state")
	require.Zero(t, m.Sweep())

	m.mu.Lock()
	require.Equal(t, map[string]int{"s:1": 1}, sizes(m.bySub))
	require.Equal(t, map[string]int{"res://b": 1}, sizes(m.byURI))
	require.Len(t, m.states, 1)
	m.mu.Unlock()
	got, err := m.Of(ctx, "s:1")
	require.NoError(t, err)
	require.Equal(t, []string{"res://b"}, got)
	st, err := m.State(ctx, "res://b")
	require.NoError(t, err)
	require.Equal(t, []byte("y"), st)
}

func sizes[V any](m map[string]map[string]V) map[string]int {
	out := map[string]int{}
	for k, inner := range m {
		out[k] = len(inner)
	}
	return out
}
