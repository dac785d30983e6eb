package e2e

// Live document reload holds for a deployment: three replicas re-read an
// OpenAPI document served by URL (one of them per interval, by lease),
// every replica switches to a changed version, and each open stream hears
// of it once, when every replica serves it; a reload that changes nothing,
// or a document that does not load, changes nothing. A SIGHUP to one
// replica reloads a file-based document on all of them.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

// reloadInterval is the replicas' --openapi-reload-interval.
const reloadInterval = time.Second

// reloadWait bounds the wait for every replica to serve a new version: a
// fetch interval, the 2s check, and a margin for a loaded machine.
const reloadWait = 15 * time.Second

// reloadQuiet is how long streams are watched for a notification that must
// not come: over two checks and several fetch intervals.
const reloadQuiet = 4 * time.Second

// reloadDoc is an OpenAPI document with one GET operation per name, each on
// a path of its own; description changes the bytes and nothing a tool shows.
func reloadDoc(description string, operations ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "openapi: 3.0.3\ninfo: {title: reload, version: \"1\", description: %q}\npaths:\n", description)
	for _, op := range operations {
		fmt.Fprintf(&b, `  /op/%[1]s:
    get:
      operationId: %[1]s
      summary: The %[1]s operation
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
`, op)
	}
	return b.String()
}

// The versions the URL-based document goes through.
var (
	reloadV1         = reloadDoc("first", "listItems", "getItem")
	reloadV2         = reloadDoc("first", "listItems", "fetchItem", "createItem") // getItem renamed, createItem added
	reloadV2SameTool = reloadDoc("second", "listItems", "fetchItem", "createItem")
	reloadV3         = reloadDoc("second", "listItems", "createItem") // fetchItem removed
	reloadBroken     = "openapi: 3.0.3\ninfo: {title: reload, version: '1'}\npaths:\n  /op/x:\n    get: [unclosed\n"
)

func TestDocumentReloadAcrossReplicas(t *testing.T) {
	redisSrv := redistest.Standalone(t)
	t.Run("by interval from a URL", func(t *testing.T) {
		t.Parallel()
		testReloadByInterval(t, redisSrv.URL, redisSrv.Client(t))
	})
	t.Run("SIGHUP with a file", func(t *testing.T) {
		t.Parallel()
		testReloadBySIGHUP(t, redisSrv.URL, redisSrv.Client(t))
	})
}

