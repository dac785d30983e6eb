package watch

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/mcp-gateway/internal/lograte"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/pubsub/lease"
	"github.com/mcp-gateway/mcp-gateway/sessions/subscriptions"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// Config is the watcher's configuration. Zero values take the defaults
// noted on each field.
type Config struct {
	// Replica names this replica in leases and listen subscriptions; it
	// must differ between replicas. Empty means a random name.
	Replica string
	// PollInterval is how often a subscribed resource is polled, unless
	// it says otherwise (x-mcp-resource.pollInterval). Zero means 30s.
	PollInterval time.Duration
	// LeaseTTL is how long a replica's claim to poll a URI lasts without
	// renewal (renewed every third of it): a dead replica's URIs move to
	// another within twice this. Zero means 15s.
	LeaseTTL time.Duration
	// Coalesce is the window in which changes of one URI make one
	// notification. Zero means 250ms.
	Coalesce time.Duration
	// StoreTimeout bounds each store call of the background loops. Zero
	// means 1s.
	StoreTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Replica == "" {
		c.Replica = "r" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 30 * time.Second
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 15 * time.Second
	}
	if c.Coalesce <= 0 {
		c.Coalesce = 250 * time.Millisecond
	}
	if c.StoreTimeout <= 0 {
		c.StoreTimeout = time.Second
	}
	return c
}

// Snapshot is one poll of a resource: its validators and a hash of its
// contents (or that the backend has it no more).
type Snapshot struct {
	NotModified        bool
	ETag, LastModified string
	Hash               string
}

// Deps are the parts the watcher uses.
type Deps struct {
	Subs  subscriptions.Store
	Lease lease.Lease
	Bus   pubsub.Bus
	// Poll reads uri for change detection, conditionally when cond has
	// validators.
	Poll func(uri string, cond call.Conditional) (Snapshot, error)
	// Watched reports whether uri's contents can change (only those are
	// polled) and how often to poll it (zero: Config.PollInterval).
	Watched func(uri string) (bool, time.Duration)
	// Deliver sends notifications/resources/updated for uri to the
	// session sid's push stream. An error satisfying IsGone (the session
	// ended) drops the session's subscriptions.
	Deliver func(ctx context.Context, sid, uri string) error
	// IsGone reports whether Deliver's error means the session is gone.
	IsGone func(error) bool
	Logger *slog.Logger
	// Metrics, when set, receives the watcher's collectors.
	Metrics prometheus.Registerer
}

// Subscriber names: a session, or a listen stream of one replica.
const (
	sessionPrefix = "s:"
	listenPrefix  = "l:"
	updatedTopic  = "resources:updated"
)

// SessionSubscriber is the subscription store's name for a session.
func SessionSubscriber(sid string) string { return sessionPrefix + sid }

// Watcher is one replica's part. Create it with New and call Run.
type Watcher struct {
	cfg  Config
	deps Deps
	log  *slog.Logger

	mu         sync.Mutex
	pollers    map[string]*poller // URIs this replica polls
	polling    sync.WaitGroup     // the pollers' goroutines, stopped ones included
	delivering sync.WaitGroup     // the coalescing windows not yet delivered
	pending    map[string]bool    // URIs whose delivery this replica claimed
	listeners  map[string]map[*Listener]struct{}
	nextID     atomic.Uint64

	logLimit lograte.Limiter
	polls    *prometheus.CounterVec
	updates  prometheus.Counter
}

// New returns a watcher; Run starts its loops.
func New(cfg Config, deps Deps) *Watcher {
	w := &Watcher{
		cfg: cfg.withDefaults(), deps: deps, log: deps.Logger,
		pollers: map[string]*poller{}, pending: map[string]bool{}, listeners: map[string]map[*Listener]struct{}{},
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_resource_polls_total",
			Help: "Change polls of subscribed resources by this replica, by outcome: unchanged, not_modified, changed, baseline, error.",
		}, []string{"outcome"}),
		updates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpgw_resource_updates_total",
			Help: "notifications/resources/updated sent to sessions by this replica.",
		}),
	}
	if w.log == nil {
		w.log = slog.Default()
	}
	if deps.Metrics != nil {
		// Count the leases rather than label them: subscribed URIs are
		// the clients' choice, unbounded.
		held := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcpgw_resource_poll_leases_held",
			Help: "Subscribed resources this replica holds the poll lease of (and polls).",
		}, func() float64 {
			w.mu.Lock()
			defer w.mu.Unlock()
			return float64(len(w.pollers))
		})
		deps.Metrics.MustRegister(w.polls, w.updates, held)
	}
	return w
}

