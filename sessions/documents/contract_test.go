package documents

import (
	"context"
	"crypto/rand"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// contract runs the behaviour every Store must share. newStore returns an
// empty Store private to t.
func contract(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	const long = time.Hour

	publish := func(t *testing.T, s Store, id string, doc []byte) Version {
		t.Helper()
		v, changed, err := s.Publish(ctx, id, doc)
		require.NoError(t, err, "publish %s", id)
		require.True(t, changed, "publish %s", id)
		require.Equal(t, id, v.ID)
		return v
	}
	current := func(t *testing.T, s Store) Version {
		t.Helper()
		v, ok, err := s.Current(ctx)
		require.NoError(t, err)
		require.True(t, ok, "a version is current")
		return v
	}
	document := func(t *testing.T, s Store, id string, want []byte) {
		t.Helper()
		got, err := s.Document(ctx, id)
		require.NoError(t, err, "document %s", id)
		require.Equal(t, len(want), len(got), "document %s: length", id)
		require.True(t, string(want) == string(got), "document %s: bytes differ", id) // no diff of MiBs
	}
	gone := func(t *testing.T, s Store, id string) {
		t.Helper()
		_, err := s.Document(ctx, id)
		require.ErrorIs(t, err, ErrNotFound, "document %s", id)
	}
	replicas := func(t *testing.T, s Store) map[string]string {
		t.Helper()
		got, err := s.Replicas(ctx)
		require.NoError(t, err)
		return got
	}

	t.Run("nothing published", func(t *testing.T) {
		s := newStore(t)
		v, ok, err := s.Current(ctx)
		require.NoError(t, err)
		require.False(t, ok)
		require.Zero(t, v)
		gone(t, s, "sha256:none")
		require.Empty(t, replicas(t, s))
	})

	t.Run("the published version is current and its bytes read back", func(t *testing.T) {
		s := newStore(t)
		before := time.Now()
		v := publish(t, s, "sha256:a", []byte(`{"openapi":"3.1.0"}`))
		// The store's clock, which for Redis is another process's: only
		// the unit and the epoch are checked.
		require.WithinDuration(t, before, v.PublishedAt, time.Minute)
		require.Equal(t, v, current(t, s))
		document(t, s, "sha256:a", []byte(`{"openapi":"3.1.0"}`))
		gone(t, s, "sha256:b")
	})

	t.Run("multi-MiB documents round-trip", func(t *testing.T) {
		s := newStore(t)
		big := make([]byte, 5<<20+3)
		_, _ = rand.Read(big) // every byte value, NULs included
		publish(t, s, "sha256:big", big)
		document(t, s, "sha256:big", big)

		largest := make([]byte, MaxDocument)
		copy(largest, big)
		publish(t, s, "sha256:largest", largest)
		document(t, s, "sha256:largest", largest)
		document(t, s, "sha256:big", big)
	})

	t.Run("republishing the current version changes nothing", func(t *testing.T) {
		s := newStore(t)
		v := publish(t, s, "v1", []byte("one"))
		again, changed, err := s.Publish(ctx, "v1", []byte("other bytes"))
		require.NoError(t, err)
		require.False(t, changed)
		require.Equal(t, v, again, "the same PublishedAt")
		require.Equal(t, v, current(t, s))
		document(t, s, "v1", []byte("one"))
	})

	t.Run("only the current and the previous version's bytes are kept", func(t *testing.T) {
		s := newStore(t)
		publish(t, s, "v1", []byte("one"))
		publish(t, s, "v2", []byte("two"))
		document(t, s, "v1", []byte("one"))
		v3 := publish(t, s, "v3", []byte("three"))
		require.Equal(t, v3, current(t, s))
		gone(t, s, "v1")
		document(t, s, "v2", []byte("two"))
		document(t, s, "v3", []byte("three"))

		// A dropped version may come back as a new publication.
		publish(t, s, "v1", []byte("one again"))
		document(t, s, "v1", []byte("one again"))
		document(t, s, "v3", []byte("three"))
		gone(t, s, "v2")
	})

	t.Run("returning to the previous version keeps both", func(t *testing.T) {
		// A rollback: the version before the previous is the one being
		// published, so nothing is dropped.
		s := newStore(t)
		publish(t, s, "v1", []byte("one"))
		publish(t, s, "v2", []byte("two"))
		publish(t, s, "v1", []byte("one, refetched"))
		require.Equal(t, "v1", current(t, s).ID)
		document(t, s, "v1", []byte("one, refetched"))
		document(t, s, "v2", []byte("two"))
		publish(t, s, "v2", []byte("two"))
		document(t, s, "v1", []byte("one, refetched"))
		publish(t, s, "v3", []byte("three"))
		gone(t, s, "v1")
		document(t, s, "v2", []byte("two"))
	})

	t.Run("concurrent publishes leave a consistent current version", func(t *testing.T) {
		s := newStore(t)
		const publishers = 24
		errs := make([]error, publishers)
		changed := make([]bool, publishers)
		var wg sync.WaitGroup
		for i := range publishers {
			wg.Go(func() {
				id := "v" + strconv.Itoa(i)
				_, changed[i], errs[i] = s.Publish(ctx, id, []byte("doc "+id))
			})
		}
		wg.Wait()
		for i := range publishers {
			require.NoError(t, errs[i], "publisher %d", i)
			require.True(t, changed[i], "publisher %d: its id was never current before", i)
		}
		cur := current(t, s)
		document(t, s, cur.ID, []byte("doc "+cur.ID))
		kept := 0
		for i := range publishers {
			id := "v" + strconv.Itoa(i)
			got, err := s.Document(ctx, id)
			if err == nil {
				require.Equal(t, "doc "+id, string(got))
				kept++
				continue
			}
			require.ErrorIs(t, err, ErrNotFound)
		}
		require.Equal(t, 2, kept, "the current and the previous version's bytes, no more")
	})

	t.Run("the store keeps its own copy of the bytes", func(t *testing.T) {
		s := newStore(t)
		doc := []byte("original")
		publish(t, s, "v1", doc)
		copy(doc, "mutated!")
		got, err := s.Document(ctx, "v1")
		require.NoError(t, err)
		require.Equal(t, "original", string(got))
		copy(got, "mutated!")
		document(t, s, "v1", []byte("original"))
	})

	t.Run("replicas report their versions and leave", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.Report(ctx, "replica-a", "v1", long))
		require.NoError(t, s.Report(ctx, "replica-b", "v1", long))
		require.Equal(t, map[string]string{"replica-a": "v1", "replica-b": "v1"}, replicas(t, s))

		require.NoError(t, s.Report(ctx, "replica-a", "v2", long))
		require.Equal(t, map[string]string{"replica-a": "v2", "replica-b": "v1"}, replicas(t, s),
			"a report replaces the replica's last")

		require.NoError(t, s.Leave(ctx, "replica-b"))
		require.Equal(t, map[string]string{"replica-a": "v2"}, replicas(t, s))
		require.NoError(t, s.Leave(ctx, "replica-b"), "leaving twice")
		require.NoError(t, s.Leave(ctx, "never-reported"))
		require.NoError(t, s.Leave(ctx, "replica-a"))
		require.Empty(t, replicas(t, s))

		require.NoError(t, s.Report(ctx, "replica-b", "v3", long), "a replica that left may come back")
		require.Equal(t, map[string]string{"replica-b": "v3"}, replicas(t, s))
	})

	t.Run("a report lapses after its ttl", func(t *testing.T) {
		s := newStore(t)
		const ttl = 200 * time.Millisecond
		require.NoError(t, s.Report(ctx, "kept", "v1", long))
		require.NoError(t, s.Report(ctx, "lapsing", "v1", long))
		// Re-reporting replaces the ttl as well as the version.
		require.NoError(t, s.Report(ctx, "lapsing", "v2", ttl))
		require.Eventually(t, func() bool {
			got, err := s.Replicas(ctx)
			return err == nil && len(got) == 1 && got["kept"] == "v1"
		}, 10*time.Second, 10*time.Millisecond, "the lapsed report is dropped")

		require.NoError(t, s.Report(ctx, "lapsing", "v3", long), "a lapsed replica reports again")
		require.Equal(t, map[string]string{"kept": "v1", "lapsing": "v3"}, replicas(t, s))
	})

	t.Run("invalid arguments are refused", func(t *testing.T) {
		s := newStore(t)
		tooBig := make([]byte, MaxDocument+1)
		for name, call := range map[string]func() error{
			"publish an empty id": func() error { _, _, err := s.Publish(ctx, "", []byte("x")); return err },
			"publish over the limit": func() error {
				_, _, err := s.Publish(ctx, "v1", tooBig)
				return err
			},
			"read an empty id":             func() error { _, err := s.Document(ctx, ""); return err },
			"report an empty replica":      func() error { return s.Report(ctx, "", "v1", long) },
			"report an empty id":           func() error { return s.Report(ctx, "r", "", long) },
			"report a zero ttl":            func() error { return s.Report(ctx, "r", "v1", 0) },
			"report a negative ttl":        func() error { return s.Report(ctx, "r", "v1", -time.Second) },
			"report a sub-millisecond ttl": func() error { return s.Report(ctx, "r", "v1", time.Millisecond-1) },
			"leave an empty replica":       func() error { return s.Leave(ctx, "") },
		} {
			err := call()
			require.Error(t, err, name)
			require.NotErrorIs(t, err, ErrNotFound, name)
			require.NotErrorIs(t, err, ErrUnavailable, name)
		}
		_, ok, err := s.Current(ctx)
		require.NoError(t, err)
		require.False(t, ok, "nothing was published")
		require.Empty(t, replicas(t, s), "nothing was reported")
		require.NoError(t, s.Report(ctx, "r", "v1", time.Millisecond), "a millisecond is enough")
	})

	t.Run("an ended context is returned as it is", func(t *testing.T) {
		s := newStore(t)
		publish(t, s, "v1", []byte("one"))
		require.NoError(t, s.Report(ctx, "r", "v1", long))
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		expired, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
		defer cancel2()
		for _, ended := range []context.Context{canceled, expired} {
			want := ended.Err()
			for name, call := range map[string]func() error{
				"Publish":  func() error { _, _, err := s.Publish(ended, "v2", []byte("two")); return err },
				"Current":  func() error { _, _, err := s.Current(ended); return err },
				"Document": func() error { _, err := s.Document(ended, "v1"); return err },
				"Report":   func() error { return s.Report(ended, "r", "v2", long) },
				"Leave":    func() error { return s.Leave(ended, "r") },
				"Replicas": func() error { _, err := s.Replicas(ended); return err },
			} {
				require.Equal(t, want, call(), "%s: %v, unwrapped", name, want)
			}
		}
		require.Equal(t, "v1", current(t, s).ID, "the ended Publish did nothing")
		require.Equal(t, map[string]string{"r": "v1"}, replicas(t, s))
	})
}

func TestMemoryContract(t *testing.T) {
	contract(t, func(*testing.T) Store { return NewMemory() })
}
