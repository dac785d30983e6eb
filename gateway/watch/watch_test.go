package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/pubsub/lease"
	"github.com/mcp-gateway/mcp-gateway/sessions/subscriptions"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// Short timings, so that a test takes a few hundred milliseconds; the
// tests wait for conditions, never for these.
const (
	pollEvery = 50 * time.Millisecond
	leaseTTL  = 300 * time.Millisecond
	window    = 50 * time.Millisecond
	// hangGuard only stops a test that would otherwise hang; it is not a
	// deadline under test.
	hangGuard = 10 * time.Second
	tick      = 5 * time.Millisecond
)

func testConfig(replica string) Config {
	return Config{Replica: replica, PollInterval: pollEvery, LeaseTTL: leaseTTL, Coalesce: window}
}

// watched says every URI can change except those of the static: scheme.
func watched(uri string) (bool, time.Duration) { return !strings.HasPrefix(uri, "static:"), 0 }

func nothingWatched(string) (bool, time.Duration) { return false, 0 }

var errGone = errors.New("session gone")

func isGone(err error) bool { return errors.Is(err, errGone) }

// backend is the resources every watcher of a test polls: a version per
// URI (its hash, and its ETag when etags is set), and who polled what.
type backend struct {
	mu       sync.Mutex
	etags    bool // a poll whose ETag matches the version is NotModified
	content  map[string]string
	polls    map[string]map[string]int // replica → uri → polls
	lastCond map[string]call.Conditional
	// firstPoll and lastPoll are each replica's first and last poll of a URI.
	firstPoll, lastPoll map[string]map[string]time.Time
}

func newBackend() *backend {
	return &backend{
		content: map[string]string{}, polls: map[string]map[string]int{}, lastCond: map[string]call.Conditional{},
		firstPoll: map[string]map[string]time.Time{}, lastPoll: map[string]map[string]time.Time{},
	}
}

func (b *backend) set(uri, version string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.content[uri] = version
}

// poll is replica's Deps.Poll.
func (b *backend) poll(replica string) func(string, call.Conditional) (Snapshot, error) {
	return func(uri string, cond call.Conditional) (Snapshot, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.polls[replica] == nil {
			b.polls[replica] = map[string]int{}
			b.firstPoll[replica] = map[string]time.Time{}
			b.lastPoll[replica] = map[string]time.Time{}
		}
		b.polls[replica][uri]++
		now := time.Now()
		if _, ok := b.firstPoll[replica][uri]; !ok {
			b.firstPoll[replica][uri] = now
		}
		b.lastPoll[replica][uri] = now
		b.lastCond[uri] = cond
		v, ok := b.content[uri]
		if !ok {
			return Snapshot{}, fmt.Errorf("backend: no resource %s", uri)
		}
		etag := `"` + v + `"`
		if b.etags && cond.ETag == etag {
			return Snapshot{NotModified: true}, nil
		}
		snap := Snapshot{Hash: "sha256:" + v}
		if b.etags {
			snap.ETag = etag
		}
		return snap, nil
	}
}

// byReplica returns how often each replica polled uri.
func (b *backend) byReplica(uri string) map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	for r, n := range b.polls {
		if n[uri] > 0 {
			out[r] = n[uri]
		}
	}
	return out
}

func (b *backend) total(uri string) int {
	n := 0
	for _, c := range b.byReplica(uri) {
		n += c
	}
	return n
}

func (b *backend) cond(uri string) call.Conditional {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastCond[uri]
}

func (b *backend) pollTimes(replica, uri string) (first, last time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.firstPoll[replica][uri], b.lastPoll[replica][uri]
}

// awaitPolls returns once uri was polled n more times (by anyone): the
// clock of a test that checks that something did not happen.
func awaitPolls(t *testing.T, b *backend, uri string, n int) {
	t.Helper()
	base := b.total(uri)
	require.Eventually(t, func() bool { return b.total(uri) >= base+n }, hangGuard, tick, "%d more polls of %s", n, uri)
}

// inbox records the notifications every watcher of a test delivers.
type inbox struct {
	mu   sync.Mutex
	got  []delivery
	fail map[string]error // sid → what Deliver returns for it
}

type delivery struct{ replica, sid, uri string }

func newInbox() *inbox { return &inbox{fail: map[string]error{}} }

