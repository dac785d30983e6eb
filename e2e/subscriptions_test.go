package e2e

// Resource subscriptions hold for a deployment, not a replica: three gateway
// processes behind the round-robin proxy share one subscription store, poll
// each subscribed REST-backed resource from one replica at a time (and from
// another when that one dies), and deliver one notifications/resources/updated
// per change to a push stream on whichever replica holds it; signed change
// events and 2026-07-28 listen streams work the same across replicas, on
// standalone Redis and on Redis Cluster alike.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// itemsDoc is the watched backend's document: one REST-backed resource
// template, polled every second.
const itemsDoc = `openapi: 3.0.3
info: {title: items, version: "1"}
paths:
  /items/{id}:
    get:
      operationId: getItem
      summary: One item
      x-mcp-resource: {pollInterval: "1s"}
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
        "404":
          description: no such item
`

// subLeaseTTL is the replicas' --subscription-lease-ttl.
const subLeaseTTL = 2 * time.Second

// webhookSecret signs the change events.
const webhookSecret = "e2e-subscriptions-secret"

// quietWait is how long a stream is watched for a notification that must
// not come: over a poll interval and the coalescing window, so a second poll
// reporting the same change, or an event wrongly accepted, would show.
const quietWait = 2 * time.Second

func TestSubscriptionsAcrossReplicas(t *testing.T) {
	for _, kind := range redisKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			redisURL, rdb := kind.redis(t)
			backend := startItemsBackend(t)
			secret := filepath.Join(t.TempDir(), "webhook-secret")
			require.NoError(t, os.WriteFile(secret, []byte(webhookSecret), 0o600))
			env := newReplicaEnv(t, backend.replicaBackend, redisURL, rdb, 3,
				"--subscription-lease-ttl", subLeaseTTL.String(), "--webhook-secret-file", secret)
			// In order: the first two watch only items/1, so the polls
			// metric (not labelled by URI) tells which replica polls it.
			t.Run("update reaches a push stream on another replica", func(t *testing.T) { testUpdateAcrossReplicas(t, env, backend) })
			t.Run("one poller, taken over when it dies", func(t *testing.T) { testOnePoller(t, env, backend) })
			t.Run("signed change events", func(t *testing.T) { testChangeWebhook(t, env) })
			t.Run("2026-07-28 listen stream", func(t *testing.T) { testListenResourceSubscriptions(t, env, backend) })
		})
	}
}

// 1. A session's push stream on one replica, its subscription made on
// another: a change of the item is one notification on the stream.
func testUpdateAcrossReplicas(t *testing.T, env *replicaEnv, backend *itemsBackend) {
	const uri = "rest://api/items/1"
	sid := env.initialize(t, env.proxy.URL)
	stream := env.openPush(t, env.proxy.URL, sid, "")
	defer stream.close()
	subscribe(t, env, env.proxy.URL, sid, uri)
	held, subscribed := env.proxy.lastReplica(sid, http.MethodGet), env.proxy.lastReplica(sid, http.MethodPost)
	require.NotEqual(t, held, subscribed, "the proxy dealt the stream and the subscription to different replicas")

	backend.awaitPolled(t, "/items/1", 1, 10*time.Second)
	changed := time.Now()
	backend.change("1")
	got := awaitUpdates(t, stream, uri, eventWait, quietWait)
	require.Len(t, got, 1, "one notifications/resources/updated for one change: %v", got)
	t.Logf("stream on replica %d, subscription made on replica %d: update %v after the change (then none for %v)",
		held, subscribed, got[0].after(changed), quietWait)
}

