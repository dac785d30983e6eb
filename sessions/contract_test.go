package sessions

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contract runs the behaviour every Store implementation must share.
// newStore returns an empty store with the given limits.
func contract(t *testing.T, newStore func(t *testing.T, l Limits) Store) {
	ctx := context.Background()
	newSession := func(id string) *Session {
		return &Session{ID: id, ProtocolVersion: "2025-06-18", CreatedAt: time.Now(), LastSeen: time.Now()}
	}

	t.Run("create get update delete", func(t *testing.T) {
		s := newStore(t, Limits{})
		require.NoError(t, s.Create(ctx, newSession("a")))
		require.ErrorIs(t, s.Create(ctx, newSession("a")), ErrExists)
		got, err := s.Get(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, "2025-06-18", got.ProtocolVersion)

		upd, err := s.Update(ctx, "a", func(s *Session) error { s.LogLevel = "debug"; s.ID = "moved"; return nil })
		require.NoError(t, err)
		require.Equal(t, "debug", upd.LogLevel)
		require.Equal(t, "a", upd.ID)
		got, err = s.Get(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, "debug", got.LogLevel)

		_, err = s.Update(ctx, "a", func(*Session) error { return fmt.Errorf("refused") })
		require.EqualError(t, err, "refused")

		require.NoError(t, s.Delete(ctx, "a"))
		_, err = s.Get(ctx, "a")
		require.ErrorIs(t, err, ErrNotFound)
		require.ErrorIs(t, s.Delete(ctx, "a"), ErrNotFound)
		_, err = s.Append(ctx, "a", []byte("x"))
		require.ErrorIs(t, err, ErrNotFound)
	})

	t.Run("returned sessions are copies", func(t *testing.T) {
		s := newStore(t, Limits{})
		require.NoError(t, s.Create(ctx, newSession("c")))
		got, err := s.Get(ctx, "c")
		require.NoError(t, err)
		got.LogLevel = "error"
		again, err := s.Get(ctx, "c")
		require.NoError(t, err)
		require.Empty(t, again.LogLevel)
	})

	t.Run("surfaces and enabled toolsets round-trip, and returned ones are copies", func(t *testing.T) {
		s := newStore(t, Limits{})
		sess := newSession("sf")
		sess.Surface = &Surface{Toolsets: []string{"repos", "pulls"}, ReadOnly: true, ToolMode: "toolsets", SchemaRefs: "inline"}
		require.NoError(t, s.Create(ctx, sess))
		upd, err := s.Update(ctx, "sf", func(x *Session) error { x.Toolsets = append(x.Toolsets, "issues"); return nil })
		require.NoError(t, err)
		require.Equal(t, []string{"issues"}, upd.Toolsets)
		got, err := s.Get(ctx, "sf")
		require.NoError(t, err)
		require.Equal(t, sess.Surface, got.Surface)
		require.Equal(t, []string{"issues"}, got.Toolsets)
		got.Surface.Toolsets[0] = "changed"
		got.Toolsets[0] = "changed"
		again, err := s.Get(ctx, "sf")
		require.NoError(t, err)
		require.Equal(t, "repos", again.Surface.Toolsets[0])
		require.Equal(t, "issues", again.Toolsets[0])
	})

	t.Run("push streams round-trip, and returned ones are copies", func(t *testing.T) {
		s := newStore(t, Limits{})
		require.NoError(t, s.Create(ctx, newSession("g")))
		until := time.Now().Add(time.Minute).Truncate(time.Millisecond)
		_, err := s.Update(ctx, "g", func(x *Session) error {
			x.Push.Open = append(x.Push.Open, StreamLease{Token: "t1", Until: until}, StreamLease{Token: "t2", Until: until})
			x.Push.Owner, x.Push.Cursor = "t2", "c"
			return nil
		})
		require.NoError(t, err)
		got, err := s.Get(ctx, "g")
		require.NoError(t, err)
		require.Equal(t, "t2", got.Push.Owner)
		require.Equal(t, "c", got.Push.Cursor)
		require.Len(t, got.Push.Open, 2)
		require.True(t, until.Equal(got.Push.Open[1].Until))
		got.Push.Open[0].Token = "changed"
		_, err = s.Update(ctx, "g", func(x *Session) error {
			x.Push.Open[1].Token = "refused"
			return fmt.Errorf("refused")
		})
		require.Error(t, err)
		again, err := s.Get(ctx, "g")
		require.NoError(t, err)
		require.Equal(t, []string{"t1", "t2"}, []string{again.Push.Open[0].Token, again.Push.Open[1].Token})
	})

	t.Run("idle sessions expire and touched ones live", func(t *testing.T) {
		ttl := 300 * time.Millisecond
		s := newStore(t, Limits{TTL: ttl})
		require.NoError(t, s.Create(ctx, newSession("idle")))
		require.NoError(t, s.Create(ctx, newSession("busy")))
		deadline := time.Now().Add(3 * ttl)
		for time.Now().Before(deadline) {
			require.NoError(t, s.Touch(ctx, "busy", time.Now()))
			time.Sleep(ttl / 6)
		}
		_, err := s.Get(ctx, "idle")
		require.ErrorIs(t, err, ErrNotFound)
		_, err = s.Get(ctx, "busy")
		require.NoError(t, err)
	})

	t.Run("concurrent updates all land, beside touches and appends", func(t *testing.T) {
		s := newStore(t, Limits{})
		require.NoError(t, s.Create(ctx, newSession("c")))
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				_, err := s.Update(ctx, "c", func(x *Session) error { x.Principal += string(rune('a' + i)); return nil })
				assert.NoError(t, err)
			})
			wg.Go(func() {
				assert.NoError(t, s.Touch(ctx, "c", time.Now()))
				_, err := s.Append(ctx, "c", []byte("x"))
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		got, err := s.Get(ctx, "c")
		require.NoError(t, err)
		require.Len(t, got.Principal, 20, "no update was lost")
	})

	t.Run("event log is bounded in bytes", func(t *testing.T) {
		s := newStore(t, Limits{MaxEvents: 1000, MaxBytes: 1000})
		require.NoError(t, s.Create(ctx, newSession("b")))
		var ids []string
		for i := range 25 {
			id, err := s.Append(ctx, "b", fmt.Appendf(nil, "%03d%s", i, strings.Repeat("x", 97))) // 100 bytes each
			require.NoError(t, err)
			ids = append(ids, id)
		}
		all, err := s.ReadAfter(ctx, "b", "", 0)
		require.NoError(t, err)
		require.Len(t, all, 10, "the newest 1000 bytes stay")
		require.Equal(t, "015", string(all[0].Data[:3]))
		require.Equal(t, "024", string(all[9].Data[:3]))
		_, err = s.ReadAfter(ctx, "b", ids[5], 0)
		require.ErrorIs(t, err, ErrEventGone, "a cursor into what the bound dropped has lost events")
		// One event bigger than the bound still stays, alone.
		_, err = s.Append(ctx, "b", []byte(strings.Repeat("y", 5000)))
		require.NoError(t, err)
		all, err = s.ReadAfter(ctx, "b", "", 0)
		require.NoError(t, err)
		require.Len(t, all, 1)
		// And the count goes on from there.
		for range 3 {
			_, err = s.Append(ctx, "b", []byte(strings.Repeat("z", 100)))
			require.NoError(t, err)
		}
		all, err = s.ReadAfter(ctx, "b", "", 0)
		require.NoError(t, err)
		require.Len(t, all, 3)
	})

	t.Run("event log orders, resumes and bounds", func(t *testing.T) {
		s := newStore(t, Limits{MaxEvents: 3})
		require.NoError(t, s.Create(ctx, newSession("e")))
		last, err := s.LastEventID(ctx, "e")
		require.NoError(t, err)
		require.Empty(t, last)

		var ids []string
		for i := range 5 {
			id, err := s.Append(ctx, "e", fmt.Appendf(nil, "m%d", i))
			require.NoError(t, err)
			ids = append(ids, id)
		}
		require.Len(t, dedupe(ids), 5, "event ids must be unique")
		last, err = s.LastEventID(ctx, "e")
		require.NoError(t, err)
		require.Equal(t, ids[4], last)

		all, err := s.ReadAfter(ctx, "e", "", 0)
		require.NoError(t, err)
		require.Equal(t, []string{"m2", "m3", "m4"}, datas(all))

		after, err := s.ReadAfter(ctx, "e", ids[2], 0)
		require.NoError(t, err)
		require.Equal(t, []string{"m3", "m4"}, datas(after))
		require.Equal(t, ids[3], after[0].ID)

		one, err := s.ReadAfter(ctx, "e", ids[1], 1)
		require.NoError(t, err)
		require.Equal(t, []string{"m2"}, datas(one))

		none, err := s.ReadAfter(ctx, "e", ids[4], 0)
		require.NoError(t, err)
		require.Empty(t, none)

		_, err = s.ReadAfter(ctx, "e", ids[0], 0)
		require.ErrorIs(t, err, ErrEventGone, "a cursor older than the log must not leave a silent gap")
		_, err = s.ReadAfter(ctx, "e", "not-an-id", 0)
		require.ErrorIs(t, err, ErrBadEventID)
	})

	t.Run("logs are per session", func(t *testing.T) {
		s := newStore(t, Limits{})
		require.NoError(t, s.Create(ctx, newSession("x")))
		require.NoError(t, s.Create(ctx, newSession("y")))
		_, err := s.Append(ctx, "x", []byte("for-x"))
		require.NoError(t, err)
		evs, err := s.ReadAfter(ctx, "y", "", 0)
		require.NoError(t, err)
		require.Empty(t, evs)
		require.NoError(t, s.Delete(ctx, "x"))
		require.NoError(t, s.Create(ctx, newSession("x")))
		evs, err = s.ReadAfter(ctx, "x", "", 0)
		require.NoError(t, err)
		require.Empty(t, evs, "a deleted session's log must go with it")
	})
}

func datas(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Data)
	}
	return out
}

func dedupe(ids []string) map[string]bool {
	m := map[string]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func TestMemoryContract(t *testing.T) {
	contract(t, func(t *testing.T, l Limits) Store { return NewMemory(l) })
}

func TestMemoryEventAge(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(Limits{MaxEventAge: time.Minute})
	now := time.Now()
	m.now = func() time.Time { return now }
	require.NoError(t, m.Create(ctx, &Session{ID: "s"}))
	first, err := m.Append(ctx, "s", []byte("old"))
	require.NoError(t, err)
	now = now.Add(2 * time.Minute)
	_, err = m.Append(ctx, "s", []byte("new"))
	require.NoError(t, err)
	evs, err := m.ReadAfter(ctx, "s", "", 0)
	require.NoError(t, err)
	require.Equal(t, []string{"new"}, datas(evs))
	_, err = m.ReadAfter(ctx, "s", first, 0)
	require.NoError(t, err, "the event right after the cursor is still there")
	require.Equal(t, 0, m.Sweep())
	now = now.Add(time.Hour)
	require.Equal(t, 1, m.Sweep())
}