// deliver is replica's Deps.Deliver.
func (in *inbox) deliver(replica string) func(context.Context, string, string) error {
	return func(_ context.Context, sid, uri string) error {
		in.mu.Lock()
		defer in.mu.Unlock()
		if err := in.fail[sid]; err != nil {
			return err
		}
		in.got = append(in.got, delivery{replica, sid, uri})
		return nil
	}
}

func (in *inbox) failFor(sid string, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.fail[sid] = err
}

func (in *inbox) count(sid, uri string) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := 0
	for _, d := range in.got {
		if d.sid == sid && d.uri == uri {
			n++
		}
	}
	return n
}

func (in *inbox) total() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.got)
}

func (in *inbox) deliveredBy(uri string) []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []string
	for _, d := range in.got {
		if d.uri == uri && !slices.Contains(out, d.replica) {
			out = append(out, d.replica)
		}
	}
	return out
}

// awaitEach returns once every sid got n notifications of uri.
func (in *inbox) awaitEach(t *testing.T, uri string, n int, sids ...string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, sid := range sids {
			if in.count(sid, uri) < n {
				return false
			}
		}
		return true
	}, hangGuard, tick, "each of %v notified %d times of %s", sids, n, uri)
}

// requireEach checks that every sid got exactly n notifications of uri.
func (in *inbox) requireEach(t *testing.T, uri string, n int, sids ...string) {
	t.Helper()
	for _, sid := range sids {
		require.Equal(t, n, in.count(sid, uri), "notifications of %s to %s", uri, sid)
	}
}

// run runs w until stop is called or the test ends; stop returns once
// Run has.
func run(t *testing.T, w *Watcher) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return stop
}

// pending reports whether w has a delivery of uri scheduled.
func pending(w *Watcher, uri string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pending[uri]
}

func polls(w *Watcher, outcome string) int {
	return int(testutil.ToFloat64(w.polls.WithLabelValues(outcome)))
}

func holder(t *testing.T, l lease.Lease, name string) string {
	t.Helper()
	h, err := l.Holder(context.Background(), name)
	require.NoError(t, err)
	return h
}

func subsOf(t *testing.T, s subscriptions.Store, subscriber string) []string {
	t.Helper()
	uris, err := s.Of(context.Background(), subscriber)
	require.NoError(t, err)
	return uris
}

func subscribe(t *testing.T, w *Watcher, uri string, sids ...string) {
	t.Helper()
	for _, sid := range sids {
		require.NoError(t, w.Subscribe(context.Background(), sid, uri, time.Hour))
	}
}

// single is one replica on the Memory stores.
type single struct {
	w     *Watcher
	subs  *subscriptions.Memory
	lease *lease.Memory
	be    *backend
	in    *inbox
}

func newSingle(t *testing.T, cfg Config) *single {
	s := &single{subs: subscriptions.NewMemory(subscriptions.Limits{}), lease: lease.NewMemory(), be: newBackend(), in: newInbox()}
	s.w = New(cfg, Deps{
		Subs: s.subs, Lease: s.lease, Bus: pubsub.NewMemory(),
		Poll: s.be.poll(cfg.Replica), Watched: watched, Deliver: s.in.deliver(cfg.Replica), IsGone: isGone,
		Logger: slog.New(slog.DiscardHandler), Metrics: prometheus.NewRegistry(),
	})
	return s
}

// fleet is replicas sharing one Redis for subscriptions, leases and the
// bus. Each replica's leases go through a client of its own, so that a
// test can cut one replica off its leases.
type fleet struct {
	c     redis.UniversalClient
	subs  subscriptions.Store // the test's view of the shared store
	lease lease.Lease
	be    *backend
	in    *inbox
	rs    []*member
}

type member struct {
	name        string
	w           *Watcher
	leaseClient redis.UniversalClient
	stop        func()
}