// 2. Several sessions subscribed through different replicas: the backend
// sees one replica's polls, not one per session or replica; that replica
// dies and another takes the polling over, and a change still reaches the
// streams on the survivors.
func testOnePoller(t *testing.T, env *replicaEnv, backend *itemsBackend) {
	const uri = "rest://api/items/1"
	n := len(env.addrs)
	streams := make([]*pushStream, n)
	for i := range n {
		sid := env.initialize(t, env.url(i))
		streams[i] = env.openPush(t, env.url(i), sid, "")
		defer streams[i].close()
		subscribe(t, env, env.url((i+1)%n), sid, uri)
	}
	backend.awaitPolled(t, "/items/1", 1, 10*time.Second)

	// A measuring window, not a condition to await: the backend's GETs
	// of the item and each replica's polls over it.
	const window = 5 * time.Second
	before, pollsBefore := backend.gets("/items/1"), env.pollsByReplica(t)
	time.Sleep(window)
	after, pollsAfter := backend.gets("/items/1"), env.pollsByReplica(t)
	gets := after.total - before.total
	var pollers []int
	for i := range n {
		if pollsAfter[i] > pollsBefore[i] {
			pollers = append(pollers, i)
		}
	}
	t.Logf("%d sessions subscribed (plus the first scenario's): backend GETs of /items/1 in %v: %d (%d conditional, %d answered 304); polls by replica before %v, after %v",
		n, window, gets, after.conditional-before.conditional, after.notModified-before.notModified, pollsBefore, pollsAfter)
	require.Positive(t, gets, "the subscribed item is polled")
	require.LessOrEqual(t, gets, 8, "about one GET per 1s poll interval, not one per session or replica")
	require.Positive(t, after.conditional-before.conditional, "polls are conditional (If-None-Match)")
	require.Len(t, pollers, 1, "exactly one replica polls the item (polls by replica before %v, after %v)", pollsBefore, pollsAfter)
	poller := pollers[0]

	env.kill(t, poller)
	killed := time.Now()
	atKill := backend.gets("/items/1").total
	for ev := range streams[poller].events {
		t.Logf("event on the killed replica's stream: %s", ev.data)
	}
	awaitTrue(t, 3*subLeaseTTL, 20*time.Millisecond, func() bool { return backend.gets("/items/1").total > atKill },
		"polling of the item did not resume within 3× the lease TTL after its poller (replica %d) died", poller)
	resumed := time.Since(killed)
	pollsNow := env.pollsByReplica(t)
	t.Logf("killed replica %d (the poller); polling resumed %v later; polls by replica now %v", poller, resumed.Round(time.Millisecond), pollsNow)

	changed := time.Now()
	backend.change("1")
	var wg sync.WaitGroup
	got := make([][]update, n)
	for i := range n {
		if i != poller {
			wg.Go(func() { got[i] = collectUpdates(streams[i], uri, eventWait, quietWait) })
		}
	}
	wg.Wait()
	for i := range n {
		if i == poller {
			continue
		}
		require.Len(t, got[i], 1, "one update on the stream on surviving replica %d: %v", i, got[i])
		t.Logf("stream on surviving replica %d: update %v after the change", i, got[i][0].after(changed))
	}

	// The scenarios that follow run on three replicas again.
	env.restart(t, poller)
}

// 3. POST /webhooks/resources: signed, on any replica, it is 202 and one
// update; unsigned or wrongly signed, 401 and nothing.
func testChangeWebhook(t *testing.T, env *replicaEnv) {
	const uri = "rest://api/items/2"
	body := `{"paths":["/items/2"]}`
	sid := env.initialize(t, env.url(0))
	stream := env.openPush(t, env.url(0), sid, "")
	defer stream.close()
	subscribe(t, env, env.url(1), sid, uri)

	for i, bad := range []struct{ name, signature string }{
		{"unsigned", ""},
		{"signed with another secret", sign("not-the-secret", body)},
		{"a signature of another body", sign(webhookSecret, `{"paths":["/items/1"]}`)},
		{"no sha256= prefix", strings.TrimPrefix(sign(webhookSecret, body), "sha256=")},
	} {
		r := postWebhook(t, env, i%len(env.addrs), body, bad.signature)
		require.Equal(t, http.StatusUnauthorized, r.status, "%s: %s", bad.name, r.body)
	}
	got := collectUpdates(stream, uri, quietWait, 0)
	require.Empty(t, got, "a refused change event notified: %v", got)

	posted := time.Now()
	r := postWebhook(t, env, 2, body, sign(webhookSecret, body))
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	require.JSONEq(t, `{"uris":["`+uri+`"]}`, string(r.body))
	got = awaitUpdates(t, stream, uri, eventWait, quietWait)
	require.Len(t, got, 1, "one update for one signed change event: %v", got)
	t.Logf("signed event on replica 2, subscription made on replica 1, stream on replica 0: update %v after the POST", got[0].after(posted))
}

