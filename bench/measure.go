package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// runner holds the servers of one run and what was measured.
type runner struct {
	opts options
	root string
	tmp  string
	bins binaries
	hc   *http.Client

	procs   []*proc
	redis   *redisServer
	issuer  *issuer
	backend string
	targets []*target
	rate    map[string]float64 // open-loop calls/s per payload size

	res *results
}

// target is one way of making the call.
type target struct {
	key, label string
	spec       func(size string) *callSpec
	pids       []int // the serving processes whose CPU is counted
	redis      bool  // its state is in the run's Redis
	prefix     string
}

// sample is what one round measured of one target and payload.
type sample struct {
	tput1, tput32 float64
	p50, p99      time.Duration
	cpuFixed      time.Duration // CPU per call at the fixed rate
	cpu32         time.Duration // CPU per call at 32 connections
	redisPerCall  float64       // Redis commands per call (c=32 and fixed-rate phases)
	redisCmds     map[string]int64
	errors        int64
	unsent        int64
	firstErr      string
}

// results is everything a run measured.
type results struct {
	took      time.Duration
	rates     map[string]float64
	samples   map[string][]sample // key: target key + "/" + size
	missCmds  []missSample
	benches   []benchLine
	benchErr  string
	github    *githubFigures
	sessMem   sessionMemory
	payloadSz map[string]int
	// The machine while the calls were measured: load average before and
	// after, and the share of all cores used by processes not of this run.
	loadBefore, loadAfter string
	othersShare           float64
}

type missSample struct {
	target string
	cmds   []int64 // per fresh session: Redis commands of its first call on each replica
	names  map[string]int64
}

func (r *runner) start(name string, argv []string, env ...string) (*proc, error) {
	p, err := startProc(name, argv, env...)
	if err != nil {
		return nil, err
	}
	r.procs = append(r.procs, p)
	return p, nil
}

func (r *runner) stopAll() {
	for _, p := range slices.Backward(r.procs) {
		p.stop()
		if t := strings.TrimSpace(p.stderr.String()); t != "" {
			logf("%s said on stderr (last lines):\n%s", p.name, t)
		}
	}
	r.redis.stop()
	r.issuer.close()
}

func (r *runner) gatewayArgs(doc string, extra ...string) []string {
	return r.gatewayArgsAt(doc, "127.0.0.1:0", extra...)
}

// gatewayArgsAt is gatewayArgs listening on addr.
func (r *runner) gatewayArgsAt(doc, addr string, extra ...string) []string {
	return append([]string{r.bins.gateway, "--openapi", doc, "--upstream", r.backend, "--listen", addr, "--log-level", "warn"}, extra...)
}

// startAuthGateway starts the memory gateway with authentication on,
// trusting tokens of the run's issuer, and returns it with the audience
// its tokens need. Its public_url has to be the address it listens on, so
// the port is picked before it starts: a free one is found and released,
// and should something else take it first, another one is tried.
func (r *runner) startAuthGateway(doc string) (*proc, string, error) {
	var err error
	for range 3 {
		var addr string
		if addr, err = freeAddr(); err != nil {
			return nil, "", err
		}
		public := "http://" + addr
		var p *proc
		p, err = r.start("gateway (memory, auth)", r.gatewayArgsAt(doc, addr, "--public-url", public, "--auth-issuer", r.issuer.url))
		if err == nil {
			return p, public + "/mcp", nil // the default audience: public_url + mount_path
		}
	}
	return nil, "", err
}

// freeAddr is a loopback address whose port was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr, nil
}

// startBackend starts the bench backend and writes its OpenAPI document
// (the path returned).
func (r *runner) startBackend() (*proc, string, error) {
	be, err := r.start("backend", []string{r.bins.self, "-role", "backend"})
	if err != nil {
		return nil, "", err
	}
	r.backend = be.url
	doc := filepath.Join(r.tmp, "bench-openapi.json")
	return be, doc, os.WriteFile(doc, openAPIDoc(r.backend), 0o644)
}

