package subscriptions

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// storeContract runs the behaviour every Store must share. newStore
// returns an empty store with the given limits, private to t.
func storeContract(t *testing.T, newStore func(t *testing.T, l Limits) Store) {
	ctx := context.Background()

	add := func(t *testing.T, s Store, subscriber, uri string, ttl time.Duration) {
		t.Helper()
		require.NoError(t, s.Add(ctx, subscriber, uri, ttl), "add %q %q", subscriber, uri)
	}
	subscribers := func(t *testing.T, s Store, uri string) []string {
		t.Helper()
		got, err := s.Subscribers(ctx, uri)
		require.NoError(t, err)
		require.True(t, slices.IsSorted(got), "%q", got)
		return got
	}
	of := func(t *testing.T, s Store, subscriber string) []string {
		t.Helper()
		got, err := s.Of(ctx, subscriber)
		require.NoError(t, err)
		require.True(t, slices.IsSorted(got), "%q", got)
		return got
	}
	uris := func(t *testing.T, s Store) []string {
		t.Helper()
		got, err := s.URIs(ctx)
		require.NoError(t, err)
		require.True(t, slices.IsSorted(got), "%q", got)
		return got
	}
	state := func(t *testing.T, s Store, uri string) []byte {
		t.Helper()
		got, err := s.State(ctx, uri)
		require.NoError(t, err)
		return got
	}
	// consistent checks that the three views describe the same
	// subscriptions, and returns them: subscriber → its URIs. subs names
	// every subscriber the store may hold.
	consistent := func(t *testing.T, s Store, subs []string) map[string][]string {
		t.Helper()
		fromURIs := map[string][]string{}
		for _, u := range uris(t, s) {
			holders := subscribers(t, s, u)
			require.NotEmpty(t, holders, "URIs lists %q, which has no subscriber", u)
			for _, sub := range holders {
				require.Contains(t, subs, sub)
				fromURIs[sub] = append(fromURIs[sub], u)
			}
		}
		for _, sub := range subs {
			require.Equal(t, fromURIs[sub], of(t, s, sub), "Of(%q) against Subscribers", sub)
		}
		return fromURIs
	}

	t.Run("add and remove", func(t *testing.T) {
		s := newStore(t, Limits{})
		require.Empty(t, uris(t, s))
		require.Empty(t, subscribers(t, s, "file:///a"))
		require.Empty(t, of(t, s, "s:1"))

		add(t, s, "s:1", "file:///a", long)
		add(t, s, "s:1", "file:///b", long)
		add(t, s, "l:r1:7", "file:///a", long)
		require.Equal(t, []string{"l:r1:7", "s:1"}, subscribers(t, s, "file:///a"))
		require.Equal(t, []string{"s:1"}, subscribers(t, s, "file:///b"))
		require.Equal(t, []string{"file:///a", "file:///b"}, of(t, s, "s:1"))
		require.Equal(t, []string{"file:///a"}, of(t, s, "l:r1:7"))
		require.Equal(t, []string{"file:///a", "file:///b"}, uris(t, s))

		add(t, s, "s:1", "file:///a", long) // idempotent
		require.Equal(t, []string{"l:r1:7", "s:1"}, subscribers(t, s, "file:///a"))
		require.Equal(t, []string{"file:///a", "file:///b"}, of(t, s, "s:1"))

		require.NoError(t, s.Remove(ctx, "s:1", "file:///a"))
		require.Equal(t, []string{"l:r1:7"}, subscribers(t, s, "file:///a"))
		require.Equal(t, []string{"file:///b"}, of(t, s, "s:1"))
		require.NoError(t, s.Remove(ctx, "s:1", "file:///a"), "again")
		require.NoError(t, s.Remove(ctx, "nobody", "file:///nothing"))
		require.NoError(t, s.Remove(ctx, "s:1", "file:///nothing"))

		require.NoError(t, s.Remove(ctx, "l:r1:7", "file:///a"))
		require.Empty(t, subscribers(t, s, "file:///a"))
		require.Equal(t, []string{"file:///b"}, uris(t, s), "the last subscriber gone, the URI goes")
		require.NoError(t, s.Remove(ctx, "s:1", "file:///b"))
		require.Empty(t, uris(t, s))
		require.Empty(t, of(t, s, "s:1"))

		add(t, s, "s:1", "file:///a", long)
		require.Equal(t, []string{"file:///a"}, uris(t, s), "subscribing again after a remove")
	})

	t.Run("views are sorted and agree", func(t *testing.T) {
		s := newStore(t, Limits{})
		subs := []string{"s:b", "s:a", "l:z:1", "s:c"}
		rng := rand.New(rand.NewPCG(1, 2))
		want := map[string][]string{}
		for _, sub := range subs {
			for _, i := range rng.Perm(8)[:1+rng.IntN(7)] {
				u := "res://" + strconv.Itoa(i)
				add(t, s, sub, u, long)
				want[sub] = append(want[sub], u)
			}
			slices.Sort(want[sub])
		}
		require.Equal(t, want, consistent(t, s, subs))
	})

	t.Run("RemoveAll drops a subscriber's subscriptions only", func(t *testing.T) {
		s := newStore(t, Limits{})
		add(t, s, "s:gone", "res://1", long)
		add(t, s, "s:gone", "res://2", long)
		add(t, s, "s:kept", "res://2", long)
		add(t, s, "s:kept", "res://3", long)
		require.NoError(t, s.RemoveAll(ctx, "s:gone"))
		require.Empty(t, of(t, s, "s:gone"))
		require.Equal(t, []string{"res://2", "res://3"}, uris(t, s))
		require.Equal(t, []string{"s:kept"}, subscribers(t, s, "res://2"))
		require.Empty(t, subscribers(t, s, "res://1"))
		require.NoError(t, s.RemoveAll(ctx, "s:gone"), "again")
		require.NoError(t, s.RemoveAll(ctx, "s:never"))
		consistent(t, s, []string{"s:gone", "s:kept"})

		add(t, s, "s:gone", "res://1", long)
		require.Equal(t, []string{"res://1"}, of(t, s, "s:gone"), "a subscriber may subscribe again")
	})

	t.Run("subscriptions expire unless refreshed", func(t *testing.T) {
		s := newStore(t, Limits{})
		add(t, s, "s:kept", "res://shared", short)
		add(t, s, "s:kept", "res://kept", short)
		add(t, s, "s:lapsed", "res://shared", short)
		add(t, s, "s:lapsed", "res://lapsed", short)
		add(t, s, "s:extended", "res://extended", short)
		add(t, s, "s:extended", "res://extended", long) // re-adding extends
		add(t, s, "s:never-shortened", "res://extended", long)
		add(t, s, "s:never-shortened", "res://extended", short)
		require.NoError(t, s.Refresh(ctx, "s:kept", long))
		all := []string{"s:extended", "s:kept", "s:lapsed", "s:never-shortened"}
		require.Equal(t, []string{"res://extended", "res://kept", "res://lapsed", "res://shared"}, uris(t, s))

		eventually(t, func() bool {
			got, err := s.Of(ctx, "s:lapsed")
			return err == nil && len(got) == 0
		}, "s:lapsed's subscriptions expire")
		require.Empty(t, subscribers(t, s, "res://lapsed"))
		require.Equal(t, []string{"s:kept"}, subscribers(t, s, "res://shared"))
		require.Equal(t, []string{"res://extended", "res://kept", "res://shared"}, uris(t, s),
			"a URI stays while any subscriber is live")
		require.Equal(t, []string{"res://kept", "res://shared"}, of(t, s, "s:kept"))
		require.Equal(t, []string{"s:extended", "s:never-shortened"}, subscribers(t, s, "res://extended"))
		consistent(t, s, all)

		require.NoError(t, s.Refresh(ctx, "s:lapsed", long))
		require.Empty(t, of(t, s, "s:lapsed"), "a refresh revives nothing")
		require.Equal(t, []string{"s:kept"}, subscribers(t, s, "res://shared"))
		add(t, s, "s:lapsed", "res://lapsed", long)
		require.Equal(t, []string{"res://lapsed"}, of(t, s, "s:lapsed"), "a lapsed subscription may be added again")
		consistent(t, s, all)
	})

	t.Run("the last subscriber's expiry takes the URI away", func(t *testing.T) {
		s := newStore(t, Limits{})
		add(t, s, "s:1", "res://a", short)
		add(t, s, "s:2", "res://a", 2*short)
		eventually(t, func() bool {
			got, err := s.Subscribers(ctx, "res://a")
			return err == nil && slices.Equal(got, []string{"s:2"})
		}, "s:1 lapses first")
		require.Equal(t, []string{"res://a"}, uris(t, s))
		eventually(t, func() bool {
			got, err := s.URIs(ctx)
			return err == nil && len(got) == 0
		}, "then the URI")
		require.Empty(t, subscribers(t, s, "res://a"))
		require.Empty(t, of(t, s, "s:2"))
	})

	t.Run("a subscriber holds at most MaxPerSubscriber URIs", func(t *testing.T) {
		s := newStore(t, Limits{MaxPerSubscriber: 3})
		for i := range 3 {
			add(t, s, "s:a", "res://"+strconv.Itoa(i), long)
		}
		err := s.Add(ctx, "s:a", "res://3", long)
		require.ErrorIs(t, err, ErrTooMany)
		require.NotErrorIs(t, err, ErrUnavailable)
		add(t, s, "s:a", "res://1", long) // re-adding one held is fine at the cap
		add(t, s, "s:b", "res://3", long) // the cap is per subscriber
		require.Equal(t, []string{"s:b"}, subscribers(t, s, "res://3"), "the refused add left nothing")
		require.Equal(t, []string{"res://0", "res://1", "res://2"}, of(t, s, "s:a"))

		require.NoError(t, s.Remove(ctx, "s:a", "res://0"))
		add(t, s, "s:a", "res://3", long)
		require.ErrorIs(t, s.Add(ctx, "s:a", "res://4", long), ErrTooMany)
		require.NoError(t, s.RemoveAll(ctx, "s:a"))
		add(t, s, "s:a", "res://4", long)
		consistent(t, s, []string{"s:a", "s:b"})
	})

	t.Run("expired subscriptions do not count against the cap", func(t *testing.T) {
		s := newStore(t, Limits{MaxPerSubscriber: 2})
		add(t, s, "s:a", "res://lapses", short)
		add(t, s, "s:a", "res://stays", long)
		require.ErrorIs(t, s.Add(ctx, "s:a", "res://new", long), ErrTooMany)
		eventually(t, func() bool { return s.Add(ctx, "s:a", "res://new", long) == nil }, "room once one lapses")
		require.Equal(t, []string{"res://new", "res://stays"}, of(t, s, "s:a"))
		require.ErrorIs(t, s.Add(ctx, "s:a", "res://more", long), ErrTooMany)
	})

	t.Run("the cap defaults to 1000", func(t *testing.T) {
		s := newStore(t, Limits{})
		const workers = 8
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				for i := w; i < 1000; i += workers {
					if err := s.Add(ctx, "s:many", "res://"+strconv.Itoa(i), long); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.ErrorIs(t, s.Add(ctx, "s:many", "res://1000", long), ErrTooMany)
		require.Len(t, of(t, s, "s:many"), 1000)
		require.Len(t, uris(t, s), 1000)
	})

	t.Run("state round trip", func(t *testing.T) {
		s := newStore(t, Limits{})
		require.Nil(t, state(t, s, "res://a"), "none yet")
		require.NoError(t, s.SetState(ctx, "res://a", []byte(`{"etag":"1"}`), long))
		require.Equal(t, []byte(`{"etag":"1"}`), state(t, s, "res://a"))
		require.NoError(t, s.SetState(ctx, "res://a", []byte(`{"etag":"2"}`), long))
		got := state(t, s, "res://a")
		require.Equal(t, []byte(`{"etag":"2"}`), got, "overwritten")
		got[0] = 'X'
		require.Equal(t, []byte(`{"etag":"2"}`), state(t, s, "res://a"), "the result is a copy")
		require.Nil(t, state(t, s, "res://b"))

		require.NoError(t, s.SetState(ctx, "res://empty", nil, long))
		require.Equal(t, []byte{}, state(t, s, "res://empty"), "an empty state is not no state")
		binary := []byte{0, 1, 2, 0xff, '{', '}'}
		require.NoError(t, s.SetState(ctx, "res://bin", binary, long))
		require.Equal(t, binary, state(t, s, "res://bin"))

		require.Empty(t, uris(t, s), "state is not a subscription")
		add(t, s, "s:1", "res://a", long)
		require.NoError(t, s.RemoveAll(ctx, "s:1"))
		require.Equal(t, []byte(`{"etag":"2"}`), state(t, s, "res://a"), "nor does it go with them")
	})

	t.Run("state expires", func(t *testing.T) {
		s := newStore(t, Limits{})
		require.NoError(t, s.SetState(ctx, "res://a", []byte("v1"), short))
		require.NoError(t, s.SetState(ctx, "res://b", []byte("kept"), long))
		require.Equal(t, []byte("v1"), state(t, s, "res://a"))
		eventually(t, func() bool {
			got, err := s.State(ctx, "res://a")
			return err == nil && got == nil
		}, "the state lapses")
		require.Equal(t, []byte("kept"), state(t, s, "res://b"))
		require.NoError(t, s.SetState(ctx, "res://a", []byte("v2"), long))
		require.Equal(t, []byte("v2"), state(t, s, "res://a"))
	})

	t.Run("any URI and subscriber", func(t *testing.T) {
		s := newStore(t, Limits{})
		odd := []string{
			"a{b}c", "{", "}", "}{", "{}", "%", "%7D", "%25", "u:{x}", "with space",
			"ünïcødé/✓/日本", "line\nbreak", "nul\x00byte", "file:///tmp/x?q=1&r=%7B#frag",
			strings.Repeat("x", 8<<10), strings.Repeat("é", 4<<10) + "}",
		}
		subs := []string{"s:{sess}", "l:replica}:1", "%", "}"}
		for _, sub := range subs {
			for _, u := range odd {
				add(t, s, sub, u, long)
			}
		}
		sortedURIs := slices.Sorted(slices.Values(odd))
		sortedSubs := slices.Sorted(slices.Values(subs))
		require.Equal(t, sortedURIs, uris(t, s))
		for _, sub := range subs {
			require.Equal(t, sortedURIs, of(t, s, sub))
		}
		for i, u := range odd {
			require.Equal(t, sortedSubs, subscribers(t, s, u), "%.40q", u)
			require.NoError(t, s.SetState(ctx, u, []byte(strconv.Itoa(i)), long))
		}
		for i, u := range odd {
			require.Equal(t, []byte(strconv.Itoa(i)), state(t, s, u), "%.40q", u)
		}
		require.NoError(t, s.Refresh(ctx, "}", long))
		for _, u := range odd {
			require.NoError(t, s.Remove(ctx, "%", u))
		}
		require.NoError(t, s.RemoveAll(ctx, "s:{sess}"))
		require.Empty(t, of(t, s, "%"))
		require.Equal(t, sortedURIs, uris(t, s))
		require.Equal(t, []string{"l:replica}:1", "}"}, subscribers(t, s, odd[len(odd)-1]))
		consistent(t, s, subs)
	})

	t.Run("concurrent adds and removes leave the views agreeing", func(t *testing.T) {
		s := newStore(t, Limits{})
		pool := make([]string, 6)
		for i := range pool {
			pool[i] = "res://" + strconv.Itoa(i)
		}
		const owners, sharers, ops = 4, 4, 60
		var mu sync.Mutex
		want := map[string][]string{} // the owners' subscriptions
		var wg sync.WaitGroup
		errs := make(chan error, owners+sharers)
		for w := range owners + sharers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				// Owners each have a subscriber to themselves, so their
				// outcome is known; sharers race in pairs on one.
				sub := "s:owner-" + strconv.Itoa(w)
				if w >= owners {
					sub = "s:shared-" + strconv.Itoa(w%2)
				}
				held := map[string]bool{}
				for range ops {
					u := pool[rng.IntN(len(pool))]
					var err error
					switch n := rng.IntN(20); {
					case n < 11:
						err = s.Add(ctx, sub, u, long)
						held[u] = true
					case n < 18:
						err = s.Remove(ctx, sub, u)
						delete(held, u)
					case n < 19:
						err = s.Refresh(ctx, sub, long)
					default:
						err = s.RemoveAll(ctx, sub)
						clear(held)
					}
					if err != nil {
						errs <- fmt.Errorf("%s: %w", sub, err)
						return
					}
				}
				if w < owners {
					mu.Lock()
					for u := range held {
						want[sub] = append(want[sub], u)
					}
					slices.Sort(want[sub])
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		subs := []string{"s:shared-0", "s:shared-1"}
		for w := range owners {
			subs = append(subs, "s:owner-"+strconv.Itoa(w))
		}
		got := consistent(t, s, subs)
		for w := range owners {
			sub := "s:owner-" + strconv.Itoa(w)
			require.Equal(t, want[sub], got[sub], sub)
		}
	})

	t.Run("invalid arguments are refused", func(t *testing.T) {
		s := newStore(t, Limits{})
		plain := func(t *testing.T, err error, what string) {
			t.Helper()
			require.Error(t, err, what)
			require.NotErrorIs(t, err, ErrUnavailable, what)
			require.NotErrorIs(t, err, ErrTooMany, what)
		}
		for _, ttl := range []time.Duration{0, -time.Second, time.Millisecond - time.Microsecond, maxTTL + time.Millisecond} {
			plain(t, s.Add(ctx, "s", "u", ttl), "add, ttl "+ttl.String())
			plain(t, s.Refresh(ctx, "s", ttl), "refresh, ttl "+ttl.String())
			plain(t, s.SetState(ctx, "u", nil, ttl), "set state, ttl "+ttl.String())
		}
		plain(t, s.Add(ctx, "", "u", long), "add, no subscriber")
		plain(t, s.Add(ctx, "s", "", long), "add, no uri")
		plain(t, s.Remove(ctx, "", "u"), "remove, no subscriber")
		plain(t, s.Remove(ctx, "s", ""), "remove, no uri")
		plain(t, s.RemoveAll(ctx, ""), "remove all, no subscriber")
		plain(t, s.Refresh(ctx, "", long), "refresh, no subscriber")
		_, err := s.Subscribers(ctx, "")
		plain(t, err, "subscribers, no uri")
		_, err = s.Of(ctx, "")
		plain(t, err, "of, no subscriber")
		_, err = s.State(ctx, "")
		plain(t, err, "state, no uri")
		plain(t, s.SetState(ctx, "", nil, long), "set state, no uri")
		require.Empty(t, uris(t, s), "nothing was stored")

		require.NoError(t, s.Add(ctx, "s", "u", time.Millisecond), "the shortest ttl")
		require.NoError(t, s.Add(ctx, "s", "v", maxTTL), "the longest")
		require.NoError(t, s.SetState(ctx, "u", nil, time.Millisecond))
	})
}

func TestMemoryContract(t *testing.T) {
	storeContract(t, func(_ *testing.T, l Limits) Store { return NewMemory(l) })
}