// 4. A 2026-07-28 subscriptions/listen stream through the proxy: its
// resourceSubscriptions are acknowledged and a change is notified on it
// with its subscription id.
func testListenResourceSubscriptions(t *testing.T, env *replicaEnv, backend *itemsBackend) {
	const uri = "rest://api/items/3"
	const subID = `"listen-3"`
	body := `{"jsonrpc":"2.0","id":` + subID + `,"method":"subscriptions/listen","params":{` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` +
		`"notifications":{"resourceSubscriptions":["` + uri + `"]}}}`
	stream := env.openListen(t, body)
	defer stream.close()

	ack := nextMessage(t, stream, eventWait)
	require.Equal(t, "notifications/subscriptions/acknowledged", ack.Method, "%+v", ack)
	var ackParams struct {
		Meta          map[string]json.RawMessage `json:"_meta"`
		Notifications struct {
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	}
	require.NoError(t, json.Unmarshal(ack.Params, &ackParams), "%s", ack.Params)
	require.JSONEq(t, subID, string(ackParams.Meta["io.modelcontextprotocol/subscriptionId"]), "%s", ack.Params)
	require.Equal(t, []string{uri}, ackParams.Notifications.ResourceSubscriptions, "%s", ack.Params)

	backend.awaitPolled(t, "/items/3", 1, 10*time.Second)
	changed := time.Now()
	backend.change("3")
	got := awaitUpdates(t, stream, uri, eventWait, quietWait)
	require.Len(t, got, 1, "one update for one change: %v", got)
	require.JSONEq(t, subID, string(got[0].subscriptionID), "the update names the listen's subscription: %s", got[0].data)
	t.Logf("listen stream through the proxy (replica %d): acknowledged %v; update %v after the change",
		env.proxy.lastReplica("", http.MethodPost), ackParams.Notifications.ResourceSubscriptions, got[0].after(changed))
}

// itemsBackend serves itemsDoc's API: items with a version each, an ETag
// per version, a 304 to If-None-Match naming the current one; it counts
// the GETs of each path.
type itemsBackend struct {
	*replicaBackend

	mu       sync.Mutex
	versions map[string]int
	counts   map[string]getCounts
}

// getCounts is what the backend saw of one path.
type getCounts struct {
	total, conditional, notModified int
}

func startItemsBackend(t *testing.T) *itemsBackend {
	t.Helper()
	b := &itemsBackend{replicaBackend: &replicaBackend{}, versions: map[string]int{}, counts: map[string]getCounts{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		// Counted and read under one lock: a change made after the count
		// is not in this answer.
		b.mu.Lock()
		v := b.versions[id]
		c := b.counts[r.URL.Path]
		c.total++
		etag := fmt.Sprintf(`"%s-v%d"`, id, v)
		inm := r.Header.Get("If-None-Match")
		if inm != "" {
			c.conditional++
		}
		if inm == etag {
			c.notModified++
		}
		b.counts[r.URL.Path] = c
		b.mu.Unlock()
		w.Header().Set("ETag", etag)
		if inm == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"id":%q,"version":%d,"name":"item %s, version %d"}`, id, v, id, v)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b.URL = srv.URL
	b.doc = filepath.Join(t.TempDir(), "items.yaml")
	require.NoError(t, os.WriteFile(b.doc, []byte(itemsDoc), 0o600))
	return b
}

// change makes a new version of item id.
func (b *itemsBackend) change(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.versions[id]++
}

func (b *itemsBackend) gets(path string) getCounts {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.counts[path]
}

// awaitPolled waits until the backend has seen n GETs of path: the first
// is the poll that records the item's state, so a change after it is one
// the next poll reports.
func (b *itemsBackend) awaitPolled(t *testing.T, path string, n int, within time.Duration) {
	t.Helper()
	awaitTrue(t, within, 10*time.Millisecond, func() bool { return b.gets(path).total >= n },
		"%s was not polled within %v of its subscription", path, within)
}