// newFleet starts one running watcher per name; watchedOn gives each its
// Deps.Watched (nil: watched).
func newFleet(t *testing.T, names []string, watchedOn func(replica string) func(string) (bool, time.Duration)) *fleet {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	prefix := redistest.Prefix(t)
	redistest.Cleanup(t, c, prefix)
	f := &fleet{
		c: c, subs: subscriptions.NewRedis(c, prefix+"subs:", subscriptions.Limits{}), lease: lease.NewRedis(c, prefix+"lease:"),
		be: newBackend(), in: newInbox(),
	}
	for _, name := range names {
		isWatched := watched
		if watchedOn != nil {
			isWatched = watchedOn(name)
		}
		lc := srv.Client(t)
		bus := runBus(t, c, prefix+"bus:")
		w := New(testConfig(name), Deps{
			Subs: subscriptions.NewRedis(c, prefix+"subs:", subscriptions.Limits{}), Lease: lease.NewRedis(lc, prefix+"lease:"), Bus: bus,
			Poll: f.be.poll(name), Watched: isWatched, Deliver: f.in.deliver(name), IsGone: isGone,
			Logger: slog.New(slog.DiscardHandler), Metrics: prometheus.NewRegistry(),
		})
		f.rs = append(f.rs, &member{name: name, w: w, leaseClient: lc, stop: run(t, w)})
	}
	return f
}

// runBus runs a Redis bus until the test ends (after the watchers, whose
// cleanups come later and so run first).
func runBus(t *testing.T, c redis.UniversalClient, prefix string) *pubsub.Redis {
	b := pubsub.NewRedis(c, prefix)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return b
}

func (f *fleet) member(name string) *member {
	for _, m := range f.rs {
		if m.name == name {
			return m
		}
	}
	return nil
}

func (f *fleet) watchers() []*Watcher {
	var ws []*Watcher
	for _, m := range f.rs {
		ws = append(ws, m.w)
	}
	return ws
}

// awaitPoller returns the replica, other than those in not, that holds
// uri's poll lease and has polled it since before was taken.
func (f *fleet) awaitPoller(t *testing.T, uri string, before map[string]int, not ...string) string {
	t.Helper()
	var got string
	require.Eventually(t, func() bool {
		h, err := f.lease.Holder(context.Background(), pollLease(uri))
		if err != nil || h == "" || slices.Contains(not, h) {
			return false
		}
		if f.be.byReplica(uri)[h] <= before[h] || !slices.Contains(f.member(h).w.Polling(), uri) {
			return false
		}
		got = h
		return true
	}, hangGuard, tick, "a replica other than %v polls %s", not, uri)
	return got
}

// burst calls Changed(uri) n times at once, spread over ws.
func burst(ws []*Watcher, uri string, n int) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		w := ws[i%len(ws)]
		wg.Go(func() {
			<-start
			w.Changed(context.Background(), uri, false)
		})
	}
	close(start)
	wg.Wait()
}

// awaitHearing returns once on's listeners hear the changes from
// delivers (over the bus): it repeats a change of a probe URI until a
// listener of on hears it.
func awaitHearing(t *testing.T, on, from *Watcher) {
	t.Helper()
	const probe = "static:probe"
	l, err := on.Listen(context.Background(), []string{probe})
	require.NoError(t, err)
	defer l.Close()
	guard := time.After(hangGuard)
	for {
		from.Changed(context.Background(), probe, false)
		select {
		case <-l.C():
			require.Equal(t, []string{probe}, l.Take())
			return
		case <-time.After(4 * window):
		case <-guard:
			t.Fatalf("%s does not hear %s's changes", on.Replica(), from.Replica())
		}
	}
}

// awaitSignal returns what l's next signal says changed.
func awaitSignal(t *testing.T, l *Listener) []string {
	t.Helper()
	select {
	case <-l.C():
		return l.Take()
	case <-time.After(hangGuard):
		t.Fatal("the listener was not signalled")
		return nil
	}
}

