package e2e

// The limits hold for a deployment, not a replica: three gateway processes
// behind the round-robin proxy share one per-client bucket, one quota count,
// one concurrency bound per session and one session count per client, on
// standalone Redis and on Redis Cluster alike.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/demo"
)

func TestLimitsAcrossReplicas(t *testing.T) {
	for _, kind := range redisKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			redisURL, rdb := kind.redis(t)
			backend := startLimitsBackend(t)
			// Each scenario needs other settings, so each has its own three
			// replicas (and key prefix).
			env := func(t *testing.T, extra ...string) *replicaEnv {
				return newReplicaEnv(t, backend.replicaBackend, redisURL, rdb, 3, extra...)
			}
			t.Run("per-client bucket across replicas", func(t *testing.T) {
				t.Parallel()
				testPerClientAcrossReplicas(t, env(t, "--rate-per-client", "2", "--burst-per-client", "5"))
			})
			t.Run("session cycling does not escape the per-client bucket", func(t *testing.T) {
				t.Parallel()
				testSessionCycling(t, env(t, "--rate-per-client", "2", "--burst-per-client", "5", "--max-sessions-per-client", "1000"))
			})
			t.Run("global quota under 50 concurrent callers", func(t *testing.T) {
				t.Parallel()
				cfg := filepath.Join(t.TempDir(), "quotas.yaml")
				require.NoError(t, os.WriteFile(cfg, []byte(`quotas:
  - name: burst-test
    tools: ["*"]
    limit: 20
    window: 1h
    per: global
`), 0o600))
				testGlobalQuota(t, env(t, "--config", cfg))
			})
			t.Run("session concurrency across replicas", func(t *testing.T) {
				t.Parallel()
				testSessionConcurrency(t, env(t, "--session-concurrency", "2"), backend)
			})
			t.Run("sessions per client across replicas", func(t *testing.T) {
				t.Parallel()
				testSessionsPerClient(t, env(t, "--max-sessions-per-client", "5"))
			})
		})
	}
}

// The per-client bucket's settings in the rate scenarios.
const (
	clientRate  = 2.0
	clientBurst = 5
)

// 1. One session's calls, spread over the replicas by the proxy, drain one
// bucket: what the replicas admit together is what one would.
func testPerClientAcrossReplicas(t *testing.T, env *replicaEnv) {
	sid := env.initialize(t, env.proxy.URL)
	const calls = 60
	results, elapsed := paced(calls, 2*time.Second, 6, func(ctx context.Context, i int) (*rawResponse, error) {
		return env.send(ctx, env.proxy.URL, sid, getNoteCall(i))
	})
	admitted := 0
	for i, r := range results {
		v := toolVerdict(t, r.resp, r.err, i)
		if v.admitted {
			admitted++
			continue
		}
		requireDenied(t, v, "rate_limited", "per_client", "")
	}
	requireWithinBucket(t, admitted, calls, elapsed)
	requireSpread(t, env, admitted, calls)
}

// 2. A client that opens a new session for every call still drains the one
// bucket of its identity.
func testSessionCycling(t *testing.T, env *replicaEnv) {
	const calls = 40
	// Each cycle is an initialize and a tools/call, no
	// notifications/initialized: with three requests a cycle the proxy's
	// round robin would deal every call to the same replica.
	results, elapsed := paced(calls, 2*time.Second, 6, func(ctx context.Context, i int) (*rawResponse, error) {
		r, err := env.send(ctx, env.proxy.URL, "", initializeBody)
		if err != nil {
			return nil, err
		}
		sid := r.header.Get("Mcp-Session-Id")
		if r.status != http.StatusOK || sid == "" {
			return nil, fmt.Errorf("initialize: status %d, session %q: %s", r.status, sid, r.body)
		}
		return env.send(ctx, env.proxy.URL, sid, getNoteCall(i))
	})
	admitted := 0
	for i, r := range results {
		v := toolVerdict(t, r.resp, r.err, i)
		if v.admitted {
			admitted++
			continue
		}
		requireDenied(t, v, "rate_limited", "per_client", "")
	}
	requireWithinBucket(t, admitted, calls, elapsed)
	requireSpread(t, env, admitted, calls)
	created := 0
	for i := range env.addrs {
		created += int(scrapeMetric(t, env, i, "mcpgw_sessions_created_total"))
	}
	require.Equal(t, calls, created, "every call had a session of its own")
}