func testReloadByInterval(t *testing.T, redisURL string, rdb redis.UniversalClient) {
	began := time.Now()
	docs := startReloadDocServer(t, reloadV1)
	backend := startReloadBackend(t)
	backend.doc = docs.URL
	env := newReplicaEnv(t, backend, redisURL, rdb, 3, "--openapi-reload-interval", reloadInterval.String())
	t.Cleanup(func() { logReloadLines(t, env) })
	t.Logf("three replicas up %v after the start", time.Since(began).Round(time.Millisecond))

	lister := env.initialize(t, env.proxy.URL)
	t.Run("before: the original tools on every replica", func(t *testing.T) {
		for range 6 { // two rounds of the proxy's three replicas
			names, _ := reloadTools(t, env, env.proxy.URL, lister)
			requireReloadTools(t, names, []string{"listItems", "getItem"}, []string{"fetchItem", "createItem"}, "through the proxy")
		}
		require.Len(t, env.proxy.replicasFor(lister), 3, "tools/list reached every replica: %v", env.proxy.replicasFor(lister))
		for i := range env.addrs {
			names, _ := reloadTools(t, env, env.url(i), lister)
			requireReloadTools(t, names, []string{"listItems", "getItem"}, []string{"fetchItem", "createItem"}, "replica %d", i)
		}
	})

	// The streams, open for every scenario: one session per replica with
	// its push stream there; one session with two push streams at once, on
	// two replicas (it hears of a version once, on the newest stream B: one
	// message, one stream; the older A carries nothing while B is open); a
	// 2026-07-28 listen stream asking for every list change.
	var streams []*listChanges
	for i := range env.addrs {
		sid := env.initialize(t, env.proxy.URL)
		streams = append(streams, watchListChanges(fmt.Sprintf("session %s… push stream on replica %d", sid[:8], i),
			env.openPush(t, env.url(i), sid, "")))
	}
	shared := env.initialize(t, env.proxy.URL)
	sharedA := watchListChanges(fmt.Sprintf("session %s… stream A on replica 1", shared[:8]), env.openPush(t, env.url(1), shared, ""))
	streams = append(streams,
		watchListChanges(fmt.Sprintf("session %s… stream B on replica 2 (the newest)", shared[:8]), env.openPush(t, env.url(2), shared, "")))
	listen := env.openListen(t, `{"jsonrpc":"2.0","id":"reload-listen","method":"subscriptions/listen","params":{`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},`+
		`"notifications":{"toolsListChanged":true,"resourcesListChanged":true,"promptsListChanged":true}}}`)
	ack := nextMessage(t, listen, eventWait)
	require.Equal(t, "notifications/subscriptions/acknowledged", ack.Method, "%+v", ack)
	require.Contains(t, string(ack.Params), `"toolsListChanged":true`, "%s", ack.Params)
	streams = append(streams, watchListChanges(fmt.Sprintf("listen stream on replica %d", env.proxy.lastReplica("", http.MethodPost)), listen))
	t.Cleanup(func() {
		if t.Failed() {
			for _, s := range append(streams, sharedA) {
				t.Logf("%s:%s", s.name, s.describe())
			}
		}
	})
	require.Len(t, streams, 5)
	resourcesBefore := reloadResources(t, env, env.url(0), lister)

	// Each stream's notification, and which replicas still listed the old
	// tools at that moment, for every version the streams are told of.
	var told []toldReplicas
	t.Run("a changed document reaches every replica, one list_changed per stream", func(t *testing.T) {
		base := totals(streams)
		changed := time.Now()
		docs.set(reloadV2)
		told = append(told, awaitTold(t, env, lister, streams, base, changed, "V2", func(names []string) bool {
			return slices.Contains(names, "fetchItem")
		})...)

		// Every replica serves the new tools (asked directly).
		switched := make([]time.Duration, len(env.addrs))
		for i := range env.addrs {
			awaitTrue(t, reloadWait, 20*time.Millisecond, func() bool {
				names, _ := reloadTools(t, env, env.url(i), lister)
				return slices.Contains(names, "fetchItem")
			}, "replica %d never served the new document", i)
			switched[i] = time.Since(changed)
			names, _ := reloadTools(t, env, env.url(i), lister)
			requireReloadTools(t, names, []string{"listItems", "fetchItem", "createItem"}, []string{"getItem"}, "replica %d", i)
			call := env.do(t, env.url(i), lister, `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"createItem","arguments":{}}}`)
			require.Nil(t, onlyResponse(t, call, `"c"`).Error, "%s", call.body)
			require.NotContains(t, string(call.body), `"isError":true`, "the new tool calls the backend on replica %d: %s", i, call.body)
			gone := onlyResponse(t, env.do(t, env.url(i), lister, `{"jsonrpc":"2.0","id":"g","method":"tools/call","params":{"name":"getItem","arguments":{}}}`), `"g"`)
			require.True(t, gone.Error != nil || strings.Contains(string(gone.Result), `"isError":true`), "the renamed tool is gone on replica %d: %+v", i, gone)
		}
		t.Logf("every replica serves the new tools (seen by then: %v)", roundAll(switched))

		// No second notification, on any stream, for the same version.
		time.Sleep(reloadQuiet / 2)
		resourcesAfter := reloadResources(t, env, env.url(0), lister)
		wantResources := 0
		if resourcesAfter != resourcesBefore {
			wantResources = 1
		}
		for i, s := range streams {
			got := s.since(base[i])
			require.Equal(t, 1, got["notifications/tools/list_changed"], "%s: %v", s.name, s.all())
			require.Equal(t, wantResources, got["notifications/resources/list_changed"], "%s (resources changed: %v): %v", s.name, wantResources == 1, s.all())
			require.Zero(t, got["notifications/prompts/list_changed"], "%s: no prompts to change: %v", s.name, s.all())
		}
		require.Empty(t, sharedA.all(), "%s: the older stream of the shared session carries nothing while the newer one is open", sharedA.name)
		listenChanges := streams[len(streams)-1].all()
		require.NotEmpty(t, listenChanges)
		require.JSONEq(t, `"reload-listen"`, string(listenChanges[0].subscriptionID), "the listen stream's notification names its subscription: %s", listenChanges[0].data)
	})

	t.Run("one replica fetches per interval", func(t *testing.T) {
		from := docs.snapshot()
		window := 5 * time.Second
		time.Sleep(window)
		got := docs.snapshot().since(from)
		t.Logf("document GETs in %v: %d (%d conditional, %d answered 304) over %d connections", window, got.total, got.conditional, got.notModified, len(got.remotes))
		require.GreaterOrEqual(t, got.total, 2, "the document is still re-read")
		require.LessOrEqual(t, got.total, 8, "one replica re-reads per %v, not each of the three", reloadInterval)
		require.Equal(t, got.total, got.conditional, "the document is re-read with conditional GETs")
		require.Positive(t, got.notModified, "an unchanged document is answered 304")
	})

	t.Run("the same bytes again change nothing", func(t *testing.T) {
		base := totals(streams)
		from := docs.snapshot()
		docs.set(reloadV2) // a new ETag, the same bytes
		awaitTrue(t, reloadWait, 20*time.Millisecond, func() bool { return docs.snapshot().since(from).full > 0 },
			"the rewritten document was never fetched")
		time.Sleep(reloadQuiet)
		requireNoListChanges(t, streams, base)
		requireReloadLogCount(t, env, "published a new OpenAPI document version", 2) // startup, V2
	})

	t.Run("new bytes with the same tools change no list", func(t *testing.T) {
		base := totals(streams)
		_, before := reloadTools(t, env, env.url(0), lister)
		docs.set(reloadV2SameTool)
		for i := range env.addrs {
			awaitTrue(t, reloadWait, 20*time.Millisecond, func() bool {
				return strings.Count(stderrOf(env.proc(i)), "serving the new OpenAPI document version") == 2
			}, "replica %d never served the new version", i)
			_, after := reloadTools(t, env, env.url(i), lister)
			require.JSONEq(t, before, after, "replica %d: the tools did not change", i)
		}
		time.Sleep(reloadQuiet / 2)
		requireNoListChanges(t, streams, base)
	})

	t.Run("a broken document leaves the running version", func(t *testing.T) {
		base := totals(streams)
		from := docs.snapshot()
		docs.set(reloadBroken)
		awaitTrue(t, reloadWait, 20*time.Millisecond, func() bool {
			for i := range env.addrs {
				if strings.Contains(stderrOf(env.proc(i)), "the re-read OpenAPI document does not load") {
					return true
				}
			}
			return false
		}, "no replica logged that the broken document does not load")
		time.Sleep(reloadQuiet)
		t.Logf("document GETs while broken: %+v", docs.snapshot().since(from))
		for i := range env.addrs {
			select {
			case <-env.proc(i).exited:
				t.Fatalf("replica %d exited: %v", i, env.proc(i).waitErr)
			default:
			}
			require.Equal(t, http.StatusOK, env.readyz(t, i), "replica %d ready", i)
			names, _ := reloadTools(t, env, env.url(i), lister)
			requireReloadTools(t, names, []string{"listItems", "fetchItem", "createItem"}, []string{"getItem"}, "replica %d", i)
		}
		requireNoListChanges(t, streams, base)
	})

	t.Run("a good document after the broken one loads", func(t *testing.T) {
		base := totals(streams)
		changed := time.Now()
		docs.set(reloadV3)
		told = append(told, awaitTold(t, env, lister, streams, base, changed, "V3", func(names []string) bool {
			return !slices.Contains(names, "fetchItem")
		})...)
		for i := range env.addrs {
			awaitTrue(t, reloadWait, 20*time.Millisecond, func() bool {
				names, _ := reloadTools(t, env, env.url(i), lister)
				return !slices.Contains(names, "fetchItem")
			}, "replica %d never served the document after the broken one", i)
			names, _ := reloadTools(t, env, env.url(i), lister)
			requireReloadTools(t, names, []string{"listItems", "createItem"}, []string{"getItem", "fetchItem"}, "replica %d", i)
		}
		time.Sleep(reloadQuiet / 2)
		for i, s := range streams {
			require.Equal(t, 1, s.since(base[i])["notifications/tools/list_changed"], "%s: %v", s.name, s.all())
		}
	})

	t.Run("the document before comes back: news again", func(t *testing.T) {
		base := totals(streams)
		changed := time.Now()
		docs.set(reloadV2SameTool) // V3's predecessor
		told = append(told, awaitTold(t, env, lister, streams, base, changed, "V2 again", func(names []string) bool {
			return slices.Contains(names, "fetchItem")
		})...)
		for i := range env.addrs {
			awaitTrue(t, reloadWait, 20*time.Millisecond, func() bool {
				names, _ := reloadTools(t, env, env.url(i), lister)
				return slices.Contains(names, "fetchItem")
			}, "replica %d never served the document that came back", i)
		}
		time.Sleep(reloadQuiet / 2)
		for i, s := range streams {
			require.Equal(t, 1, s.since(base[i])["notifications/tools/list_changed"], "%s: %v", s.name, s.all())
		}
	})

	// A client told that the tools changed, re-listing at once through the
	// proxy, must not be dealt a replica that still lists the old ones: it
	// would keep them, being told once per version. Checked last, over
	// every version above, so that the other scenarios report either way.
	t.Run("a stream is told only once every replica serves the new tools", func(t *testing.T) {
		requireToldWhenServed(t, told)
	})
	t.Logf("interval scenarios took %v", time.Since(began).Round(time.Millisecond))
}

// testReloadBySIGHUP: two replicas read a file and do not re-read it on
// their own; a SIGHUP to one of them reloads it on both.
func testReloadBySIGHUP(t *testing.T, redisURL string, rdb redis.UniversalClient) {
	began := time.Now()
	backend := startReloadBackend(t)
	backend.doc = filepath.Join(t.TempDir(), "reload.yaml")
	require.NoError(t, os.WriteFile(backend.doc, []byte(reloadV1), 0o600))
	env := newReplicaEnv(t, backend, redisURL, rdb, 2)
	t.Cleanup(func() { logReloadLines(t, env) })
	lister := env.initialize(t, env.proxy.URL)
	sid := env.initialize(t, env.proxy.URL)
	stream := watchListChanges("push stream on replica 0", env.openPush(t, env.url(0), sid, ""))
	streams := []*listChanges{stream}

	// Without an interval a changed file waits for the signal.
	base := totals(streams)
	require.NoError(t, os.WriteFile(backend.doc, []byte(reloadV2), 0o600))
	time.Sleep(reloadQuiet)
	for i := range env.addrs {
		names, _ := reloadTools(t, env, env.url(i), lister)
		requireReloadTools(t, names, []string{"getItem"}, []string{"fetchItem"}, "replica %d before the SIGHUP", i)
	}
	requireNoListChanges(t, streams, base)

	signalled := time.Now()
	require.NoError(t, env.proc(1).cmd.Process.Signal(syscall.SIGHUP))
	told := awaitTold(t, env, lister, streams, base, signalled, "SIGHUP", func(names []string) bool {
		return slices.Contains(names, "fetchItem")
	})
	for i := range env.addrs {
		awaitTrue(t, reloadWait, 20*time.Millisecond, func() bool {
			names, _ := reloadTools(t, env, env.url(i), lister)
			return slices.Contains(names, "fetchItem")
		}, "replica %d never served the document re-read on SIGHUP", i)
		t.Logf("replica %d serves the new tools %v after the SIGHUP to replica 1", i, time.Since(signalled).Round(time.Millisecond))
	}
	time.Sleep(reloadQuiet / 2)
	require.Equal(t, 1, stream.since(base[0])["notifications/tools/list_changed"], "%v", stream.all())

	// A SIGHUP with the file unchanged changes nothing.
	base = totals(streams)
	require.NoError(t, env.proc(0).cmd.Process.Signal(syscall.SIGHUP))
	awaitTrue(t, eventWait, 20*time.Millisecond, func() bool {
		return strings.Contains(stderrOf(env.proc(0)), "SIGHUP: re-reading the OpenAPI document")
	}, "replica 0 never logged the SIGHUP")
	time.Sleep(reloadQuiet / 2)
	requireNoListChanges(t, streams, base)
	for i := range env.addrs {
		select {
		case <-env.proc(i).exited:
			t.Fatalf("replica %d exited: %v", i, env.proc(i).waitErr)
		default:
		}
	}
	t.Logf("SIGHUP scenario took %v", time.Since(began).Round(time.Millisecond))
	requireToldWhenServed(t, told) // last, as in the interval scenarios
}

// toldReplicas is one stream told of a version, and the replicas that
// still listed the old tools at that moment.
type toldReplicas struct {
	version, stream string
	after           time.Duration // from the change
	stale           []int
}

// awaitTold waits until every stream carried a tools/list_changed since
// base. The moment each does, it lists the tools on every replica, as a
// client re-listing at once would, and records those where isNew is false.
func awaitTold(t *testing.T, env *replicaEnv, lister string, streams []*listChanges, base []map[string]int, changed time.Time, version string, isNew func(names []string) bool) []toldReplicas {
	t.Helper()
	var out []toldReplicas
	done := map[int]bool{}
	awaitTrue(t, reloadWait, 2*time.Millisecond, func() bool {
		for i, s := range streams {
			if done[i] || s.since(base[i])["notifications/tools/list_changed"] == 0 {
				continue
			}
			done[i] = true
			tr := toldReplicas{version: version, stream: s.name, after: time.Since(changed)}
			for r := range env.addrs {
				if names, _ := reloadTools(t, env, env.url(r), lister); !isNew(names) {
					tr.stale = append(tr.stale, r)
				}
			}
			out = append(out, tr)
		}
		return len(done) == len(streams)
	}, "every stream hears of %s", version)
	for _, tr := range out {
		t.Logf("%s: %s told %v after the change; replicas still listing the old tools then: %v", tr.version, tr.stream, tr.after.Round(time.Millisecond), tr.stale)
	}
	return out
}

// requireToldWhenServed: no stream was told of a version while a replica
// still served the one before.
func requireToldWhenServed(t *testing.T, told []toldReplicas) {
	t.Helper()
	require.NotEmpty(t, told)
	var early []string
	for _, tr := range told {
		if len(tr.stale) > 0 {
			early = append(early, fmt.Sprintf("%s: %s told %v after the change while replicas %v listed the old tools",
				tr.version, tr.stream, tr.after.Round(time.Millisecond), tr.stale))
		}
	}
	require.Empty(t, early, "streams told of a version before every replica served it")
}

// reloadDocServer serves an OpenAPI document that the test rewrites; each
// write is a new ETag (as a file server's mtime-based one would be), and a
// GET naming the current one with If-None-Match is answered 304.
type reloadDocServer struct {
	URL string

	mu   sync.Mutex
	body string
	rev  int
	seen reloadGets
}

// reloadGets is what the document server saw.
type reloadGets struct {
	total, conditional, notModified, full int
	remotes                               map[string]int // requests per client connection
}

func (g reloadGets) since(from reloadGets) reloadGets {
	out := reloadGets{total: g.total - from.total, conditional: g.conditional - from.conditional,
		notModified: g.notModified - from.notModified, full: g.full - from.full, remotes: map[string]int{}}
	for addr, n := range g.remotes {
		if d := n - from.remotes[addr]; d > 0 {
			out.remotes[addr] = d
		}
	}
	return out
}

func startReloadDocServer(t *testing.T, body string) *reloadDocServer {
	t.Helper()
	d := &reloadDocServer{body: body, seen: reloadGets{remotes: map[string]int{}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/openapi.yaml" {
			http.NotFound(w, r)
			return
		}
		d.mu.Lock()
		body, etag := d.body, `"rev-`+strconv.Itoa(d.rev)+`"`
		inm := r.Header.Get("If-None-Match")
		d.seen.total++
		d.seen.remotes[r.RemoteAddr]++
		if inm != "" {
			d.seen.conditional++
		}
		if inm == etag {
			d.seen.notModified++
		} else {
			d.seen.full++
		}
		d.mu.Unlock()
		w.Header().Set("ETag", etag)
		if inm == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	d.URL = srv.URL + "/openapi.yaml"
	return d
}

func (d *reloadDocServer) set(body string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.body = body
	d.rev++
}

func (d *reloadDocServer) snapshot() reloadGets {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.seen
	s.remotes = make(map[string]int, len(d.seen.remotes))
	for k, v := range d.seen.remotes {
		s.remotes[k] = v
	}
	return s
}

// startReloadBackend is a backend that answers every call with an empty
// JSON object; the caller sets its doc.
func startReloadBackend(t *testing.T) *replicaBackend {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return &replicaBackend{URL: srv.URL}
}

// reloadTools lists the tools on url: their names, sorted, and the tools
// as JSON.
func reloadTools(t *testing.T, env *replicaEnv, url, sid string) ([]string, string) {
	t.Helper()
	var names []string
	var all []json.RawMessage
	cursor := ""
	for {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + strconv.Quote(cursor) + `}`
		}
		r := env.do(t, url, sid, `{"jsonrpc":"2.0","id":"tl","method":"tools/list","params":`+params+`}`)
		require.Equal(t, http.StatusOK, r.status, "tools/list on %s: %s", url, r.body)
		m := onlyResponse(t, r, `"tl"`)
		require.Nil(t, m.Error, "%s", r.body)
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal(m.Result, &res), "%s", m.Result)
		for _, raw := range res.Tools {
			var tool struct{ Name string }
			require.NoError(t, json.Unmarshal(raw, &tool), "%s", raw)
			names = append(names, tool.Name)
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	slices.Sort(names)
	b, err := json.Marshal(all)
	require.NoError(t, err)
	return names, string(b)
}

// reloadResources is resources/list's result on url, as JSON.
func reloadResources(t *testing.T, env *replicaEnv, url, sid string) string {
	t.Helper()
	r := env.do(t, url, sid, `{"jsonrpc":"2.0","id":"rl","method":"resources/list"}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	m := onlyResponse(t, r, `"rl"`)
	require.Nil(t, m.Error, "%s", r.body)
	return string(m.Result)
}