// Replica is this replica's name.
func (w *Watcher) Replica() string { return w.cfg.Replica }

func (w *Watcher) store(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, w.cfg.StoreTimeout)
}

func (w *Watcher) warn(msg string, args ...any) {
	if ok, held := w.logLimit.Allow(msg, time.Now()); ok {
		if held > 0 {
			args = append(args, "held_back", held)
		}
		w.log.Warn(msg, args...)
	}
}

// Subscribe adds a session's subscription, kept for ttl unless refreshed
// (Refresh, when the session is used).
func (w *Watcher) Subscribe(ctx context.Context, sid, uri string, ttl time.Duration) error {
	return w.deps.Subs.Add(ctx, SessionSubscriber(sid), uri, ttl)
}

// Unsubscribe removes a session's subscription.
func (w *Watcher) Unsubscribe(ctx context.Context, sid, uri string) error {
	return w.deps.Subs.Remove(ctx, SessionSubscriber(sid), uri)
}

// Refresh keeps a live session's subscriptions for another ttl.
func (w *Watcher) Refresh(ctx context.Context, sid string, ttl time.Duration) error {
	return w.deps.Subs.Refresh(ctx, SessionSubscriber(sid), ttl)
}

// Drop removes every subscription of an ended session.
func (w *Watcher) Drop(ctx context.Context, sid string) error {
	return w.deps.Subs.RemoveAll(ctx, SessionSubscriber(sid))
}

// Run polls and delivers until ctx ends; then it gives up its leases.
func (w *Watcher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { w.hear(ctx) })
	tick := time.NewTicker(w.cfg.LeaseTTL / 3)
	defer tick.Stop()
	for {
		w.claim(ctx)
		select {
		case <-ctx.Done():
			w.stopAll()
			return
		case <-tick.C:
		}
	}
}

// claim renews this replica's listen subscriptions, then takes or renews
// the poll lease of every subscribed URI that can change, starting a
// poller for each one held and stopping those it lost or nobody wants.
func (w *Watcher) claim(ctx context.Context) {
	w.refreshListeners(ctx)
	sctx, cancel := w.store(ctx)
	uris, err := w.deps.Subs.URIs(sctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			w.warn("listing subscribed resources failed", "err", err)
		}
		return // keep polling what is held: the leases lapse if this lasts
	}
	// Renewals first (a URI this replica polls), then the others, several
	// at a time: one slow round trip must not make the held leases lapse.
	w.mu.Lock()
	slices.SortStableFunc(uris, func(a, b string) int {
		_, pa := w.pollers[a]
		_, pb := w.pollers[b]
		switch {
		case pa && !pb:
			return -1
		case pb && !pa:
			return 1
		}
		return 0
	})
	w.mu.Unlock()
	var (
		wantMu sync.Mutex
		want   = make(map[string]bool, len(uris))
		wg     sync.WaitGroup
		slots  = make(chan struct{}, claimParallel)
	)
	for _, uri := range uris {
		watched, interval := w.deps.Watched(uri)
		if !watched {
			continue
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			sctx, cancel := w.store(ctx)
			held, err := w.deps.Lease.Acquire(sctx, pollLease(uri), w.cfg.Replica, w.cfg.LeaseTTL)
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					w.warn("taking a poll lease failed", "err", err)
				}
				// Keep polling what is surely still held (a blip), not
				// past half the lease: by its end another replica may.
				w.mu.Lock()
				p, ok := w.pollers[uri]
				held = ok && time.Since(p.renewed) < w.cfg.LeaseTTL/2
				w.mu.Unlock()
				if !held {
					return
				}
				wantMu.Lock()
				want[uri] = true
				wantMu.Unlock()
				return
			}
			if held {
				wantMu.Lock()
				want[uri] = true
				wantMu.Unlock()
				w.startPoller(ctx, uri, interval)
			}
		})
	}
	wg.Wait()
	w.mu.Lock()
	var stop []*poller
	for uri, p := range w.pollers {
		if !want[uri] {
			stop = append(stop, p)
			delete(w.pollers, uri)
		}
	}
	w.mu.Unlock()
	for _, p := range stop {
		// Not waited for: Poll takes no context, and a poll stuck in the
		// backend would hold up every renewal above until the leases
		// lapsed. The poller gives its lease up when it ends.
		p.cancel()
	}
}

// claimParallel bounds the lease calls of one claim in flight.
const claimParallel = 16