// 3. Fifty callers at once, on ten sessions and three replicas, against a
// global quota of 20: exactly 20 calls pass, not one more.
func testGlobalQuota(t *testing.T, env *replicaEnv) {
	const (
		callers  = 50
		each     = 4
		sessions = 10
		limit    = 20
	)
	sids := make([]string, sessions)
	for i := range sids {
		sids[i] = env.initialize(t, env.proxy.URL)
	}
	// The 1h window starts on the hour (UTC): a run across it would count
	// in two windows. The run takes about a second.
	if left := time.Until(time.Now().Truncate(time.Hour).Add(time.Hour)); left < 10*time.Second {
		t.Logf("waiting %v for the next quota window", left.Round(time.Millisecond))
		time.Sleep(left + 100*time.Millisecond)
	}
	type result struct {
		resp *rawResponse
		err  error
	}
	results := make([]result, callers*each)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			<-start
			for k := range each {
				i := c*each + k
				results[i].resp, results[i].err = env.send(context.Background(), env.proxy.URL, sids[c%sessions], getNoteCall(i))
			}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(began)
	admitted := 0
	for i, r := range results {
		v := toolVerdict(t, r.resp, r.err, i)
		if v.admitted {
			admitted++
			continue
		}
		requireDenied(t, v, "quota_exceeded", "", "burst-test")
		// The window ends on the next hour: a retry comes that much later.
		require.Greater(t, v.RetryAfterSeconds, 0.0, "call %d", i)
	}
	t.Logf("quota %d per 1h, %d callers × %d calls in %v: %d admitted, %d quota_exceeded",
		limit, callers, each, elapsed.Round(time.Millisecond), admitted, len(results)-admitted)
	require.Equal(t, limit, admitted, "calls admitted against a global quota of %d", limit)
	requireSpread(t, env, admitted, len(results))
}

// 4. Six calls of one session at once, each held 500 ms by the backend and
// dealt to the three replicas in turn: at most two run at any moment.
func testSessionConcurrency(t *testing.T, env *replicaEnv, backend *limitsBackend) {
	const (
		calls = 6
		bound = 2
	)
	sid := env.initialize(t, env.proxy.URL)
	backend.resetPeak()
	results := make([]*rawResponse, calls)
	errs := make([]error, calls)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			<-start
			results[i], errs[i] = env.send(context.Background(), env.proxy.URL, sid,
				fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{"ms":500}}}`, i+1))
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(began)
	admitted, denied := 0, 0
	for i := range calls {
		v := toolVerdict(t, results[i], errs[i], i)
		if v.admitted {
			admitted++
			continue
		}
		requireDenied(t, v, "rate_limited", "concurrency", "")
		denied++
	}
	peak, held := backend.peakAndCalls()
	t.Logf("session concurrency %d: %d calls at once in %v: %d admitted, %d denied (concurrency); the backend held at most %d at once, %d in all",
		bound, calls, elapsed.Round(time.Millisecond), admitted, denied, peak, held)
	require.LessOrEqual(t, peak, bound, "calls of one session running at once on the backend")
	require.Equal(t, admitted, held, "every admitted call, and only those, reached the backend")
	require.GreaterOrEqual(t, admitted, bound, "the first %d calls find free places", bound)
	require.Positive(t, denied, "with %d calls held 500 ms, some find no free place", calls)
	requireSpread(t, env, admitted, calls)
}

// 5. Eight initializes at once, dealt to the three replicas: five sessions,
// three 429s; ending one session frees its place.
func testSessionsPerClient(t *testing.T, env *replicaEnv) {
	const (
		attempts    = 8
		maxSessions = 5
	)
	results := make([]*rawResponse, attempts)
	errs := make([]error, attempts)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range attempts {
		wg.Go(func() {
			<-start
			results[i], errs[i] = env.send(context.Background(), env.proxy.URL, "", initializeBody)
		})
	}
	close(start)
	wg.Wait()
	var sids []string
	refused := 0
	for i, r := range results {
		require.NoError(t, errs[i])
		switch r.status {
		case http.StatusOK:
			sid := r.header.Get("Mcp-Session-Id")
			require.NotEmpty(t, sid, "initialize %d", i)
			sids = append(sids, sid)
		case http.StatusTooManyRequests:
			refused++
			secs, err := strconv.Atoi(r.header.Get("Retry-After"))
			require.NoError(t, err, "initialize %d: Retry-After %q", i, r.header.Get("Retry-After"))
			require.Positive(t, secs, "initialize %d: Retry-After", i)
			var msg struct {
				Error *struct {
					Code int `json:"code"`
					Data struct {
						Kind              string  `json:"kind"`
						Scope             string  `json:"scope"`
						RetryAfterSeconds float64 `json:"retryAfterSeconds"`
					} `json:"data"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(r.body, &msg), "initialize %d: %s", i, r.body)
			require.NotNil(t, msg.Error, "initialize %d: %s", i, r.body)
			require.Equal(t, "too_many_sessions", msg.Error.Data.Kind, "initialize %d: %s", i, r.body)
			require.Equal(t, "per_client", msg.Error.Data.Scope, "initialize %d: %s", i, r.body)
			require.Equal(t, float64(secs), msg.Error.Data.RetryAfterSeconds, "initialize %d: %s", i, r.body)
		default:
			t.Fatalf("initialize %d: status %d: %s", i, r.status, r.body)
		}
	}
	refusedBy := make([]int, len(env.addrs))
	total := 0
	for i := range env.addrs {
		refusedBy[i] = int(scrapeMetric(t, env, i, `mcpgw_sessions_refused_total{scope="per_client"}`))
		total += refusedBy[i]
	}
	t.Logf("max %d sessions per client: %d initializes at once: %d sessions, %d refused with 429 (by replica: %v)",
		maxSessions, attempts, len(sids), refused, refusedBy)
	require.Len(t, sids, maxSessions, "sessions opened")
	require.Equal(t, attempts-maxSessions, refused, "initializes refused")
	require.Equal(t, refused, total, "the replicas' mcpgw_sessions_refused_total")

	// Ending a session, on whichever replica, frees its place for the next.
	d, err := env.sendMethod(context.Background(), http.MethodDelete, env.proxy.URL, sids[0])
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, d.status, "%s", d.body)
	env.initialize(t, env.proxy.URL)
	r := env.do(t, env.proxy.URL, "", initializeBody)
	require.Equal(t, http.StatusTooManyRequests, r.status, "a sixth session: %s", r.body)
}