func requireReloadTools(t *testing.T, names, want, notWant []string, msg string, args ...any) {
	t.Helper()
	where := fmt.Sprintf(msg, args...)
	for _, w := range want {
		require.Contains(t, names, w, "%s: %v", where, names)
	}
	for _, w := range notWant {
		require.NotContains(t, names, w, "%s: %v", where, names)
	}
}

// listChanges records the notifications one stream carries.
type listChanges struct {
	name   string
	stream *pushStream

	mu    sync.Mutex
	got   []listChange
	ended bool
}

// listChange is one notification a stream carried.
type listChange struct {
	at             time.Time
	method         string
	subscriptionID json.RawMessage // params._meta's, on a listen stream
	data           string
}

func (c listChange) String() string { return c.method + "@" + c.at.Format("15:04:05.000") }

// watchListChanges reads s in the background until it ends.
func watchListChanges(name string, s *pushStream) *listChanges {
	l := &listChanges{name: name, stream: s}
	go func() {
		for ev := range s.events {
			var m struct {
				Method string `json:"method"`
				Params struct {
					Meta map[string]json.RawMessage `json:"_meta"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(ev.data), &m) != nil || m.Method == "" {
				continue
			}
			l.mu.Lock()
			l.got = append(l.got, listChange{at: time.Now(), method: m.Method, subscriptionID: m.Params.Meta["io.modelcontextprotocol/subscriptionId"], data: ev.data})
			l.mu.Unlock()
		}
		l.mu.Lock()
		l.ended = true
		l.mu.Unlock()
	}()
	return l
}

// describe says what the stream carried and whether it ended.
func (l *listChanges) describe() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, c := range l.got {
		fmt.Fprintf(&b, "\n  %s %s", c.at.Format("15:04:05.000"), c.data)
	}
	if l.ended {
		fmt.Fprintf(&b, "\n  ended (%v)", l.stream.err)
	}
	return b.String()
}

func (l *listChanges) all() []listChange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

func (l *listChanges) count(method string) int { return l.counts()[method] }

// counts is how many notifications of each method the stream carried.
func (l *listChanges) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, c := range l.got {
		out[c.method]++
	}
	return out
}

// since is counts minus an earlier counts.
func (l *listChanges) since(base map[string]int) map[string]int {
	out := l.counts()
	for m, n := range base {
		out[m] -= n
	}
	return out
}

func totals(streams []*listChanges) []map[string]int {
	out := make([]map[string]int, len(streams))
	for i, s := range streams {
		out[i] = s.counts()
	}
	return out
}

// requireNoListChanges: no stream carried a list_changed of any kind
// since base, and none ended.
func requireNoListChanges(t *testing.T, streams []*listChanges, base []map[string]int) {
	t.Helper()
	for i, s := range streams {
		for method, n := range s.since(base[i]) {
			require.False(t, n > 0 && strings.HasSuffix(method, "/list_changed"), "%s: %d %s: %v", s.name, n, method, s.all())
		}
		s.mu.Lock()
		ended := s.ended
		s.mu.Unlock()
		require.False(t, ended, "%s ended", s.name)
	}
}

// requireReloadLogCount: the replicas logged line want times in all.
func requireReloadLogCount(t *testing.T, env *replicaEnv, line string, want int) {
	t.Helper()
	n := 0
	for i := range env.addrs {
		n += strings.Count(stderrOf(env.proc(i)), line)
	}
	require.Equal(t, want, n, "%q logged by the replicas", line)
}

// logReloadLines logs each replica's reload log lines, when the test
// failed or runs with -v.
func logReloadLines(t *testing.T, env *replicaEnv) {
	if !t.Failed() && !testing.Verbose() {
		return
	}
	for i := range env.addrs {
		var lines []string
		for line := range strings.SplitSeq(stderrOf(env.proc(i)), "\n") {
			if strings.Contains(line, "OpenAPI document") || strings.Contains(line, "reload lease") {
				lines = append(lines, line)
			}
		}
		t.Logf("replica %d reload log:\n%s", i, strings.Join(lines, "\n"))
	}
}