func TestPolling(t *testing.T) {
	ctx := context.Background()
	const uri, other = "res://items/1", "res://items/2"

	t.Run("the first poll is a baseline; a change reaches each subscriber once", func(t *testing.T) {
		s := newSingle(t, testConfig("r1"))
		s.be.set(uri, "v1")
		s.be.set(other, "v1")
		subscribe(t, s.w, uri, "a", "b")
		subscribe(t, s.w, other, "c")
		run(t, s.w)

		awaitPolls(t, s.be, uri, 3)
		require.Zero(t, s.in.total(), "a baseline and unchanged polls notify nobody")
		require.Equal(t, 2, polls(s.w, "baseline"), "one baseline per URI")
		require.Positive(t, polls(s.w, "unchanged"))

		s.be.set(uri, "v2")
		s.in.awaitEach(t, uri, 1, "a", "b")
		awaitPolls(t, s.be, uri, 4) // room for a second report, which must not come
		s.in.requireEach(t, uri, 1, "a", "b")
		require.Zero(t, s.in.count("c", uri), "c is not subscribed to it")
		require.Zero(t, s.in.count("c", other), "other did not change")
		require.Equal(t, 1, polls(s.w, "changed"))

		s.be.set(uri, "v3")
		s.in.awaitEach(t, uri, 2, "a", "b")
		awaitPolls(t, s.be, uri, 4)
		s.in.requireEach(t, uri, 2, "a", "b")
		require.Equal(t, 2, polls(s.w, "changed"))
	})

	t.Run("a poll that is not modified notifies nobody", func(t *testing.T) {
		s := newSingle(t, testConfig("r1"))
		s.be.etags = true
		s.be.set(uri, "v1")
		subscribe(t, s.w, uri, "a")
		run(t, s.w)

		awaitPolls(t, s.be, uri, 4)
		require.Equal(t, call.Conditional{ETag: `"v1"`}, s.be.cond(uri), "polls after the baseline are conditional")
		require.GreaterOrEqual(t, polls(s.w, "not_modified"), 2)
		require.Zero(t, s.in.total())

		s.be.set(uri, "v2")
		s.in.awaitEach(t, uri, 1, "a")
		awaitPolls(t, s.be, uri, 4)
		s.in.requireEach(t, uri, 1, "a")
		require.Equal(t, call.Conditional{ETag: `"v2"`}, s.be.cond(uri), "the new validators are kept")
		require.Equal(t, 1, polls(s.w, "changed"))
	})

	t.Run("a resource that cannot change is never polled", func(t *testing.T) {
		s := newSingle(t, testConfig("r1"))
		const static = "static:motd"
		s.be.set(uri, "v1")
		s.be.set(static, "v1")
		subscribe(t, s.w, static, "a")
		subscribe(t, s.w, uri, "b") // the test's clock
		run(t, s.w)

		awaitPolls(t, s.be, uri, 8) // several claim ticks
		require.Zero(t, s.be.total(static))
		require.Equal(t, []string{uri}, s.w.Polling())
		require.Empty(t, holder(t, s.lease, pollLease(static)))

		// A change event for it is still delivered; it keeps no poll state.
		s.w.Changed(ctx, static, true)
		s.in.awaitEach(t, static, 1, "a")
		st, err := s.subs.State(ctx, static)
		require.NoError(t, err)
		require.Nil(t, st)
	})

	for name, end := range map[string]func(w *Watcher) error{
		"unsubscribing": func(w *Watcher) error { return w.Unsubscribe(ctx, "a", uri) },
		"dropping":      func(w *Watcher) error { return w.Drop(ctx, "a") },
	} {
		t.Run(name+" the last subscriber stops the polling and releases the lease", func(t *testing.T) {
			s := newSingle(t, testConfig("r1"))
			s.be.set(uri, "v1")
			s.be.set(other, "v1")
			subscribe(t, s.w, uri, "a")
			subscribe(t, s.w, other, "b") // the test's clock
			run(t, s.w)

			require.Eventually(t, func() bool {
				return holder(t, s.lease, pollLease(uri)) == "r1" && slices.Contains(s.w.Polling(), uri) && s.be.total(uri) > 0
			}, hangGuard, tick, "r1 polls %s", uri)
			require.NoError(t, end(s.w))
			require.Eventually(t, func() bool {
				return holder(t, s.lease, pollLease(uri)) == "" && !slices.Contains(s.w.Polling(), uri)
			}, hangGuard, tick, "the poller of %s stops and gives its lease up", uri)

			n := s.be.total(uri)
			awaitPolls(t, s.be, other, 8) // several claim ticks
			require.Equal(t, n, s.be.total(uri), "polled after its last subscriber left")
			require.Empty(t, holder(t, s.lease, pollLease(uri)))
			require.Equal(t, []string{other}, s.w.Polling())
			require.Equal(t, "r1", holder(t, s.lease, pollLease(other)))
		})
	}

	t.Run("stopping Run releases the poll leases", func(t *testing.T) {
		s := newSingle(t, testConfig("r1"))
		s.be.set(uri, "v1")
		subscribe(t, s.w, uri, "a")
		stop := run(t, s.w)
		require.Eventually(t, func() bool { return s.be.total(uri) > 0 }, hangGuard, tick)
		stop()
		require.Empty(t, holder(t, s.lease, pollLease(uri)))
		require.Empty(t, s.w.Polling())
	})
}