// limitsBackend is the demo API plus /slow, which answers after ms
// milliseconds and records how many calls it held at once.
type limitsBackend struct {
	*replicaBackend

	mu             sync.Mutex
	inFlight, peak int
	calls          int // /slow calls since resetPeak
}

// slowPath is added to the demo document.
const slowPath = `  /slow:
    get:
      operationId: slow
      summary: Answers after ms milliseconds
      parameters:
        - {name: ms, in: query, required: true, schema: {type: integer, minimum: 0, maximum: 10000}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
`

func startLimitsBackend(t *testing.T) *limitsBackend {
	t.Helper()
	b := &limitsBackend{replicaBackend: &replicaBackend{}}
	mux := http.NewServeMux()
	mux.Handle("/", demo.New().Handler())
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil {
			http.Error(w, "ms must be an integer", http.StatusBadRequest)
			return
		}
		b.mu.Lock()
		b.inFlight++
		b.calls++
		b.peak = max(b.peak, b.inFlight)
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			b.inFlight--
			b.mu.Unlock()
		}()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(time.Duration(ms) * time.Millisecond):
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"slept":%d}`, ms)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b.URL = srv.URL

	doc := string(demo.OpenAPI())
	require.Equal(t, 1, strings.Count(doc, "\npaths:\n"), "the demo document has one paths section")
	doc = strings.Replace(doc, "\npaths:\n", "\npaths:\n"+slowPath, 1)
	b.doc = filepath.Join(t.TempDir(), "limits.yaml")
	require.NoError(t, os.WriteFile(b.doc, []byte(doc), 0o600))
	return b
}

func (b *limitsBackend) resetPeak() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.peak, b.calls = b.inFlight, 0
}

func (b *limitsBackend) peakAndCalls() (peak, calls int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak, b.calls
}

func getNoteCall(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1}}}`, i+1)
}

// pacedResult is one paced call's answer.
type pacedResult struct {
	resp *rawResponse
	err  error
}

// paced makes n calls spread evenly over span, on the given number of
// goroutines (a call starts on the next tick a goroutine is free), and
// returns the answers with the time from the first call's start to the
// last one's end.
func paced(n int, span time.Duration, workers int, call func(ctx context.Context, i int) (*rawResponse, error)) ([]pacedResult, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), span+30*time.Second)
	defer cancel()
	results := make([]pacedResult, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				results[i].resp, results[i].err = call(ctx, i)
			}
		})
	}
	start := time.Now()
	tick := time.NewTicker(span / time.Duration(n))
	for i := range n {
		if i > 0 {
			<-tick.C
		}
		jobs <- i
	}
	tick.Stop()
	close(jobs)
	wg.Wait()
	return results, time.Since(start)
}

// limitVerdict is what a tools/call answer says about the limits: admitted,
// or the denial's structuredContent.
type limitVerdict struct {
	admitted          bool
	Kind              string  `json:"kind"`
	Scope             string  `json:"scope"`
	Quota             string  `json:"quota"`
	RetryAfterSeconds float64 `json:"retryAfterSeconds"`
}