// setUp starts the backend, the proxy, Redis, the gateways and the SDK
// server, and opens one session on each session-era target.
func (r *runner) setUp() error {
	be, doc, err := r.startBackend()
	if err != nil {
		return err
	}
	px, err := r.start("proxy", []string{r.bins.self, "-role", "proxy", r.backend})
	if err != nil {
		return err
	}
	if r.redis, err = startRedis(r.tmp); err != nil {
		return err
	}
	gm, err := r.start("gateway (memory)", r.gatewayArgs(doc))
	if err != nil {
		return err
	}
	gr, err := r.start("gateway (redis)", r.gatewayArgs(doc, "--redis-url", r.redis.url(), "--redis-prefix", "bench1:"))
	if err != nil {
		return err
	}
	var replicas []*proc
	var bases []string
	for i := range 3 {
		p, err := r.start(fmt.Sprintf("gateway replica %d", i+1), r.gatewayArgs(doc, "--redis-url", r.redis.url(), "--redis-prefix", "bench3:"))
		if err != nil {
			return err
		}
		replicas = append(replicas, p)
		bases = append(bases, strings.TrimSuffix(p.url, "/mcp"))
	}
	lb, err := r.start("round-robin proxy", append([]string{r.bins.self, "-role", "rr"}, bases...))
	if err != nil {
		return err
	}
	// The same topology with plain reverse proxies in the gateways' place:
	// what three replicas behind a load balancer cost without the gateway.
	var proxies []*proc
	var proxyBases []string
	for i := range 3 {
		p, err := r.start(fmt.Sprintf("proxy replica %d", i+1), []string{r.bins.self, "-role", "proxy", r.backend})
		if err != nil {
			return err
		}
		proxies = append(proxies, p)
		proxyBases = append(proxyBases, strings.TrimSuffix(p.url, "/"))
	}
	lbProxies, err := r.start("round-robin proxy (proxies)", append([]string{r.bins.self, "-role", "rr"}, proxyBases...))
	if err != nil {
		return err
	}
	sdk, err := r.start("sdk server", []string{r.bins.sdk, "-backend", r.backend})
	if err != nil {
		return err
	}
	// The memory gateway again, with authentication on: every request
	// carries one bearer token, which the gateway verifies once and then
	// finds in its cache of verified tokens.
	if r.issuer, err = startIssuer(); err != nil {
		return err
	}
	ga, audience, err := r.startAuthGateway(doc)
	if err != nil {
		return err
	}
	token, err := r.issuer.token(audience, "bench", 2*time.Hour)
	if err != nil {
		return err
	}
	bearer := http.Header{"Authorization": {"Bearer " + token}}

	// session opens a session on url, sending extra (nil: nothing more) with
	// the handshake and with every call.
	session := func(url string, extra http.Header) (func(string) *callSpec, error) {
		sid, err := openSession(r.hc, url, extra)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", url, err)
		}
		return func(size string) *callSpec { return sessionSpec(url, sid, size).withHeader(extra) }, nil
	}
	gmSpec, err := session(gm.url, nil)
	if err != nil {
		return err
	}
	gaSpec, err := session(ga.url, bearer)
	if err != nil {
		return err
	}
	grSpec, err := session(gr.url, nil)
	if err != nil {
		return err
	}
	lbURL := strings.TrimSuffix(lb.url, "/") + "/mcp"
	g3Spec, err := session(lbURL, nil)
	if err != nil {
		return err
	}
	sdkSpec, err := session(sdk.url, nil)
	if err != nil {
		return err
	}
	pids := func(ps ...*proc) []int {
		var out []int
		for _, p := range ps {
			out = append(out, p.pid())
		}
		return out
	}
	r.targets = []*target{
		{key: "direct", label: "direct REST", spec: func(s string) *callSpec { return restSpec(r.backend, s) }, pids: pids(be)},
		{key: "proxy", label: "reverse proxy", spec: func(s string) *callSpec { return restSpec(px.url, s) }, pids: pids(px)},
		{key: "gw-mem", label: "gateway, memory", spec: gmSpec, pids: pids(gm)},
		{key: "gw-stateless", label: "gateway, memory, stateless 2026-07-28", spec: func(s string) *callSpec { return statelessSpec(gm.url, s) }, pids: pids(gm)},
		{key: "gw-auth", label: "gateway, memory, bearer token", spec: gaSpec, pids: pids(ga)},
		{key: "gw-auth-stateless", label: "gateway, memory, stateless, bearer token", spec: func(s string) *callSpec { return statelessSpec(ga.url, s).withHeader(bearer) }, pids: pids(ga)},
		{key: "gw-redis", label: "gateway, redis", spec: grSpec, pids: pids(gr), redis: true, prefix: "bench1:"},
		{key: "gw-redis-3", label: "3 gateways, redis, round-robin", spec: g3Spec, pids: pids(replicas...), redis: true, prefix: "bench3:"},
		{key: "proxy-3", label: "3 reverse proxies, round-robin", spec: func(s string) *callSpec { return restSpec(strings.TrimSuffix(lbProxies.url, "/"), s) }, pids: pids(proxies...)},
		{key: "sdk", label: "Go SDK server", spec: sdkSpec, pids: pids(sdk)},
	}
	if r.opts.only != "" {
		keep := map[string]bool{"proxy": true}
		for k := range strings.SplitSeq(r.opts.only, ",") {
			k = strings.TrimSpace(k)
			if k == "" {
				continue
			}
			if r.target(k) == nil {
				return fmt.Errorf("-targets: no target %q", k)
			}
			keep[k] = true
		}
		r.targets = slices.DeleteFunc(r.targets, func(t *target) bool { return !keep[t.key] })
	}
	// One call of each target and payload before any is measured: a target
	// that refuses every call (a 401 for a token the gateway does not
	// accept, say) stops the run here instead of being measured as a stream
	// of fast failures.
	for _, t := range r.targets {
		for _, size := range sizes {
			if err := newWorker(t.spec(size), r.hc).do(context.Background()); err != nil {
				return fmt.Errorf("%s, %s: first call: %w", t.key, size, err)
			}
		}
	}
	return nil
}