// TestStuckPoll: a poll that hangs in the backend while its URI loses its
// last subscriber holds up nothing else; the replica keeps renewing its
// other leases (and its listeners' subscriptions).
func TestStuckPoll(t *testing.T) {
	ctx := context.Background()
	const stuck, other = "res://stuck", "res://other"
	s := newSingle(t, testConfig("r1"))
	s.be.set(stuck, "v1")
	s.be.set(other, "v1")
	hang, hung, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	poll := s.be.poll("r1")
	var hangOnce sync.Once
	s.w.deps.Poll = func(uri string, cond call.Conditional) (Snapshot, error) {
		if uri == stuck {
			select {
			case <-hang:
				hangOnce.Do(func() {
					close(hung)
					<-release
				})
			default:
			}
		}
		return poll(uri, cond)
	}
	subscribe(t, s.w, stuck, "a")
	subscribe(t, s.w, other, "b")
	l, err := s.w.Listen(ctx, []string{"static:x"})
	require.NoError(t, err)
	defer l.Close()
	run(t, s.w)
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock) // before Run's stop, should the test fail
	awaitPolls(t, s.be, stuck, 1)
	close(hang)
	<-hung
	require.NoError(t, s.w.Unsubscribe(ctx, "a", stuck))

	// Past the lease's ttl and the listener's, with the poll still stuck.
	awaitPolls(t, s.be, other, int(2*s.w.listenTTL()/pollEvery)+1)
	require.Equal(t, "r1", holder(t, s.lease, pollLease(other)), "the other lease lapsed behind a stuck poll")
	require.Equal(t, []string{"static:x"}, subsOf(t, s.subs, l.name), "the listener's subscriptions lapsed behind a stuck poll")
	require.Equal(t, []string{other}, s.w.Polling())

	// Once its poll ends the stopped poller polls no more.
	n := s.be.total(stuck)
	s.be.set(stuck, "v2")
	unblock()
	require.Eventually(t, func() bool { return s.be.total(stuck) == n+1 }, hangGuard, tick, "the stuck poll ends")
	awaitPolls(t, s.be, other, 8)
	require.Equal(t, n+1, s.be.total(stuck), "a stopped poller polled again")
	require.Empty(t, holder(t, s.lease, pollLease(stuck)))
	st, err := s.subs.State(ctx, stuck)
	require.NoError(t, err)
	var got state
	require.NoError(t, json.Unmarshal(st, &got))
	require.Equal(t, "sha256:v1", got.Hash, "the stopped poller's last poll is not recorded")
}

// TestPollSteps steps one poller by hand: what each poll records and
// reports, and what a change event (reset) does to the next one.
func TestPollSteps(t *testing.T) {
	ctx := context.Background()
	const uri = "res://items/1"
	for _, etags := range []bool{false, true} {
		t.Run(fmt.Sprintf("etags=%v", etags), func(t *testing.T) {
			s := newSingle(t, testConfig("r1"))
			s.be.etags = etags
			s.be.set(uri, "v1")
			subscribe(t, s.w, uri, "a")
			step := func(want string) {
				t.Helper()
				before := polls(s.w, want)
				s.w.pollOnce(ctx, uri, pollEvery)
				require.Equal(t, before+1, polls(s.w, want), "the poll's outcome")
			}

			// What a poll of unchanged contents is.
			same := "unchanged"
			if etags {
				same = "not_modified"
			}

			step("baseline")
			require.False(t, pending(s.w, uri), "a baseline notifies nobody")
			step(same)
			require.False(t, pending(s.w, uri))

			// A change the backend told of (reset): delivered once; the
			// next poll, unconditional, only records the new state.
			s.be.set(uri, "v2")
			s.w.Changed(ctx, uri, true)
			s.in.awaitEach(t, uri, 1, "a")
			step("baseline")
			require.Equal(t, call.Conditional{}, s.be.cond(uri), "the poll after a reset is unconditional")
			require.False(t, pending(s.w, uri), "the same change reported again")
			step(same)
			require.False(t, pending(s.w, uri))
			s.in.requireEach(t, uri, 1, "a")

			// A change nobody told of: the poll reports it.
			s.be.set(uri, "v3")
			step("changed")
			require.True(t, pending(s.w, uri))
			s.in.awaitEach(t, uri, 2, "a")
			step(same)
			require.False(t, pending(s.w, uri))
			s.in.requireEach(t, uri, 2, "a")
			require.Zero(t, polls(s.w, "error"))
		})
	}

	t.Run("a failed poll records nothing and reports nothing", func(t *testing.T) {
		s := newSingle(t, testConfig("r1"))
		const missing = "res://missing"
		subscribe(t, s.w, missing, "a")
		s.w.pollOnce(ctx, missing, pollEvery)
		require.Equal(t, 1, polls(s.w, "error"))
		st, err := s.subs.State(ctx, missing)
		require.NoError(t, err)
		require.Nil(t, st)
		s.be.set(missing, "v1")
		s.w.pollOnce(ctx, missing, pollEvery)
		require.Equal(t, 1, polls(s.w, "baseline"), "the first poll that succeeds is the baseline")
		require.False(t, pending(s.w, missing))
	})
}