// subscribe sends resources/subscribe on url and expects an empty result.
func subscribe(t *testing.T, env *replicaEnv, url, sid, uri string) {
	t.Helper()
	r := env.do(t, url, sid, `{"jsonrpc":"2.0","id":"sub","method":"resources/subscribe","params":{"uri":"`+uri+`"}}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	m := onlyResponse(t, r, `"sub"`)
	require.Nil(t, m.Error, "%s", r.body)
	require.JSONEq(t, `{}`, string(m.Result))
}

// lastReplica is the replica the proxy sent the last request of method
// naming sid to (sid "" for requests naming no session), -1 when none.
func (p *rrProxy) lastReplica(sid, method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.seen) - 1; i >= 0; i-- {
		if r := p.seen[i]; r.session == sid && r.method == method {
			return r.replica
		}
	}
	return -1
}

// pollsByReplica is each live replica's mcpgw_resource_polls_total, all
// outcomes summed (-1 for a replica that is not running).
func (e *replicaEnv) pollsByReplica(t *testing.T) []float64 {
	t.Helper()
	out := make([]float64, len(e.addrs))
	for i := range e.addrs {
		select {
		case <-e.proc(i).exited:
			out[i] = -1
			continue
		default:
		}
		for series, v := range scrapeMetrics(t, e, i) {
			if strings.HasPrefix(series, "mcpgw_resource_polls_total{") {
				out[i] += v
			}
		}
	}
	return out
}

// sign is the X-Signature-256 value of body under secret.
func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// postWebhook posts a change event to replica i, signed with signature
// (none when empty).
func postWebhook(t *testing.T, env *replicaEnv, i int, body, signature string) *rawResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, env.base(i)+"/webhooks/resources", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if signature != "" {
		req.Header.Set("X-Signature-256", signature)
	}
	r, err := env.roundTrip(req)
	require.NoError(t, err)
	return r
}

// openListen POSTs a 2026-07-28 subscriptions/listen through the proxy and
// reads its SSE answer in the background.
func (e *replicaEnv) openListen(t *testing.T, body string) *pushStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.proxy.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	return e.openStream(t, req, cancel, "subscriptions/listen", true)
}

// nextMessage is the stream's next event as a JSON-RPC message.
func nextMessage(t *testing.T, s *pushStream, d time.Duration) rpcMessage {
	t.Helper()
	ev := s.next(t, d)
	var m rpcMessage
	require.NoError(t, json.Unmarshal([]byte(ev.data), &m), "%s", ev.data)
	return m
}

// update is one notifications/resources/updated a stream carried.
type update struct {
	at             time.Time
	data           string
	subscriptionID json.RawMessage // params._meta's, on a listen stream
}

func (u update) after(t time.Time) time.Duration { return u.at.Sub(t).Round(time.Millisecond) }

func (u update) String() string { return u.data }

// collectUpdates reads s for the updates of uri: until the first comes or
// first passes, then for quiet more. Other events are skipped; a stream
// that ends stops the reading.
func collectUpdates(s *pushStream, uri string, first, quiet time.Duration) []update {
	var out []update
	deadline := time.After(first)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return out
			}
			var m struct {
				Method string `json:"method"`
				Params struct {
					URI  string                     `json:"uri"`
					Meta map[string]json.RawMessage `json:"_meta"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(ev.data), &m) != nil || m.Method != "notifications/resources/updated" || m.Params.URI != uri {
				continue
			}
			out = append(out, update{at: time.Now(), data: ev.data, subscriptionID: m.Params.Meta["io.modelcontextprotocol/subscriptionId"]})
			if len(out) == 1 {
				deadline = time.After(quiet)
			}
		case <-deadline:
			return out
		}
	}
}

// awaitUpdates is collectUpdates that fails the test when no update comes.
func awaitUpdates(t *testing.T, s *pushStream, uri string, first, quiet time.Duration) []update {
	t.Helper()
	got := collectUpdates(s, uri, first, quiet)
	require.NotEmpty(t, got, "no notifications/resources/updated for %s within %v", uri, first)
	return got
}