// ownCPU is the CPU time used so far by this process and every server it
// started.
func (r *runner) ownCPU() time.Duration {
	pids := []int{os.Getpid(), r.redis.cmd.Process.Pid}
	for _, p := range r.procs {
		pids = append(pids, p.pid())
	}
	return cpuTimes(pids)
}

func (r *runner) target(key string) *target {
	for _, t := range r.targets {
		if t.key == key {
			return t
		}
	}
	return nil
}

// measure runs everything, in an order that keeps the load figures clean:
// calls first, then the figures that leave sessions or load documents.
func (r *runner) measure() error {
	logf("starting servers")
	if err := r.setUp(); err != nil {
		return err
	}
	r.res.payloadSz = map[string]int{}
	for s, p := range payloads {
		r.res.payloadSz[s] = len(p)
	}
	r.res.loadBefore = loadAverage()
	ours0 := r.ownCPU()
	busy0, total0 := machineBusy()
	r.calibrate()
	r.rounds()
	busy1, total1 := machineBusy()
	ours1 := r.ownCPU()
	r.res.loadAfter = loadAverage()
	if total1 > total0 {
		r.res.othersShare = max(0, float64(busy1-busy0-(ours1-ours0))/float64(total1-total0))
	}
	if r.opts.calls {
		return nil
	}
	r.cacheMisses()
	r.goBenchmarks()
	r.sessionMemory()
	r.githubFigures()
	return nil
}