func TestCoalescing(t *testing.T) {
	ctx := context.Background()
	const uri = "static:burst" // changed by events only: no poller in the way

	t.Run("one watcher", func(t *testing.T) {
		s := newSingle(t, testConfig("r1"))
		sids := []string{"a", "b", "c"}
		subscribe(t, s.w, uri, sids...)

		burst([]*Watcher{s.w}, uri, 50)
		s.in.awaitEach(t, uri, 1, sids...)
		require.Eventually(t, func() bool { return !pending(s.w, uri) }, hangGuard, tick)
		require.Empty(t, holder(t, s.lease, notifyLease(uri)), "the window's claim is given up")
		s.in.requireEach(t, uri, 1, sids...)

		// A change after the window opens another.
		s.w.Changed(ctx, uri, false)
		s.in.awaitEach(t, uri, 2, sids...)
		require.Eventually(t, func() bool { return !pending(s.w, uri) }, hangGuard, tick)
		s.in.requireEach(t, uri, 2, sids...)
		require.Equal(t, 2*len(sids), int(testutil.ToFloat64(s.w.updates)))
	})

	t.Run("three watchers sharing Redis", func(t *testing.T) {
		f := newFleet(t, []string{"a", "b", "c"}, nil)
		var sids []string
		for i := range 12 {
			sid := fmt.Sprintf("s%d", i)
			sids = append(sids, sid)
			subscribe(t, f.rs[i%len(f.rs)].w, uri, sid)
		}
		quiet := func() bool {
			for _, m := range f.rs {
				if pending(m.w, uri) {
					return false
				}
			}
			h, err := f.lease.Holder(ctx, notifyLease(uri))
			return err == nil && h == ""
		}

		burst(f.watchers(), uri, 60)
		f.in.awaitEach(t, uri, 1, sids...)
		require.Eventually(t, quiet, hangGuard, tick, "the window closes")
		f.in.requireEach(t, uri, 1, sids...)
		require.Len(t, f.in.deliveredBy(uri), 1, "one replica delivers a window")

		f.rs[1].w.Changed(ctx, uri, false)
		f.in.awaitEach(t, uri, 2, sids...)
		require.Eventually(t, quiet, hangGuard, tick)
		f.in.requireEach(t, uri, 2, sids...)
	})
}

