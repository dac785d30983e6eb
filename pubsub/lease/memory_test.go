package lease

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMemorySweepDropsExpired(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	const ttl = 50 * time.Millisecond
	for _, n := range []string{"a", "b", "c"} {
		ok, err := m.Acquire(ctx, n, "r1", ttl)
		require.NoError(t, err)
		require.True(t, ok)
	}
	ok, err := m.Acquire(ctx, "kept", "r1", long)
	require.NoError(t, err)
	require.True(t, ok)
	require.Zero(t, m.Sweep(), "nothing has expired yet")
	require.Equal(t, 4, m.size())

	wait(ttl + 10*time.Millisecond)
	require.Equal(t, 3, m.Sweep())
	require.Equal(t, 1, m.size())
	require.Zero(t, m.Sweep())
	h, err := m.Holder(ctx, "kept")
	require.NoError(t, err)
	require.Equal(t, "r1", h)
}

func TestMemoryDropsExpiredLazily(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	const ttl = 20 * time.Millisecond

	// The lease a call finds expired.
	ok, err := m.Acquire(ctx, "a", "r1", ttl)
	require.NoError(t, err)
	require.True(t, ok)
	wait(ttl + 10*time.Millisecond)
	require.Equal(t, 1, m.size())
	h, err := m.Holder(ctx, "a")
	require.NoError(t, err)
	require.Empty(t, h)
	require.Zero(t, m.size(), "Holder dropped the lapsed lease")

	// Names nobody asks for again: Acquire sweeps now and then on its own.
	const names = 1000
	for i := range names {
		ok, err := m.Acquire(ctx, "gone-"+strconv.Itoa(i), "r1", ttl)
		require.NoError(t, err)
		require.True(t, ok)
	}
	wait(ttl + 10*time.Millisecond)
	for i := range names {
		ok, err := m.Acquire(ctx, "live-"+strconv.Itoa(i), "r1", long)
		require.NoError(t, err)
		require.True(t, ok)
	}
	require.Less(t, m.size(), 2*names, "no sweep dropped the lapsed leases")
	m.Sweep()
	require.Equal(t, names, m.size())
}
