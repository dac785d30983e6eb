package e2e

// The Redis topologies beyond one plain server, for real: TLS with and
// without client certificates, a Sentinel set whose master is killed while
// calls run, and a Redis Cluster that loses a master the same way.

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

const noteCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1}}}`

func TestRedisTLS(t *testing.T) {
	backend := startReplicaBackend(t)
	t.Run("client certificate required", func(t *testing.T) {
		t.Parallel()
		srv := redistest.TLS(t, "yes")
		c := srv.Certs
		env := newReplicaEnv(t, backend, srv.URL, srv.Client(t), 2,
			"--redis-tls-ca-file", c.CAFile, "--redis-tls-cert-file", c.ClientCertFile, "--redis-tls-key-file", c.ClientKeyFile)
		testServedThroughRedis(t, env)
	})
	t.Run("no client certificate", func(t *testing.T) {
		t.Parallel()
		srv := redistest.TLS(t, "no")
		env := newReplicaEnv(t, backend, srv.URL, srv.Client(t), 2, "--redis-tls-ca-file", srv.Certs.CAFile)
		testServedThroughRedis(t, env)
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		srv := redistest.TLS(t, "yes")
		c := srv.Certs
		for _, tc := range []struct {
			name string
			args []string
			log  string
		}{
			{"without the client certificate the server requires", []string{"--redis-tls-ca-file", c.CAFile}, "certificate required"},
			{"trusting another CA", []string{"--redis-tls-ca-file", c.OtherCAFile, "--redis-tls-cert-file", c.ClientCertFile, "--redis-tls-key-file", c.ClientKeyFile},
				"certificate signed by unknown authority"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				testTLSRefused(t, backend, srv.URL, tc.args, tc.log)
			})
		}
	})
	t.Run("bad files exit 2", func(t *testing.T) {
		t.Parallel()
		c := redistest.NewCerts(t)
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--redis-tls-cert-file", c.ClientCertFile}, "redis_tls_key_file (combined): required with redis_tls_cert_file"},
			{[]string{"--redis-tls-ca-file", c.CAFile + ".missing"}, "redis_tls_ca_file (file): cannot read the file"},
			{[]string{"--redis-tls-ca-file", c.ClientKeyFile}, "redis_tls_ca_file (file): holds no PEM certificate"},
		} {
			args := append([]string{"--openapi", backend.doc, "--redis-url", "rediss://127.0.0.1:1"}, tc.args...)
			out, err := exec.Command(gatewayBinary(t), args...).CombinedOutput()
			requireExitCode(t, err, 2, out)
			require.Contains(t, string(out), tc.want)
			require.NotContains(t, string(out), "PRIVATE KEY", "no file contents in the message")
		}
		// With a redis:// URL the files are refused rather than ignored.
		out, err := exec.Command(gatewayBinary(t), "--openapi", backend.doc, "--redis-url", "redis://127.0.0.1:1", "--redis-tls-ca-file", c.CAFile).CombinedOutput()
		requireExitCode(t, err, 2, out)
		require.Contains(t, string(out), "redis_tls_ca_file (combined): needs a rediss:// redis_url")
	})
}

// testServedThroughRedis opens a session on replica 0 and uses it on
// replica 1, which knows it only from Redis; a log-level change on replica 1
// reaches a push stream held by replica 0 over Redis pub/sub.
func testServedThroughRedis(t *testing.T, env *replicaEnv) {
	sid := env.initialize(t, env.url(0))
	keys, err := env.rdb.Keys(context.Background(), env.prefix+"*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, keys, "the session is in Redis")

	call := onlyResponse(t, env.do(t, env.url(1), sid, noteCall), "7")
	require.Nil(t, call.Error)
	require.Contains(t, string(call.Result), `"structuredContent"`)
	require.NotContains(t, string(call.Result), `"isError":true`)

	stream := env.openPush(t, env.url(0), sid, "")
	defer stream.close()
	env.setLevel(t, env.url(1), sid, "debug")
	require.Equal(t, "log level set to debug", stream.next(t, eventWait).logText())
}

// testTLSRefused starts a gateway whose TLS handshake with Redis fails: it
// stays up and unready, logs why, and answers what needs the store with 503.
func testTLSRefused(t *testing.T, backend *replicaBackend, redisURL string, args []string, why string) {
	addr := freeAddr(t)
	p := startGateway(t, append([]string{"--listen", addr, "--openapi", backend.doc, "--upstream", backend.URL, "--redis-url", redisURL}, args...)...)
	require.Contains(t, stderrOf(p), "starting unready")
	require.Contains(t, stderrOf(p), why)
	r, err := http.Get("http://" + addr + "/readyz")
	require.NoError(t, err)
	r.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, r.StatusCode)
	resp, body := post(t, p.url, "", initializeBody)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), "session store is unavailable")
	select {
	case <-p.exited:
		t.Fatalf("the gateway exited: %v\n%s", p.waitErr, stderrOf(p))
	default:
	}
}

func TestRedisSentinelFailover(t *testing.T) {
	set := redistest.Sentinel(t)
	backend := startReplicaBackend(t)
	env := newReplicaEnv(t, backend, set.URL, set.Client(t), 2)
	testFailover(t, env, failover{
		replicated: set.AwaitReplicated,
		kill:       func(t *testing.T, _ []string) string { return set.KillMaster(t) },
		await:      func(t *testing.T, old string) string { return set.AwaitNewMaster(t, old, 30*time.Second) },
	})
}

func TestRedisClusterFailover(t *testing.T) {
	fc := redistest.ClusterWithReplicas(t)
	backend := startReplicaBackend(t)
	env := newReplicaEnv(t, backend, fc.URL, fc.Client(t), 2)
	// The master holding the first session's keys: a third of the
	// sessions live there.
	var key string
	testFailover(t, env, failover{
		replicated: fc.AwaitReplicated,
		kill: func(t *testing.T, sids []string) string {
			key = env.prefix + "s:{" + sids[0] + "}"
			return fc.KillMasterOf(t, key)
		},
		await: func(t *testing.T, old string) string { return fc.AwaitFailover(t, key, old, 30*time.Second) },
	})
}

// failover is how a topology loses its master.
type failover struct {
	// replicated returns once the master's writes so far are on a replica.
	replicated func(testing.TB)
	// kill kills a master (one serving sids[0]'s keys, if it matters) and
	// returns its address.
	kill func(t *testing.T, sids []string) string
	// await returns the new master once the topology has one.
	await func(t *testing.T, old string) string
}

// failoverLoad is what the calls running through a failover saw.
type failoverLoad struct {
	mu            sync.Mutex
	ok            int       // new session opened and used on the other replica
	unavailable   int       // 503 with -32003: the store could not serve
	lost          int       // 404: a session opened around the kill whose write was not replicated
	cachedCalls   int       // calls on sessions opened before, through the proxy
	cachedFailed  int       // of which not 200
	firstFailure  time.Time // zero when none failed
	lastFailure   time.Time
	unexpected    []string
	streak        int       // rounds in a row that succeeded, all started after the kill
	afterKillOKAt time.Time // when streak first reached resumedStreak
}

// resumedStreak is how many rounds in a row must succeed after the kill for
// service to count as back. Rounds alternate replicas and open sessions on
// random slots: on a Cluster a third of them live on the lost master, so a
// dead master passes 20 rounds by chance once in thousands of runs.
const resumedStreak = 20

// testFailover opens sessions, makes sure Redis has replicated them, then
// kills the master while calls run: the gateway replicas stay up, service
// comes back by itself, and every session opened before the kill still
// works, also on a replica that never saw it before (a fresh process).
func testFailover(t *testing.T, env *replicaEnv, f failover) {
	const sessions = 10
	var sids []string
	for range sessions {
		sid := env.initialize(t, env.proxy.URL)
		call := onlyResponse(t, env.do(t, env.proxy.URL, sid, noteCall), "7")
		require.Nil(t, call.Error)
		sids = append(sids, sid)
	}
	// Replication is asynchronous: what the master took in its last moment
	// may never reach the replica. These sessions must survive, so their
	// writes are awaited on the replica first.
	f.replicated(t)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait() // after stop, also when the test fails early
	defer stop()
	load := &failoverLoad{}
	var killedAt time.Time
	var killMu sync.Mutex
	wg.Go(func() {
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ctx.Err() == nil; i++ {
			load.record(ctx, env, i, sids[i%len(sids)], func() time.Time { killMu.Lock(); defer killMu.Unlock(); return killedAt })
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	})
	// Some load before the kill, so the loop is known to work.
	awaitTrue(t, 10*time.Second, 10*time.Millisecond, func() bool { load.mu.Lock(); defer load.mu.Unlock(); return load.ok >= 5 },
		"the load loop succeeds before the failover")

	killMu.Lock()
	killedAt = time.Now()
	killMu.Unlock()
	old := f.kill(t, sids)
	now := f.await(t, old)
	t.Logf("the topology named %s master %v after %s was killed", now, time.Since(killedAt).Round(time.Millisecond), old)
	awaitTrue(t, 30*time.Second, 10*time.Millisecond, func() bool {
		load.mu.Lock()
		defer load.mu.Unlock()
		return !load.afterKillOKAt.IsZero()
	}, "service did not resume after the failover")
	stop()
	wg.Wait()

	load.mu.Lock()
	gap := "no round failed"
	if !load.firstFailure.IsZero() {
		gap = "the last failed round ended " + load.lastFailure.Sub(killedAt).Round(time.Millisecond).String() + " after the kill"
	}
	t.Logf("load: %d rounds ok, %d unavailable (503), %d opened around the kill and lost (404); %d calls on earlier sessions, %d not 200; %s; %d rounds in a row ok by %v after the kill",
		load.ok, load.unavailable, load.lost, load.cachedCalls, load.cachedFailed, gap, resumedStreak, load.afterKillOKAt.Sub(killedAt).Round(time.Millisecond))
	unexpected := load.unexpected
	load.mu.Unlock()
	require.Empty(t, unexpected, "answers other than success, 503 or a lost new session")
	for i := range env.addrs {
		select {
		case <-env.proc(i).exited:
			t.Fatalf("replica %d exited during the failover: %v", i, env.proc(i).waitErr)
		default:
		}
	}

	// Replica 1 again as a fresh process: it knows no session but from the
	// new master.
	env.kill(t, 1)
	env.restart(t, 1)
	for _, sid := range sids {
		for i := range env.addrs {
			r := env.do(t, env.url(i), sid, noteCall)
			require.Equal(t, http.StatusOK, r.status, "session %s… on replica %d after the failover: %s", sid[:8], i, r.body)
			call := onlyResponse(t, r, "7")
			require.Nil(t, call.Error)
			require.Contains(t, string(call.Result), `"structuredContent"`)
		}
	}
}

// record runs one round of the load: a new session opened on one replica
// and called on the other (both need the store), and a call on a session
// opened before the failover through the proxy.
func (l *failoverLoad) record(ctx context.Context, env *replicaEnv, i int, old string, killedAt func() time.Time) {
	a, b := env.url(i%2), env.url((i+1)%2)
	started := time.Now()
	outcome := func() string {
		init, err := env.send(ctx, a, "", initializeBody)
		if err != nil {
			return "initialize: " + err.Error()
		}
		if init.status != http.StatusOK {
			return classify("initialize", init)
		}
		r, err := env.send(ctx, b, init.header.Get("Mcp-Session-Id"), noteCall)
		if err != nil {
			return "call: " + err.Error()
		}
		if r.status != http.StatusOK {
			return classify("call", r)
		}
		if !strings.Contains(string(r.body), `"structuredContent"`) {
			return "call: " + string(r.body)
		}
		return ""
	}()
	cached, cachedErr := env.send(ctx, env.proxy.URL, old, noteCall)
	if ctx.Err() != nil {
		return // stopped mid-round: nothing to judge
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cachedCalls++
	if cachedErr != nil || cached.status != http.StatusOK {
		l.cachedFailed++
	}
	switch {
	case outcome == "":
		l.ok++
		if k := killedAt(); !k.IsZero() && started.After(k) {
			l.streak++
			if l.streak == resumedStreak && l.afterKillOKAt.IsZero() {
				l.afterKillOKAt = time.Now()
			}
		}
		return
	case outcome == "unavailable":
		l.unavailable++
	case outcome == "lost":
		l.lost++
	default:
		l.unexpected = append(l.unexpected, outcome)
	}
	l.streak = 0
	if l.firstFailure.IsZero() {
		l.firstFailure = started
	}
	l.lastFailure = time.Now()
}

// classify names a failed answer: "unavailable" for the store's 503,
// "lost" for a 404 of the session just opened, else the answer itself.
func classify(what string, r *rawResponse) string {
	switch {
	case r.status == http.StatusServiceUnavailable && strings.Contains(string(r.body), "session store is unavailable"):
		return "unavailable"
	case r.status == http.StatusNotFound && what == "call":
		return "lost"
	}
	return what + ": " + http.StatusText(r.status) + " " + string(r.body)
}
