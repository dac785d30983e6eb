package pending

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const (
	long  = time.Hour
	short = 200 * time.Millisecond
)

// eventually polls cond until it holds: expiry is awaited, not slept on.
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 10*time.Millisecond, msg)
}

// storeContract runs the behaviour every Store must share. newStores
// returns two stores private to t that share one backing store, as two
// replicas share one Redis (a Memory may return itself twice).
func storeContract(t *testing.T, newStores func(t *testing.T) (Store, Store)) {
	ctx := context.Background()

	rec := func(session, id, replica string, ttl time.Duration) Record {
		return Record{Session: session, ID: id, Replica: replica, Deadline: time.Now().Add(ttl)}
	}
	add := func(t *testing.T, s Store, r Record, max int) {
		t.Helper()
		require.NoError(t, s.Add(ctx, r, max), "add %q %q", r.Session, r.ID)
	}
	get := func(t *testing.T, s Store, session, id string) Record {
		t.Helper()
		got, err := s.Get(ctx, session, id)
		require.NoError(t, err, "get %q %q", session, id)
		return got
	}
	absent := func(t *testing.T, s Store, session, id string) {
		t.Helper()
		_, err := s.Get(ctx, session, id)
		require.ErrorIs(t, err, ErrNotFound, "get %q %q", session, id)
		require.NotErrorIs(t, err, ErrUnavailable)
	}
	remove := func(t *testing.T, s Store, session, id string) bool {
		t.Helper()
		ok, err := s.Remove(ctx, session, id)
		require.NoError(t, err, "remove %q %q", session, id)
		return ok
	}
	ids := func(recs []Record) []string {
		out := []string{}
		for _, r := range recs {
			out = append(out, r.ID)
		}
		return out
	}
	removeSession := func(t *testing.T, s Store, session string) []Record {
		t.Helper()
		got, err := s.RemoveSession(ctx, session)
		require.NoError(t, err, "remove session %q", session)
		return got
	}
	consume := func(t *testing.T, s Store, token string, ttl time.Duration) bool {
		t.Helper()
		first, err := s.Consume(ctx, token, ttl)
		require.NoError(t, err, "consume %q", token)
		return first
	}

	t.Run("add, get and remove", func(t *testing.T) {
		a, b := newStores(t)
		absent(t, a, "s1", "1")
		r := rec("s1", "1", "replica-a", long)
		add(t, a, r, 0)

		got := get(t, b, "s1", "1")
		want := r
		want.Deadline = time.UnixMilli(r.Deadline.UnixMilli())
		require.True(t, want.Deadline.Equal(got.Deadline), "kept to the millisecond: %v, want %v", got.Deadline, want.Deadline)
		got.Deadline = want.Deadline
		require.Equal(t, want, got, "the other replica sees it")
		absent(t, a, "s1", "2")
		absent(t, a, "s2", "1")

		add(t, b, rec("s1", "1", "replica-b", long), 0)
		require.Equal(t, "replica-b", get(t, a, "s1", "1").Replica, "adding the same id replaces it")

		require.True(t, remove(t, a, "s1", "1"))
		absent(t, b, "s1", "1")
		require.False(t, remove(t, b, "s1", "1"), "again")
		require.False(t, remove(t, b, "nobody", "x"), "absent is not an error")
		add(t, a, r, 0)
		require.Equal(t, "replica-a", get(t, a, "s1", "1").Replica, "added again after a remove")
	})

	t.Run("records expire at their deadline", func(t *testing.T) {
		a, b := newStores(t)
		add(t, a, rec("s", "short", "r", short), 0)
		add(t, a, rec("s", "gone", "r", short), 0)
		add(t, a, rec("s", "long", "r", long), 0)
		add(t, a, rec("other", "short", "r", short), 0)
		get(t, b, "s", "short")
		eventually(t, func() bool {
			_, err1 := b.Get(ctx, "s", "short")
			_, err2 := b.Get(ctx, "s", "gone")
			_, err3 := b.Get(ctx, "other", "short")
			return errors.Is(err1, ErrNotFound) && errors.Is(err2, ErrNotFound) && errors.Is(err3, ErrNotFound)
		}, "the short records lapse")
		absent(t, a, "s", "short")
		require.False(t, remove(t, a, "s", "gone"), "an expired record is not reported as removed")
		get(t, b, "s", "long")
		require.Equal(t, []string{"long"}, ids(removeSession(t, b, "s")), "only the live ones are returned")
		require.False(t, remove(t, a, "other", "short"))
	})

	t.Run("RemoveSession takes a session's records only", func(t *testing.T) {
		a, b := newStores(t)
		for _, id := range []string{"3", "1", "10", "2"} {
			add(t, a, rec("gone", id, "r-"+id, long), 0)
		}
		add(t, b, rec("kept", "1", "r", long), 0)
		got := removeSession(t, b, "gone")
		require.Equal(t, []string{"1", "10", "2", "3"}, ids(got), "sorted by id")
		for _, r := range got {
			require.Equal(t, "gone", r.Session)
			require.Equal(t, "r-"+r.ID, r.Replica)
			require.WithinDuration(t, time.Now().Add(long), r.Deadline, time.Minute)
		}
		absent(t, a, "gone", "1")
		require.Empty(t, removeSession(t, a, "gone"), "again")
		require.Empty(t, removeSession(t, a, "never"))
		get(t, a, "kept", "1")
		add(t, a, rec("gone", "1", "r", long), 1)
		get(t, b, "gone", "1")
	})

	t.Run("a session holds at most max live records", func(t *testing.T) {
		a, b := newStores(t)
		add(t, a, rec("s", "1", "r", long), 2)
		add(t, b, rec("s", "2", "r", long), 2)
		err := a.Add(ctx, rec("s", "3", "r", long), 2)
		require.ErrorIs(t, err, ErrFull)
		require.NotErrorIs(t, err, ErrUnavailable)
		absent(t, b, "s", "3")
		add(t, b, rec("s", "1", "r2", long), 2) // replacing one held needs no room
		add(t, a, rec("other", "3", "r", long), 2)
		err = b.Add(ctx, rec("s", "3", "r", long), 1)
		require.ErrorIs(t, err, ErrFull, "a lower max applies at once")
		require.True(t, remove(t, a, "s", "1"))
		add(t, b, rec("s", "3", "r", long), 2)
		require.ErrorIs(t, a.Add(ctx, rec("s", "4", "r", long), 2), ErrFull)
		require.Equal(t, []string{"2", "3"}, ids(removeSession(t, a, "s")))

		for i := range 50 {
			add(t, a, rec("many", strconv.Itoa(i), "r", long), 0)
		}
		add(t, a, rec("many", "50", "r", long), -1)
		require.Len(t, removeSession(t, b, "many"), 51, "max <= 0: no cap")
	})

	t.Run("expired records do not count against the cap", func(t *testing.T) {
		a, b := newStores(t)
		add(t, a, rec("s", "lapses", "r", short), 2)
		add(t, a, rec("s", "stays", "r", long), 2)
		require.ErrorIs(t, b.Add(ctx, rec("s", "new", "r", long), 2), ErrFull)
		eventually(t, func() bool { return b.Add(ctx, rec("s", "new", "r", long), 2) == nil }, "room once one lapses")
		require.ErrorIs(t, a.Add(ctx, rec("s", "more", "r", long), 2), ErrFull)
		require.Equal(t, []string{"new", "stays"}, ids(removeSession(t, a, "s")))
	})

	t.Run("concurrent adds at the cap never exceed it", func(t *testing.T) {
		a, b := newStores(t)
		const workers, max = 32, 5
		var added, full atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			s := a
			if w%2 == 1 {
				s = b
			}
			wg.Go(func() {
				err := s.Add(ctx, rec("s", strconv.Itoa(w), "r", long), max)
				switch {
				case err == nil:
					added.Add(1)
				case errors.Is(err, ErrFull):
					full.Add(1)
				default:
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.EqualValues(t, max, added.Load())
		require.EqualValues(t, workers-max, full.Load())
		require.Len(t, removeSession(t, a, "s"), max)
	})

	t.Run("one concurrent Remove claims a record", func(t *testing.T) {
		a, b := newStores(t)
		for round := range 5 {
			id := strconv.Itoa(round)
			add(t, a, rec("s", id, "r", long), 0)
			var claimed atomic.Int32
			var wg sync.WaitGroup
			for w := range 16 {
				s := a
				if w%2 == 1 {
					s = b
				}
				wg.Go(func() {
					ok, err := s.Remove(ctx, "s", id)
					if err == nil && ok {
						claimed.Add(1)
					}
				})
			}
			wg.Wait()
			require.EqualValues(t, 1, claimed.Load(), "round %d", round)
		}
	})

	t.Run("Consume reports a replay", func(t *testing.T) {
		a, b := newStores(t)
		require.True(t, consume(t, a, "tok-1", long))
		require.False(t, consume(t, b, "tok-1", long), "the other replica sees the replay")
		require.False(t, consume(t, a, "tok-1", long))
		require.True(t, consume(t, b, "tok-2", long))

		require.True(t, consume(t, a, "lapses", short))
		require.False(t, consume(t, b, "lapses", long), "a replay does not extend the mark")
		eventually(t, func() bool {
			first, err := b.Consume(ctx, "lapses", long)
			return err == nil && first
		}, "the mark lapses after its ttl")
		require.False(t, consume(t, a, "lapses", long))
		require.True(t, consume(t, a, "sub-ms", 1500*time.Microsecond), "a ttl is rounded up, never to 0")
	})

	t.Run("one of concurrent Consumes is first", func(t *testing.T) {
		a, b := newStores(t)
		for round := range 5 {
			token := "tok-" + strconv.Itoa(round)
			var firsts atomic.Int32
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for w := range 16 {
				s := a
				if w%2 == 1 {
					s = b
				}
				wg.Go(func() {
					first, err := s.Consume(ctx, token, long)
					if err != nil {
						errs <- err
					} else if first {
						firsts.Add(1)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.EqualValues(t, 1, firsts.Load(), "round %d", round)
		}
	})

	t.Run("SharedKey: the first writer wins", func(t *testing.T) {
		a, b := newStores(t)
		k1 := []byte("first-candidate-\x00\xff-32-bytes!!")
		got, err := a.SharedKey(ctx, "mrtr", k1)
		require.NoError(t, err)
		require.Equal(t, k1, got, "stored now")
		got[0] = 'X'
		got, err = b.SharedKey(ctx, "mrtr", []byte("second"))
		require.NoError(t, err)
		require.Equal(t, k1, got, "the other replica gets the stored one; the result was a copy")
		k1[1] = 'Y'
		got, err = a.SharedKey(ctx, "mrtr", []byte("third"))
		require.NoError(t, err)
		require.Equal(t, []byte("first-candidate-\x00\xff-32-bytes!!"), got, "the candidate was copied")
		got, err = b.SharedKey(ctx, "other", []byte("another"))
		require.NoError(t, err)
		require.Equal(t, []byte("another"), got, "names are independent")

		const workers = 16
		results := make([][]byte, workers)
		var wg sync.WaitGroup
		for w := range workers {
			s := a
			if w%2 == 1 {
				s = b
			}
			wg.Go(func() {
				k, err := s.SharedKey(ctx, "raced", []byte("candidate-"+strconv.Itoa(w)))
				if err == nil {
					results[w] = k
				}
			})
		}
		wg.Wait()
		require.NotNil(t, results[0])
		require.True(t, strings.HasPrefix(string(results[0]), "candidate-"))
		for w, k := range results {
			require.Equal(t, results[0], k, "worker %d", w)
		}
	})

	t.Run("any session, id, replica and token", func(t *testing.T) {
		a, b := newStores(t)
		odd := []string{
			"a{b}c", "{", "}", "}{", "{}", "%", "%7D", "%25", "r:{x}", ":", "1:2", "with space",
			"ünïcødé/✓/日本", "line\nbreak", "nul\x00byte", `"quoted"`, "-1", "1.5e3",
			strings.Repeat("x", 8<<10),
		}
		for i, session := range odd {
			for j, id := range odd {
				add(t, a, rec(session, id, odd[(i+j)%len(odd)], long), 0)
			}
		}
		for i, session := range odd {
			got := removeSession(t, b, session)
			require.Len(t, got, len(odd), "%.40q", session)
			for _, r := range got {
				j := indexOf(odd, r.ID)
				require.GreaterOrEqual(t, j, 0)
				require.Equal(t, odd[(i+j)%len(odd)], r.Replica, "%.40q %.40q", session, r.ID)
				require.Equal(t, session, r.Session)
			}
		}
		for _, token := range odd {
			require.True(t, consume(t, a, token, long), "%.40q", token)
			require.False(t, consume(t, b, token, long), "%.40q", token)
		}
		for _, name := range odd {
			got, err := a.SharedKey(ctx, name, []byte(name))
			require.NoError(t, err)
			require.Equal(t, []byte(name), got)
		}
	})

	t.Run("invalid arguments are refused", func(t *testing.T) {
		a, _ := newStores(t)
		plain := func(t *testing.T, err error, what string) {
			t.Helper()
			require.Error(t, err, what)
			for _, sentinel := range []error{ErrNotFound, ErrFull, ErrUnavailable} {
				require.NotErrorIs(t, err, sentinel, what)
			}
		}
		ok := rec("s", "1", "r", long)
		for what, r := range map[string]Record{
			"no session":       {ID: "1", Replica: "r", Deadline: ok.Deadline},
			"no id":            {Session: "s", Replica: "r", Deadline: ok.Deadline},
			"no replica":       {Session: "s", ID: "1", Deadline: ok.Deadline},
			"no deadline":      {Session: "s", ID: "1", Replica: "r"},
			"a passed one":     rec("s", "1", "r", -time.Second),
			"now":              {Session: "s", ID: "1", Replica: "r", Deadline: time.Now()},
			"too far ahead":    rec("s", "1", "r", maxAhead+time.Minute),
			"before the epoch": {Session: "s", ID: "1", Replica: "r", Deadline: time.Unix(-5, 0)},
		} {
			plain(t, a.Add(ctx, r, 0), "add, "+what)
		}
		_, err := a.Get(ctx, "", "1")
		plain(t, err, "get, no session")
		_, err = a.Get(ctx, "s", "")
		plain(t, err, "get, no id")
		_, err = a.Remove(ctx, "", "1")
		plain(t, err, "remove, no session")
		_, err = a.Remove(ctx, "s", "")
		plain(t, err, "remove, no id")
		_, err = a.RemoveSession(ctx, "")
		plain(t, err, "remove session, no session")
		for _, ttl := range []time.Duration{0, -time.Second, time.Millisecond - 1} {
			_, err = a.Consume(ctx, "t", ttl)
			plain(t, err, fmt.Sprint("consume, ttl ", ttl))
		}
		_, err = a.Consume(ctx, "", long)
		plain(t, err, "consume, no token")
		_, err = a.SharedKey(ctx, "", []byte("k"))
		plain(t, err, "shared key, no name")
		_, err = a.SharedKey(ctx, "k", nil)
		plain(t, err, "shared key, no candidate")
		require.Empty(t, removeSession(t, a, "s"), "nothing was stored")
		first, err := a.Consume(ctx, "t", time.Millisecond)
		require.NoError(t, err, "the shortest ttl")
		require.True(t, first)
		add(t, a, rec("s", "1", "r", maxAhead-time.Minute), 0)
	})
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

func TestMemoryContract(t *testing.T) {
	storeContract(t, func(*testing.T) (Store, Store) {
		m := NewMemory()
		return m, m
	})
}