func TestOnePollerPerURI(t *testing.T) {
	ctx := context.Background()
	uris := []string{"res://items/0", "res://items/1", "res://items/2", "res://items/3", "res://items/4"}
	// setup subscribes many sessions to every URI, through every replica,
	// and returns them once each URI has its poller.
	setup := func(t *testing.T) (*fleet, []string, map[string]string) {
		f := newFleet(t, []string{"a", "b", "c"}, nil)
		for _, uri := range uris {
			f.be.set(uri, "v1")
		}
		var sids []string
		for i := range 30 {
			sid := fmt.Sprintf("s%d", i)
			sids = append(sids, sid)
			for _, uri := range uris {
				subscribe(t, f.rs[i%len(f.rs)].w, uri, sid)
			}
		}
		pollers := map[string]string{}
		for _, uri := range uris {
			pollers[uri] = f.awaitPoller(t, uri, nil)
		}
		return f, sids, pollers
	}
	// requireExclusive checks over a few intervals that each URI is polled
	// by its poller alone.
	requireExclusive := func(t *testing.T, f *fleet, pollers map[string]string) {
		t.Helper()
		before := map[string]map[string]int{}
		for _, uri := range uris {
			before[uri] = f.be.byReplica(uri)
		}
		awaitPolls(t, f.be, uris[0], 10)
		for _, uri := range uris {
			after := f.be.byReplica(uri)
			for r, n := range after {
				if r != pollers[uri] {
					require.Equal(t, before[uri][r], n, "%s polled by %s as well as %s", uri, r, pollers[uri])
				}
			}
			require.Greater(t, after[pollers[uri]], before[uri][pollers[uri]], "%s polled by %s", uri, pollers[uri])
			h, err := f.lease.Holder(ctx, pollLease(uri))
			require.NoError(t, err)
			require.Equal(t, pollers[uri], h)
		}
		for _, m := range f.rs {
			var want []string
			for _, uri := range uris {
				if pollers[uri] == m.name {
					want = append(want, uri)
				}
			}
			require.ElementsMatch(t, want, m.w.Polling(), "what %s polls", m.name)
		}
	}
	// takeOver awaits another replica's polls of every URI old polled and
	// checks that each resumed within twice the lease's TTL of cut (the
	// documented bound of a takeover, not a speed goal).
	takeOver := func(t *testing.T, f *fleet, pollers map[string]string, old string, cut time.Time) (moved []string) {
		t.Helper()
		for _, uri := range uris {
			if pollers[uri] != old {
				continue
			}
			next := f.awaitPoller(t, uri, f.be.byReplica(uri), old)
			first, _ := f.be.pollTimes(next, uri)
			t.Logf("%s: %s took over %v after %s stopped (bound %v)", uri, next, first.Sub(cut), old, 2*leaseTTL)
			require.Less(t, first.Sub(cut), 2*leaseTTL, "%s took %s over too late", next, uri)
			pollers[uri] = next
			moved = append(moved, uri)
		}
		return moved
	}
	// changeAll changes every URI and checks that each session hears of
	// each change once, from the URI's poller.
	changeAll := func(t *testing.T, f *fleet, sids []string, pollers map[string]string, version string, n int) {
		t.Helper()
		for _, uri := range uris {
			f.be.set(uri, version)
		}
		for _, uri := range uris {
			f.in.awaitEach(t, uri, n, sids...)
		}
		awaitPolls(t, f.be, uris[0], 4)
		for _, uri := range uris {
			f.in.requireEach(t, uri, n, sids...)
			require.Contains(t, f.in.deliveredBy(uri), pollers[uri])
		}
	}

	t.Run("one replica polls each URI; when it stops another takes over", func(t *testing.T) {
		f, sids, pollers := setup(t)
		requireExclusive(t, f, pollers)
		require.Zero(t, f.in.total(), "nothing changed")
		changeAll(t, f, sids, pollers, "v2", 1)

		old := pollers[uris[0]]
		f.member(old).stop()
		cut := time.Now()
		for _, uri := range uris {
			require.NotEqual(t, old, holder(t, f.lease, pollLease(uri)), "a stopped replica gives its leases up")
		}
		for _, uri := range takeOver(t, f, pollers, old, cut) {
			// The old poller stopped before it gave the lease up.
			_, last := f.be.pollTimes(old, uri)
			first, _ := f.be.pollTimes(pollers[uri], uri)
			require.False(t, first.Before(last), "%s polled by %s after %s took it over", uri, old, pollers[uri])
		}
		requireExclusive(t, f, pollers)
		require.Equal(t, 5*len(sids), f.in.total(), "a takeover reports no change (the poll state is shared)")
		changeAll(t, f, sids, pollers, "v3", 2)
	})

	t.Run("a replica cut off its leases stops and another takes over", func(t *testing.T) {
		f, sids, pollers := setup(t)
		requireExclusive(t, f, pollers)

		old := pollers[uris[0]]
		m := f.member(old)
		require.NoError(t, m.leaseClient.Close())
		cut := time.Now()
		require.Eventually(t, func() bool { return len(m.w.Polling()) == 0 }, hangGuard, tick,
			"a replica whose renewals fail stops polling")
		takeOver(t, f, pollers, old, cut)
		requireExclusive(t, f, pollers)
		require.Zero(t, f.in.total(), "a takeover reports no change")
		changeAll(t, f, sids, pollers, "v2", 1)
	})
}