const (
	maxClosedCalls = 5_000_000
	openConns      = 64
	warmConns      = 8
)

func (r *runner) warm(spec *callSpec) {
	r.hc.CloseIdleConnections()
	d := min(r.opts.phase/4, 500*time.Millisecond)
	closedLoop(spec, r.hc, warmConns, d, maxClosedCalls)
}

// calibrate sets the fixed rate of the open-loop phase: half of what the
// proxy sustains at 32 connections (the median of three measurements).
func (r *runner) calibrate() {
	r.rate = map[string]float64{}
	px := r.target("proxy")
	for _, size := range sizes {
		spec := px.spec(size)
		r.warm(spec)
		var tputs []float64
		for range 3 {
			tputs = append(tputs, closedLoop(spec, r.hc, 32, r.opts.phase, maxClosedCalls).throughput())
		}
		sat := median(tputs)
		r.rate[size] = max(50, sat/2)
		logf("calibration %s: proxy saturates at %.0f calls/s (%.0f); fixed rate %.0f calls/s", size, sat, tputs, r.rate[size])
	}
	r.res.rates = r.rate
}

// rounds measures every target and payload once per round; each round
// starts at a different target so none is always measured first or last.
func (r *runner) rounds() {
	r.res.samples = map[string][]sample{}
	for round := range r.opts.rounds {
		for _, size := range sizes {
			n := len(r.targets)
			for i := range n {
				t := r.targets[(i+round)%n]
				s := r.measureTarget(t, size)
				r.res.samples[t.key+"/"+size] = append(r.res.samples[t.key+"/"+size], s)
				logf("round %d %-4s %-17s c1 %6.0f/s  c32 %6.0f/s  p50 %7s p99 %7s  cpu %6s/call  redis %.3f/call  errors %d",
					round+1, size, t.key, s.tput1, s.tput32, s.p50.Round(time.Microsecond), s.p99.Round(time.Microsecond),
					s.cpuFixed.Round(100*time.Nanosecond), s.redisPerCall, s.errors)
				if s.firstErr != "" {
					logf("  first error: %s", s.firstErr)
				}
			}
		}
	}
}

// measureTarget runs the three phases: closed loop at 1 and at 32
// connections, then the open loop at the fixed rate.
func (r *runner) measureTarget(t *target, size string) sample {
	spec := t.spec(size)
	r.warm(spec)
	var s sample
	c1 := closedLoop(spec, r.hc, 1, r.opts.phase, maxClosedCalls)
	s.tput1 = c1.throughput()

	var before map[string]int64
	if t.redis {
		before = r.redis.commandCounts()
	}
	cpu0 := cpuTimes(t.pids)
	c32 := closedLoop(spec, r.hc, 32, r.opts.phase, maxClosedCalls)
	cpu1 := cpuTimes(t.pids)
	s.tput32 = c32.throughput()
	if c32.Calls > 0 {
		s.cpu32 = (cpu1 - cpu0) / time.Duration(c32.Calls)
	}

	grace := min(r.opts.phase, 2*time.Second)
	open := openLoop(spec, r.hc, r.rate[size], r.opts.phase, grace, openConns)
	cpu2 := cpuTimes(t.pids)
	if open.Calls > 0 {
		s.cpuFixed = (cpu2 - cpu1) / time.Duration(open.Calls)
	}
	s.p50, s.p99 = open.percentile(0.50), open.percentile(0.99)
	if t.redis {
		total, byName := commandDelta(before, r.redis.commandCounts())
		if calls := c32.Calls + open.Calls; calls > 0 {
			s.redisPerCall = float64(total) / float64(calls)
		}
		s.redisCmds = byName
	}
	s.errors = c1.Errors + c32.Errors + open.Errors
	s.unsent = open.Unsent
	for _, e := range []string{c1.FirstErr, c32.FirstErr, open.FirstErr} {
		if e != "" && s.firstErr == "" {
			s.firstErr = e
		}
	}
	return s
}