func pollLease(uri string) string   { return "poll:" + uri }
func notifyLease(uri string) string { return "notify:" + uri }

func (w *Watcher) stopAll() {
	w.mu.Lock()
	ps := w.pollers
	w.pollers = map[string]*poller{}
	w.mu.Unlock()
	for _, p := range ps {
		p.cancel()
	}
	w.polling.Wait()    // each gives its lease up as it ends
	w.delivering.Wait() // windows still open deliver (within Coalesce)
}

// Polling reports the URIs this replica polls now (tests, debugging).
func (w *Watcher) Polling() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.pollers))
	for uri := range w.pollers {
		out = append(out, uri)
	}
	return out
}

// poller polls one URI every interval while its replica holds the lease.
type poller struct {
	uri    string
	cancel context.CancelFunc
	// renewed is when its lease was last taken or renewed (under w.mu).
	renewed time.Time
}

// release gives an ended poller's lease up, unless a newer poller of its
// URI (started while its last poll was in flight) holds it now.
func (w *Watcher) release(p *poller) {
	w.mu.Lock()
	newer, ok := w.pollers[p.uri]
	w.mu.Unlock()
	if ok && newer != p {
		return
	}
	ctx, cancel := w.store(context.Background())
	_ = w.deps.Lease.Release(ctx, pollLease(p.uri), w.cfg.Replica)
	cancel()
}

