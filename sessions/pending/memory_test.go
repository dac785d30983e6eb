package pending

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// The server's sweeper loop finds Memory by this method.
var _ sessions.Sweeper = (*Memory)(nil)

func TestMemorySweepDropsOnlyExpiredEntries(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	in := func(ttl time.Duration) time.Time { return time.Now().Add(ttl) }
	require.NoError(t, m.Add(ctx, Record{Session: "s1", ID: "1", Replica: "r", Deadline: in(short)}, 0))
	require.NoError(t, m.Add(ctx, Record{Session: "s1", ID: "2", Replica: "r", Deadline: in(long)}, 0))
	require.NoError(t, m.Add(ctx, Record{Session: "s2", ID: "1", Replica: "r", Deadline: in(short)}, 0))
	_, err := m.Consume(ctx, "lapses", short)
	require.NoError(t, err)
	_, err = m.Consume(ctx, "stays", long)
	require.NoError(t, err)
	_, err = m.SharedKey(ctx, "k", []byte("secret"))
	require.NoError(t, err)
	require.Zero(t, m.Sweep(), "nothing has expired yet")

	eventually(t, func() bool {
		_, err := m.Get(ctx, "s2", "1")
		return err != nil
	}, "the short entries lapse")
	eventually(t, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return !time.Now().Before(m.marks["lapses"])
	}, "the short mark lapses")
	require.Equal(t, 3, m.Sweep(), "two records and a mark")
	require.Zero(t, m.Sweep())

	m.mu.Lock()
	require.Len(t, m.sessions, 1, "the emptied session went")
	require.Len(t, m.sessions["s1"], 1)
	require.Len(t, m.marks, 1)
	require.Len(t, m.keys, 1, "shared keys never expire")
	m.mu.Unlock()
	got, err := m.Get(ctx, "s1", "2")
	require.NoError(t, err)
	require.Equal(t, "r", got.Replica)
	first, err := m.Consume(ctx, "stays", long)
	require.NoError(t, err)
	require.False(t, first)
}