// toolVerdict reads the answer to call i (JSON-RPC id i+1): a successful
// result, or a denial whose structuredContent and _meta agree. Any other
// answer fails the test.
func toolVerdict(t *testing.T, r *rawResponse, err error, i int) limitVerdict {
	t.Helper()
	require.NoError(t, err, "call %d", i)
	require.Equal(t, http.StatusOK, r.status, "call %d: %s", i, r.body)
	m := onlyResponse(t, r, strconv.Itoa(i+1))
	require.Nil(t, m.Error, "call %d: %s", i, r.body)
	var res struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Meta              json.RawMessage `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &res), "call %d: %s", i, m.Result)
	require.NotEmpty(t, res.StructuredContent, "call %d: %s", i, m.Result)
	if !res.IsError {
		return limitVerdict{admitted: true}
	}
	var v, meta limitVerdict
	require.NoError(t, json.Unmarshal(res.StructuredContent, &v), "call %d: %s", i, m.Result)
	require.NotEmpty(t, v.Kind, "call %d: a tool error that is not a denial: %s", i, m.Result)
	require.NoError(t, json.Unmarshal(res.Meta, &meta), "call %d: %s", i, m.Result)
	require.Equal(t, v, meta, "call %d: structuredContent and _meta disagree: %s", i, m.Result)
	require.GreaterOrEqual(t, v.RetryAfterSeconds, 1.0, "call %d: %s", i, m.Result)
	return v
}

// requireDenied checks a denial's kind, scope and quota name.
func requireDenied(t *testing.T, v limitVerdict, kind, scope, quota string) {
	t.Helper()
	require.Equal(t, limitVerdict{Kind: kind, Scope: scope, Quota: quota, RetryAfterSeconds: v.RetryAfterSeconds}, v)
}

// requireWithinBucket checks admitted calls against the per-client bucket:
// no more than its burst plus its refill over the run (and one refill of
// slack for the clocks), and no fewer than the burst.
func requireWithinBucket(t *testing.T, admitted, calls int, elapsed time.Duration) {
	t.Helper()
	bound := clientBurst + clientRate*elapsed.Seconds() + 1
	t.Logf("per-client rate %g/s burst %d: %d calls in %v: %d admitted (bound %.1f), %d rate_limited",
		clientRate, clientBurst, calls, elapsed.Round(time.Millisecond), admitted, bound, calls-admitted)
	require.LessOrEqual(t, float64(admitted), bound, "admitted calls exceed burst + rate × elapsed + 1")
	require.GreaterOrEqual(t, admitted, clientBurst, "the burst is admitted")
}

// requireSpread checks, from the replicas' mcpgw_tool_calls_total, that
// every replica answered some of the calls and that together they admitted
// what the client counted.
func requireSpread(t *testing.T, env *replicaEnv, admitted, calls int) {
	t.Helper()
	ok := make([]int, len(env.addrs))
	denied := make([]int, len(env.addrs))
	sumOK, sumDenied := 0, 0
	for i := range env.addrs {
		// By tool and outcome: every refusal the limits make counts.
		for series, v := range scrapeMetrics(t, env, i) {
			if !strings.HasPrefix(series, "mcpgw_tool_calls_total{") {
				continue
			}
			switch {
			case strings.Contains(series, `outcome="ok"`):
				ok[i] += int(v)
			case strings.Contains(series, `outcome="rate_limited"`), strings.Contains(series, `outcome="quota_exceeded"`),
				strings.Contains(series, `outcome="denied"`), strings.Contains(series, `outcome="busy"`):
				denied[i] += int(v)
			}
		}
		sumOK += ok[i]
		sumDenied += denied[i]
	}
	t.Logf("by replica: admitted %v, denied %v", ok, denied)
	for i := range env.addrs {
		require.Positive(t, ok[i]+denied[i], "replica %d answered none of the calls", i)
	}
	require.Equal(t, admitted, sumOK, "admitted calls by the replicas' metrics")
	require.Equal(t, calls-admitted, sumDenied, "denied calls by the replicas' metrics")
}

// scrapeMetric reads one series (name and labels as the text format writes
// them) from replica i's /metrics; a series not written yet is 0.
func scrapeMetric(t *testing.T, env *replicaEnv, i int, series string) float64 {
	t.Helper()
	return scrapeMetrics(t, env, i)[series]
}

// scrapeMetrics reads replica i's /metrics: each series (name and labels
// as the text format writes them) and its value.
func scrapeMetrics(t *testing.T, env *replicaEnv, i int) map[string]float64 {
	t.Helper()
	resp, err := env.hc.Get(env.base(i) + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		sp := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || sp < 0 {
			continue
		}
		f, err := strconv.ParseFloat(line[sp+1:], 64)
		require.NoError(t, err, "%q on replica %d", line, i)
		out[line[:sp]] = f
	}
	require.NoError(t, sc.Err())
	return out
}