// cacheMisses counts the Redis commands of the first call of a fresh
// session: on the single replica, and on each of the three replicas.
func (r *runner) cacheMisses() {
	for _, key := range []string{"gw-redis", "gw-redis-3"} {
		t := r.target(key)
		if t == nil {
			continue
		}
		url := t.spec("1k").url
		m := missSample{target: key, names: map[string]int64{}}
		for range 5 {
			sid, err := openSession(r.hc, url, nil)
			if err != nil {
				logf("cache miss %s: %v", key, err)
				break
			}
			w := newWorker(sessionSpec(url, sid, "1k"), r.hc)
			calls := 1
			if key == "gw-redis-3" {
				calls = 3 // round robin: the first call on every replica
			}
			before := r.redis.commandCounts()
			for range calls {
				if err := w.do(context.Background()); err != nil {
					logf("cache miss %s: %v", key, err)
				}
			}
			total, names := commandDelta(before, r.redis.commandCounts())
			m.cmds = append(m.cmds, total)
			for k, v := range names {
				m.names[k] += v
			}
		}
		r.res.missCmds = append(r.res.missCmds, m)
	}
}

// benchLine is one line of go test -bench output.
type benchLine struct {
	name    string
	metrics map[string]float64 // unit → value
}

// goBenchmarks runs this package's in-process benchmarks against the run's
// backend (a separate process, so its allocations are not counted).
func (r *runner) goBenchmarks() {
	hot, idle, count := "2000x", "10000x", "3"
	if r.opts.quick {
		hot, idle, count = "300x", "2000x", "1"
	}
	for _, args := range [][]string{
		{"-bench", "^BenchmarkHotPath$", "-benchtime", hot},
		{"-bench", "^BenchmarkIdleSession$", "-benchtime", idle},
	} {
		logf("go test %s", strings.Join(args, " "))
		cmd := exec.Command("go", append([]string{"test", "-run", "^$", "-benchmem", "-count", count}, append(args, "./bench")...)...)
		cmd.Dir = r.root
		cmd.Env = append(os.Environ(), "BENCH_BACKEND_URL="+r.backend)
		out, err := cmd.CombinedOutput()
		if err != nil {
			r.res.benchErr += fmt.Sprintf("go test %s: %v\n%s\n", strings.Join(args, " "), err, out)
			continue
		}
		r.res.benches = append(r.res.benches, parseBench(out)...)
	}
}

func parseBench(out []byte) []benchLine {
	var lines []benchLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i] // the GOMAXPROCS suffix
			}
		}
		b := benchLine{name: name, metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				b.metrics[f[i+1]] = v
			}
		}
		lines = append(lines, b)
	}
	return lines
}

// sessionMemory is the Redis cost of idle sessions (the in-process cost
// comes from BenchmarkIdleSession, which can read the live heap exactly).
type sessionMemory struct {
	n           int
	redisBefore int64
	redisAfter  int64
	keyBytes    float64
	keysSampled int
	failed      string
}

func (r *runner) sessionMemory() {
	n := r.opts.sessions
	m := sessionMemory{n: n}
	gr := r.target("gw-redis")
	if gr == nil {
		m.failed = "gw-redis is not among -targets"
		r.res.sessMem = m
		return
	}
	logf("opening %d idle sessions on the redis gateway", n)
	url := gr.spec("1k").url
	m.redisBefore = r.redis.usedMemory()
	for i := range n {
		if _, err := openSession(r.hc, url, nil); err != nil {
			m.failed = fmt.Sprintf("session %d on %s: %v", i, gr.key, err)
			break
		}
	}
	m.redisAfter = r.redis.usedMemory()
	m.keyBytes, m.keysSampled = r.redis.keyMemory("bench1:s:*", 200)
	r.res.sessMem = m
}