func (w *Watcher) startPoller(ctx context.Context, uri string, interval time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p, ok := w.pollers[uri]; ok {
		p.renewed = time.Now()
		return
	}
	if interval <= 0 {
		interval = w.cfg.PollInterval
	}
	pctx, cancel := context.WithCancel(ctx)
	p := &poller{uri: uri, cancel: cancel, renewed: time.Now()}
	w.pollers[uri] = p
	w.polling.Go(func() {
		defer w.release(p)
		t := time.NewTicker(interval)
		defer t.Stop()
		// Checked first: a tick that came while a poll was in flight
		// must not win the select below against the cancellation.
		for pctx.Err() == nil {
			w.pollOnce(pctx, uri, interval)
			select {
			case <-pctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// state is what the store keeps of a URI's last poll. Reset: a change
// event was delivered without a poll, so the next poll only records.
type state struct {
	ETag         string `json:"e,omitempty"`
	LastModified string `json:"m,omitempty"`
	Hash         string `json:"h,omitempty"`
	Reset        bool   `json:"r,omitempty"`
	// At is when it was written (Unix seconds): a state older than a
	// quarter of its TTL is written again, so it never lapses while polled.
	At int64 `json:"t,omitempty"`
}

// stale reports whether st should be written again to keep it.
func (st *state) stale(interval time.Duration) bool {
	return time.Since(time.Unix(st.At, 0)) > stateTTL(interval)/4
}

// stateTTL keeps a URI's state well past the polls that read it.
func stateTTL(interval time.Duration) time.Duration { return max(10*interval, time.Hour) }

func (w *Watcher) pollOnce(ctx context.Context, uri string, interval time.Duration) {
	sctx, cancel := w.store(ctx)
	raw, err := w.deps.Subs.State(sctx, uri)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			w.warn("reading a resource's poll state failed", "err", err)
		}
		return
	}
	var old *state
	if raw != nil {
		old = &state{}
		if json.Unmarshal(raw, old) != nil {
			old = nil
		}
	}
	var cond call.Conditional
	if old != nil && !old.Reset {
		cond = call.Conditional{ETag: old.ETag, LastModified: old.LastModified}
	}
	snap, err := w.deps.Poll(uri, cond)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		w.polls.WithLabelValues("error").Inc()
		w.warn("polling a subscribed resource failed", "uri", uri, "err", err)
		return
	}
	if snap.NotModified {
		w.polls.WithLabelValues("not_modified").Inc()
		if old == nil || !old.stale(interval) {
			return
		}
		snap.Hash = old.Hash // unchanged: keep it, with a fresh expiry
	}
	next := state{ETag: snap.ETag, LastModified: snap.LastModified, Hash: snap.Hash, At: time.Now().Unix()}
	changed := old != nil && !old.Reset && old.Hash != snap.Hash
	switch {
	case changed:
		w.polls.WithLabelValues("changed").Inc()
	case old == nil || old.Reset:
		w.polls.WithLabelValues("baseline").Inc()
	default:
		if !snap.NotModified {
			w.polls.WithLabelValues("unchanged").Inc()
		}
		if old.ETag == next.ETag && old.LastModified == next.LastModified && old.Hash == next.Hash && !old.stale(interval) {
			return
		}
	}
	enc, _ := json.Marshal(next) // strings: cannot fail
	sctx, cancel = w.store(ctx)
	err = w.deps.Subs.SetState(sctx, uri, enc, stateTTL(interval))
	cancel()
	if err != nil {
		w.warn("storing a resource's poll state failed", "err", err)
		return // without the new state, the next poll would report it again
	}
	if changed {
		w.Changed(ctx, uri, false)
	}
}

// Seed records snap as uri's poll state when it has none (a subscriber
// just read it): the first poll then reports a change since, instead of
// only recording. A store failure is logged; the first poll records.
func (w *Watcher) Seed(ctx context.Context, uri string, snap Snapshot) {
	watched, interval := w.deps.Watched(uri)
	if !watched {
		return
	}
	raw, err := w.deps.Subs.State(ctx, uri)
	if err != nil || raw != nil {
		return
	}
	enc, _ := json.Marshal(state{ETag: snap.ETag, LastModified: snap.LastModified, Hash: snap.Hash, At: time.Now().Unix()})
	if err := w.deps.Subs.SetState(ctx, uri, enc, stateTTL(max(interval, w.cfg.PollInterval))); err != nil {
		w.warn("storing a resource's poll state failed", "err", err)
	}
}

// Changed reports that uri changed: its subscribers hear of it once per
// Coalesce window, from whichever replica claimed the window. reset (a
// change event from the backend) makes the next poll record the URI's new
// state instead of reporting the same change again.
func (w *Watcher) Changed(ctx context.Context, uri string, reset bool) {
	ctx = context.WithoutCancel(ctx)
	if reset {
		if watched, interval := w.deps.Watched(uri); watched {
			enc, _ := json.Marshal(state{Reset: true})
			sctx, cancel := w.store(ctx)
			if err := w.deps.Subs.SetState(sctx, uri, enc, stateTTL(max(interval, w.cfg.PollInterval))); err != nil {
				w.warn("storing a resource's poll state failed", "err", err)
			}
			cancel()
		}
	}
	w.mu.Lock()
	if w.pending[uri] {
		w.mu.Unlock()
		return // this replica's window is open: it carries this change too
	}
	w.pending[uri] = true
	w.mu.Unlock()
	sctx, cancel := w.store(ctx)
	claimed, err := w.deps.Lease.Acquire(sctx, notifyLease(uri), w.cfg.Replica, 2*w.cfg.Coalesce+w.cfg.StoreTimeout)
	cancel()
	if err != nil || !claimed {
		if err != nil {
			w.warn("claiming a resource's notification failed; notifying without coalescing", "err", err)
			claimed = true
		}
		if !claimed {
			// Another replica's window is open and carries it.
			w.mu.Lock()
			delete(w.pending, uri)
			w.mu.Unlock()
			return
		}
	}
	w.delivering.Add(1)
	time.AfterFunc(w.cfg.Coalesce, func() {
		defer w.delivering.Done()
		w.deliver(ctx, uri)
	})
}

// deliver ends uri's window: it gives the claim up (a change from now on
// opens a new window) and notifies every subscriber of a change the
// window's notification carries (a client reads the resource after it).
func (w *Watcher) deliver(ctx context.Context, uri string) {
	sctx, cancel := w.store(ctx)
	_ = w.deps.Lease.Release(sctx, notifyLease(uri), w.cfg.Replica)
	cancel()
	w.mu.Lock()
	delete(w.pending, uri)
	w.mu.Unlock()
	sctx, cancel = w.store(ctx)
	subs, err := w.deps.Subs.Subscribers(sctx, uri)
	cancel()
	if err != nil {
		w.warn("listing a resource's subscribers failed; its update is lost", "uri", uri, "err", err)
		return
	}
	listeners := false
	for _, sub := range subs {
		sid, ok := strings.CutPrefix(sub, sessionPrefix)
		if !ok {
			listeners = listeners || strings.HasPrefix(sub, listenPrefix)
			continue
		}
		sctx, cancel := w.store(ctx)
		err := w.deps.Deliver(sctx, sid, uri)
		cancel()
		switch {
		case err == nil:
			w.updates.Inc()
		case w.deps.IsGone != nil && w.deps.IsGone(err):
			sctx, cancel := w.store(ctx)
			_ = w.deps.Subs.RemoveAll(sctx, sub)
			cancel()
		default:
			w.warn("delivering a resource update failed", "err", err)
		}
	}
	if listeners {
		sctx, cancel := w.store(ctx)
		if err := w.deps.Bus.Publish(sctx, updatedTopic, []byte(uri)); err != nil {
			w.warn("publishing a resource update failed", "err", err)
		}
		cancel()
	}
}

// Listener is one listen stream's resource subscriptions on this
// replica.
type Listener struct {
	w    *Watcher
	name string
	uris []string
	once sync.Once

	mu      sync.Mutex
	changed []string // in the order they came; each once
	signal  chan struct{}
}

// C receives when URIs changed; Take says which. Changes of a URI not yet
// taken are one.
func (l *Listener) C() <-chan struct{} { return l.signal }

// Take returns the URIs that changed since the last Take.
func (l *Listener) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.changed
	l.changed = nil
	return out
}

func (l *Listener) notify(uri string) {
	l.mu.Lock()
	if !slices.Contains(l.changed, uri) {
		l.changed = append(l.changed, uri)
	}
	l.mu.Unlock()
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

// listenTTL is how long a listen stream's subscriptions outlive the
// replica that stops refreshing them.
func (w *Watcher) listenTTL() time.Duration { return 3 * w.cfg.LeaseTTL }

// Listen subscribes a listen stream to uris (polled like any
// subscription) until Close.
func (w *Watcher) Listen(ctx context.Context, uris []string) (*Listener, error) {
	l := &Listener{w: w, name: listenPrefix + w.cfg.Replica + ":" + strconv.FormatUint(w.nextID.Add(1), 36),
		uris: uris, signal: make(chan struct{}, 1)}
	for _, uri := range uris {
		if err := w.deps.Subs.Add(ctx, l.name, uri, w.listenTTL()); err != nil {
			_ = w.deps.Subs.RemoveAll(context.WithoutCancel(ctx), l.name)
			return nil, err
		}
	}
	w.mu.Lock()
	for _, uri := range uris {
		set := w.listeners[uri]
		if set == nil {
			set = map[*Listener]struct{}{}
			w.listeners[uri] = set
		}
		set[l] = struct{}{}
	}
	w.mu.Unlock()
	return l, nil
}

// Close ends the listener's subscriptions.
func (l *Listener) Close() {
	l.once.Do(func() {
		w := l.w
		w.mu.Lock()
		for _, uri := range l.uris {
			if set := w.listeners[uri]; set != nil {
				delete(set, l)
				if len(set) == 0 {
					delete(w.listeners, uri)
				}
			}
		}
		w.mu.Unlock()
		ctx, cancel := w.store(context.Background())
		defer cancel()
		if err := w.deps.Subs.RemoveAll(ctx, l.name); err != nil {
			w.warn("removing a listen stream's subscriptions failed (they lapse)", "err", err)
		}
	})
}

func (w *Watcher) refreshListeners(ctx context.Context) {
	w.mu.Lock()
	seen := map[*Listener]bool{}
	for _, set := range w.listeners {
		for l := range set {
			seen[l] = true
		}
	}
	w.mu.Unlock()
	for l := range seen {
		sctx, cancel := w.store(ctx)
		err := w.deps.Subs.Refresh(sctx, l.name, w.listenTTL())
		var have []string
		if err == nil {
			// After a store outage longer than the TTL the subscriptions
			// lapsed (Refresh keeps only the live): put those back.
			have, err = w.deps.Subs.Of(sctx, l.name)
		}
		cancel()
		for _, uri := range l.uris {
			if err != nil || slices.Contains(have, uri) {
				continue
			}
			sctx, cancel := w.store(ctx)
			err = w.deps.Subs.Add(sctx, l.name, uri, w.listenTTL())
			cancel()
		}
		if err != nil && ctx.Err() == nil {
			w.warn("refreshing a listen stream's subscriptions failed", "err", err)
		}
	}
}

// hear passes the bus's resource updates to this replica's listeners.
func (w *Watcher) hear(ctx context.Context) {
	for ctx.Err() == nil {
		sub, err := w.deps.Bus.Subscribe(ctx, updatedTopic)
		if err != nil {
			if errors.Is(err, pubsub.ErrClosed) {
				return
			}
			w.warn("subscribing to resource updates failed", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		for msg := range sub.C() {
			uri := string(msg)
			w.mu.Lock()
			for l := range w.listeners[uri] {
				l.notify(uri)
			}
			w.mu.Unlock()
		}
		sub.Close()
	}
}