func TestGoneSessionIsDropped(t *testing.T) {
	ctx := context.Background()
	const uri, other = "static:a", "static:b"
	s := newSingle(t, testConfig("r1"))
	subscribe(t, s.w, uri, "gone", "busy", "ok")
	subscribe(t, s.w, other, "gone", "busy")
	s.in.failFor("gone", fmt.Errorf("append: %w", errGone))
	s.in.failFor("busy", errors.New("push stream busy"))

	s.w.Changed(ctx, uri, false)
	s.in.awaitEach(t, uri, 1, "ok")
	require.Eventually(t, func() bool { return len(subsOf(t, s.subs, SessionSubscriber("gone"))) == 0 }, hangGuard, tick,
		"a gone session's subscriptions are dropped")
	require.Equal(t, []string{uri, other}, subsOf(t, s.subs, SessionSubscriber("busy")), "another error drops nothing")
	require.Equal(t, []string{uri}, subsOf(t, s.subs, SessionSubscriber("ok")))
	require.Equal(t, 1, int(testutil.ToFloat64(s.w.updates)))
}

func TestListen(t *testing.T) {
	ctx := context.Background()

	t.Run("a listener hears a burst once, from another replica", func(t *testing.T) {
		// a polls nothing, so the changes are b's.
		f := newFleet(t, []string{"a", "b"}, func(replica string) func(string) (bool, time.Duration) {
			if replica == "a" {
				return nothingWatched
			}
			return watched
		})
		a, b := f.rs[0].w, f.rs[1].w
		const uri, polled, marker = "static:a", "res://polled", "static:marker"
		f.be.set(polled, "v1")
		l, err := a.Listen(ctx, []string{uri, polled, marker})
		require.NoError(t, err)
		defer l.Close()
		awaitHearing(t, a, b)

		burst([]*Watcher{b}, uri, 30)
		require.Equal(t, []string{uri}, awaitSignal(t, l))
		b.Changed(ctx, marker, false) // after the burst's window
		require.Equal(t, []string{marker}, awaitSignal(t, l), "the burst was heard once")
		require.Empty(t, l.Take())

		// Its subscriptions are polled like a session's: by b.
		require.Eventually(t, func() bool { return slices.Contains(b.Polling(), polled) }, hangGuard, tick)
		require.Empty(t, a.Polling())
		awaitPolls(t, f.be, polled, 2)
		f.be.set(polled, "v2")
		require.Equal(t, []string{polled}, awaitSignal(t, l))
		require.Zero(t, f.in.total(), "a listener is not a session")

		// Close ends its subscriptions, and so the polling.
		l.Close()
		require.Empty(t, subsOf(t, f.subs, l.name))
		require.Eventually(t, func() bool { return len(b.Polling()) == 0 }, hangGuard, tick)
		a.mu.Lock()
		require.Empty(t, a.listeners)
		a.mu.Unlock()
		l.Close() // twice is fine
	})

	t.Run("changes of URIs taken together", func(t *testing.T) {
		s := newSingle(t, testConfig("r1"))
		run(t, s.w)
		awaitHearing(t, s.w, s.w)
		l, err := s.w.Listen(ctx, []string{"static:x", "static:y", "static:z"})
		require.NoError(t, err)
		defer l.Close()
		other, err := s.w.Listen(ctx, []string{"static:z"})
		require.NoError(t, err)
		defer other.Close()

		s.w.Changed(ctx, "static:y", false)
		s.w.Changed(ctx, "static:x", false)
		require.Eventually(t, func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			return len(l.changed) == 2
		}, hangGuard, tick)
		<-l.C()
		got := l.Take()
		slices.Sort(got)
		require.Equal(t, []string{"static:x", "static:y"}, got)
		require.Empty(t, l.Take())
		select {
		case <-other.C():
			t.Fatal("a listener heard a URI it does not listen to")
		default:
		}
	})

	t.Run("a listener's subscriptions last while it is open", func(t *testing.T) {
		s := newSingle(t, testConfig("r1"))
		const uri = "res://clock"
		s.be.set(uri, "v1")
		run(t, s.w)
		l, err := s.w.Listen(ctx, []string{uri, "static:x"})
		require.NoError(t, err)
		defer l.Close()
		// Well past the subscriptions' own ttl: the claim loop refreshes them.
		awaitPolls(t, s.be, uri, int(2*s.w.listenTTL()/pollEvery)+1)
		require.Equal(t, []string{uri, "static:x"}, subsOf(t, s.subs, l.name))
		l.Close()
		require.Empty(t, subsOf(t, s.subs, l.name))
		require.Eventually(t, func() bool { return len(s.w.Polling()) == 0 }, hangGuard, tick)
	})
}