// githubFigures: loading GitHub's description and generating its tools,
// against decoding it with encoding/json; then tools/list of all its tools.
type githubFigures struct {
	file       string
	size       int64
	toolsWall  []time.Duration
	toolsPeak  []int64
	decodeWall []time.Duration
	decodePeak []int64
	listWall   []time.Duration
	listBytes  int
	listPages  int
	listTools  int
	serveRSS   int64
	servePeak  int64
	startWall  []time.Duration // process start to listening
	startPeak  []int64         // peak RSS of the serving gateway once listening
	err        string
}

func (r *runner) githubFigures() {
	file := filepath.Join(r.opts.specsDir, "github-api.github.com.json")
	g := &githubFigures{file: file}
	r.res.github = g
	st, err := os.Stat(file)
	if err != nil {
		g.err = fmt.Sprintf("GitHub description not found (%v); set -specs or MCPGW_SPECS_DIR", err)
		return
	}
	g.size = st.Size()
	reps := 3
	if r.opts.quick {
		reps = 1
	}
	logf("loading GitHub's description (%d reps)", reps)
	// The three kinds of run are interleaved so that other load on the
	// machine weighs on each alike. The last serving gateway stays up for
	// the listing.
	var gw *proc
	for rep := range reps {
		w, p, err := runMeasured([]string{r.bins.gateway, "tools", "--openapi", file, "--format", "json", "--log-level", "error"})
		if err != nil {
			g.err = err.Error()
			return
		}
		g.toolsWall, g.toolsPeak = append(g.toolsWall, w), append(g.toolsPeak, p)
		w, p, err = runMeasured([]string{r.bins.self, "-role", "decode", file})
		if err != nil {
			g.err = err.Error()
			return
		}
		g.decodeWall, g.decodePeak = append(g.decodeWall, w), append(g.decodePeak, p)

		start := time.Now()
		gw, err = r.start("gateway (GitHub)", []string{r.bins.gateway, "--openapi", file, "--upstream", "http://127.0.0.1:9",
			"--listen", "127.0.0.1:0", "--log-level", "error"})
		if err != nil {
			g.err = err.Error()
			return
		}
		w = time.Since(start)
		_, p = memStatus(gw.pid())
		g.startWall, g.startPeak = append(g.startWall, w), append(g.startPeak, p)
		if rep < reps-1 {
			gw.stop()
		}
	}
	defer gw.stop()
	sid, err := openSession(r.hc, gw.url, nil)
	if err != nil {
		g.err = err.Error()
		return
	}
	for rep := range reps + 1 { // the first listing warms up and is not counted
		var wall time.Duration
		cursor, pages, bytesTotal, tools := "", 0, 0, 0
		for {
			params := `{}`
			if cursor != "" {
				c, _ := json.Marshal(cursor)
				params = `{"cursor":` + string(c) + `}`
			}
			t0 := time.Now()
			status, _, body, err := postMCP(r.hc, gw.url, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":`+params+`}`, nil)
			wall += time.Since(t0)
			if err != nil || status != http.StatusOK {
				g.err = fmt.Sprintf("tools/list: %v status %d", err, status)
				return
			}
			var page struct {
				Result struct {
					Tools      []json.RawMessage `json:"tools"`
					NextCursor string            `json:"nextCursor"`
				} `json:"result"`
			}
			if err := json.Unmarshal(body, &page); err != nil {
				g.err = fmt.Sprintf("tools/list: %v", err)
				return
			}
			pages++
			bytesTotal += len(body)
			tools += len(page.Result.Tools)
			cursor = page.Result.NextCursor
			if cursor == "" || pages > 1000 {
				break
			}
		}
		if rep > 0 {
			g.listWall = append(g.listWall, wall)
		}
		g.listPages, g.listBytes, g.listTools = pages, bytesTotal, tools
	}
	g.serveRSS, g.servePeak = memStatus(gw.pid())
}
