package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// figures are the medians over rounds of one target and payload.
type figures struct {
	tput1, tput32 float64
	p50, p99      time.Duration
	cpuFixed      time.Duration
	cpu32         time.Duration
	redisPerCall  float64
	errors        int64
	unsent        int64
	firstErr      string           // of the first round that had an error
	redisCmds     map[string]int64 // summed over rounds
}

func median[T int64 | float64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func pick[T any](ss []sample, f func(sample) T) []T {
	out := make([]T, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

func (r *runner) figures(key, size string) figures {
	ss := r.res.samples[key+"/"+size]
	f := figures{
		tput1:        median(pick(ss, func(s sample) float64 { return s.tput1 })),
		tput32:       median(pick(ss, func(s sample) float64 { return s.tput32 })),
		p50:          median(pick(ss, func(s sample) time.Duration { return s.p50 })),
		p99:          median(pick(ss, func(s sample) time.Duration { return s.p99 })),
		cpuFixed:     median(pick(ss, func(s sample) time.Duration { return s.cpuFixed })),
		cpu32:        median(pick(ss, func(s sample) time.Duration { return s.cpu32 })),
		redisPerCall: median(pick(ss, func(s sample) float64 { return s.redisPerCall })),
		redisCmds:    map[string]int64{},
	}
	for _, s := range ss {
		f.errors += s.errors
		f.unsent += s.unsent
		if f.firstErr == "" {
			f.firstErr = s.firstErr
		}
		for k, v := range s.redisCmds {
			f.redisCmds[k] += v
		}
	}
	return f
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)) }
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
func mb(b int64) string         { return fmt.Sprintf("%.0f MB", float64(b)/1e6) }

func machine() [][2]string {
	host, _ := os.Hostname()
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return [][2]string{
		{"host", host},
		{"CPU", fmt.Sprintf("%s, %d cores", cpu, runtime.NumCPU())},
		{"Go", runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH},
		{"kernel", strings.TrimSpace(string(kernel))},
	}
}

func gitCommit(root string) string {
	cmd := exec.Command("git", "describe", "--always", "--dirty", "--exclude", "*")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func (r *runner) report() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	host, _ := os.Hostname()
	p("# mcp-gateway benchmark: %s, %s\n\n", host, time.Now().Format("2006-01-02 15:04"))
	p("| machine | |\n|---|---|\n")
	for _, kv := range machine() {
		p("| %s | %s |\n", kv[0], kv[1])
	}
	mode := "full"
	if r.opts.quick {
		mode = "quick"
	}
	p("| commit | %s |\n", gitCommit(r.root))
	if r.opts.docOnly {
		p("| mode | %s, GitHub's description only (-doc-only) |\n", mode)
		p("| run took | %s |\n", r.res.took.Round(time.Second))
		p("| other load | load average %s at the end |\n\n", loadAverage())
		r.reportGitHub(p)
		p("| figure | target | measured | |\n|---|---|---|---|\n")
		r.reportGitHubTarget(p)
		return b.String()
	}
	p("| mode | %s: %d rounds, %s per load phase, medians over rounds |\n", mode, r.opts.rounds, r.opts.phase)
	p("| run took | %s |\n", r.res.took.Round(time.Second))
	p("| other load | load average %s before the calls, %s after; processes outside this run used %.0f%% of all cores while the calls were measured |\n\n",
		r.res.loadBefore, r.res.loadAfter, 100*r.res.othersShare)

	p("## Calls\n\n")
	p("Every server is its own process on loopback, sharing the %d cores with the load generator and the backend. ", runtime.NumCPU())
	p("*calls/s*: closed loop (each connection sends its next call when the last is answered). ")
	p("*p50/p99*: open loop at a fixed rate of half the proxy's 32-connection throughput (")
	for i, s := range sizes {
		if i > 0 {
			p(", ")
		}
		p("%s: %.0f calls/s", s, r.rate[s])
	}
	p("), latency counted from each call's scheduled send time. ")
	p("*CPU/call*: user+system time of the serving process(es) from /proc during the fixed-rate phase ")
	p("(for 3 gateways: the three replicas, not the round-robin proxy). *Redis cmds/call*: INFO commandstats over the 32-connection and fixed-rate phases. ")
	p("Ratios are to the reverse proxy.")
	if r.target("gw-auth") != nil || r.target("gw-auth-stateless") != nil {
		p(" *bearer token*: a gateway of its own with authentication on (`--auth-issuer`, an issuer in the bench process with one RSA key); ")
		p("every request carries the same RS256 token, which the gateway verifies once and then finds in its cache of verified tokens.")
	}
	p("\n\n")
	for _, size := range sizes {
		px := r.figures("proxy", size)
		p("### %s payload (%d bytes from the backend)\n\n", strings.ToUpper(size[:len(size)-1])+" KB", r.res.payloadSz[size])
		p("| target | calls/s, 1 conn | calls/s, 32 conns | ×proxy | p50 | p99 | p99 ×proxy | CPU/call | ×proxy | CPU/call at 32 conns | Redis cmds/call | errors |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, t := range r.targets {
			f := r.figures(t.key, size)
			redis := "–"
			if t.redis {
				redis = fmt.Sprintf("%.4f", f.redisPerCall)
			}
			errs := fmt.Sprint(f.errors)
			if f.unsent > 0 {
				errs += fmt.Sprintf(" (+%d unsent)", f.unsent)
			}
			p("| %s | %.0f | %.0f | %.2f | %s | %s | %.2f | %s | %.2f | %s | %s | %s |\n", t.label,
				f.tput1, f.tput32, ratio(f.tput32, px.tput32), ms(f.p50), ms(f.p99), ratio(float64(f.p99), float64(px.p99)),
				us(f.cpuFixed), ratio(float64(f.cpuFixed), float64(px.cpuFixed)), us(f.cpu32), redis, errs)
		}
		p("\n")
		// Failed calls are not in the figures above (calls/s and CPU per
		// call count answered calls); say what they were.
		for _, t := range r.targets {
			if f := r.figures(t.key, size); f.errors > 0 {
				p("- **%s: %d calls failed**; the first: `%.200s`\n", t.label, f.errors, f.firstErr)
			}
		}
		p("\n")
	}
	r.reportRedis(p)
	if !r.opts.calls {
		r.reportAllocs(p)
		r.reportGitHub(p)
		r.reportSessions(p)
	}
	r.reportTargets(p)
	return b.String()
}

func (r *runner) reportRedis(p func(string, ...any)) {
	if r.target("gw-redis") == nil && r.target("gw-redis-3") == nil {
		return
	}
	p("## Redis commands\n\n")
	p("| target | payload | commands over all rounds (c=32 and fixed-rate phases) |\n|---|---|---|\n")
	for _, key := range []string{"gw-redis", "gw-redis-3"} {
		if r.target(key) == nil {
			continue
		}
		for _, size := range sizes {
			f := r.figures(key, size)
			p("| %s | %s | %s |\n", r.target(key).label, size, cmdList(f.redisCmds))
		}
	}
	p("\nFirst `tools/call` of a fresh session (a cache miss on every replica it reaches), Redis commands:\n\n")
	for _, m := range r.res.missCmds {
		what := "one call"
		if m.target == "gw-redis-3" {
			what = "three calls, one per replica"
		}
		p("- %s (%s): %v per session (%s)\n", r.target(m.target).label, what, m.cmds, cmdList(m.names))
	}
	p("\n")
}

func cmdList(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// bench returns the median metrics of a go test benchmark over -count.
func (r *runner) bench(name string) map[string]float64 {
	vals := map[string][]float64{}
	for _, b := range r.res.benches {
		if b.name == name {
			for k, v := range b.metrics {
				vals[k] = append(vals[k], v)
			}
		}
	}
	out := map[string]float64{}
	for k, v := range vals {
		out[k] = median(v)
	}
	return out
}

func (r *runner) reportAllocs(p func(string, ...any)) {
	p("## Allocations per call (in process)\n\n")
	p("`go test -bench BenchmarkHotPath ./bench`: the handler called in process, the backend in its own process over loopback. ")
	p("`direct` is the client side of the REST call alone.\n\n")
	if r.res.benchErr != "" {
		p("```\n%s```\n\n", r.res.benchErr)
	}
	p("| payload | case | allocs/call | ×proxy | bytes/call | ×proxy | ns/call |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, size := range sizes {
		px := r.bench("BenchmarkHotPath/" + size + "/proxy")
		for _, c := range []string{"direct", "proxy", "gateway", "gateway-stateless"} {
			m := r.bench("BenchmarkHotPath/" + size + "/" + c)
			if len(m) == 0 {
				continue
			}
			p("| %s | %s | %.0f | %.2f | %.0f | %.2f | %.0f |\n", size, c, m["allocs/op"], ratio(m["allocs/op"], px["allocs/op"]),
				m["B/op"], ratio(m["B/op"], px["B/op"]), m["ns/op"])
		}
	}
	p("\n")
}

func (r *runner) reportGitHub(p func(string, ...any)) {
	g := r.res.github
	p("## GitHub's REST description\n\n")
	if g == nil {
		return
	}
	if g.err != "" {
		p("Not measured: %s\n\n", g.err)
		if len(g.toolsWall) == 0 {
			return
		}
	}
	tw, tp := median(g.toolsWall), median(g.toolsPeak)
	sw, sp := median(g.startWall), median(g.startPeak)
	dw, dp := median(g.decodeWall), median(g.decodePeak)
	p("`%s` (%.1f MB), medians of %d runs each, each run a fresh process. ", "github-api.github.com.json", float64(g.size)/1e6, len(g.toolsWall))
	p("The ratios are to the plain decode in the same run; the target (≤ 5× time, ≤ 4× peak RSS) applies to each of the two gateway rows.\n\n")
	p("| | wall time | peak RSS | time ÷ decode | peak RSS ÷ decode |\n|---|---:|---:|---:|---:|\n")
	p("| `mcp-gateway tools --openapi FILE --format json` (load, generate, print %d tools) | %s | %s | %.2f× | %.2f× |\n",
		g.listTools, ms(tw), mb(tp), ratio(float64(tw), float64(dw)), ratio(float64(tp), float64(dp)))
	if len(g.startWall) > 0 {
		p("| `mcp-gateway --openapi FILE` serving: process start to listening (load, generate, no printing) | %s | %s | %.2f× | %.2f× |\n",
			ms(sw), mb(sp), ratio(float64(sw), float64(dw)), ratio(float64(sp), float64(dp)))
	}
	p("| plain `encoding/json` decode of the file into `any` | %s | %s | 1× | 1× |\n\n", ms(dw), mb(dp))
	if len(g.listWall) > 0 {
		p("`tools/list` of all %d tools on a live session: %d pages, %.1f MB in all, %s (median of %d listings after a warm-up). ",
			g.listTools, g.listPages, float64(g.listBytes)/1e6, ms(median(g.listWall)), len(g.listWall))
		p("The gateway serving this document: RSS %s after listing (peak %s).\n\n", mb(g.serveRSS), mb(g.servePeak))
	}
}

// reportGitHubTarget is the target line for GitHub's description: both
// gateway rows, serving (load and generate) and the tools command (load,
// generate and print), against the plain decode; met only if both are.
func (r *runner) reportGitHubTarget(p func(string, ...any)) {
	g := r.res.github
	if g == nil || len(g.toolsWall) == 0 {
		return
	}
	dw, dp := float64(median(g.decodeWall)), float64(median(g.decodePeak))
	t := ratio(float64(median(g.toolsWall)), dw)
	m := ratio(float64(median(g.toolsPeak)), dp)
	measured := fmt.Sprintf("tools command (load, generate, print): %.2f× time, %.2f× peak", t, m)
	ok := t <= 5 && m <= 4
	if len(g.startWall) > 0 {
		st := ratio(float64(median(g.startWall)), dw)
		sm := ratio(float64(median(g.startPeak)), dp)
		measured = fmt.Sprintf("serving (load, generate): %.2f× time, %.2f× peak; ", st, sm) + measured
		ok = ok && st <= 5 && sm <= 4
	} else {
		ok = false // the serving row was not measured
	}
	p("| GitHub load + tools vs JSON decode | ≤ 5× time, ≤ 4× peak memory | %s | %s |\n", measured, verdict(ok))
}

func (r *runner) reportSessions(p func(string, ...any)) {
	m := r.res.sessMem
	p("## Idle sessions\n\n")
	if m.failed != "" {
		p("Incomplete: %s\n\n", m.failed)
	}
	idle := r.bench("BenchmarkIdleSession/idle")
	recent := r.bench("BenchmarkIdleSession/recent")
	p("| store | how measured | per session |\n|---|---|---:|\n")
	p("| memory | live heap after `initialize` (`BenchmarkIdleSession/idle`, in process) | %.0f B |\n", idle["B/session"])
	p("| memory | same, after one more request (the replica's session cache holds it for 2 s) | %.0f B |\n", recent["B/session"])
	p("| redis | `used_memory` growth over %d sessions | %.0f B |\n", m.n, float64(m.redisAfter-m.redisBefore)/float64(m.n))
	p("| redis | `MEMORY USAGE` of a session key (mean of %d) | %.0f B |\n\n", m.keysSampled, m.keyBytes)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func (r *runner) reportTargets(p func(string, ...any)) {
	p("## Targets (issue 5)\n\n")
	p("Judged on the memory and the single-replica Redis gateway (the worse of the two); the others are shown for reference.\n\n")
	p("| figure | target | measured | |\n|---|---|---|---|\n")
	var gws []string
	judged := 0
	for i, key := range []string{"gw-mem", "gw-redis", "gw-stateless", "gw-auth", "gw-auth-stateless", "gw-redis-3"} {
		if r.target(key) != nil {
			gws = append(gws, key)
			if i < 2 {
				judged++
			}
		}
	}
	row := func(figure, goal string, limit float64, higherBetter bool, val func(key, size string) float64, szs []string) {
		var parts []string
		ok := true
		for _, size := range szs {
			var vs []string
			for i, key := range gws {
				v := val(key, size)
				vs = append(vs, fmt.Sprintf("%s %.2f", key, v))
				if i < judged && ((higherBetter && v < limit) || (!higherBetter && v > limit)) {
					ok = false
				}
			}
			parts = append(parts, size+": "+strings.Join(vs, ", "))
		}
		p("| %s | %s | %s | %s |\n", figure, goal, strings.Join(parts, "; "), verdict(ok))
	}
	cpu := func(key, size string) float64 {
		return ratio(float64(r.figures(key, size).cpuFixed), float64(r.figures("proxy", size).cpuFixed))
	}
	row("CPU per call vs proxy, 1 KB", "≤ 1.25×", 1.25, false, cpu, []string{"1k"})
	row("CPU per call vs proxy, 10 KB", "≤ 1.5×", 1.5, false, cpu, []string{"10k"})
	row("throughput at 32 connections vs proxy", "≥ 0.85×", 0.85, true, func(key, size string) float64 {
		return ratio(r.figures(key, size).tput32, r.figures("proxy", size).tput32)
	}, sizes)
	row("p99 at the fixed rate vs proxy", "≤ 1.5×", 1.5, false, func(key, size string) float64 {
		return ratio(float64(r.figures(key, size).p99), float64(r.figures("proxy", size).p99))
	}, sizes)
	if r.target("gw-redis-3") != nil && r.target("proxy-3") != nil {
		// Not a target of its own: three replicas behind the round-robin
		// proxy compared with three plain proxies in the same place, so the
		// balancer's own cost is on both sides.
		var parts []string
		for _, size := range sizes {
			g, px := r.figures("gw-redis-3", size), r.figures("proxy-3", size)
			parts = append(parts, fmt.Sprintf("%s: throughput %.2f, CPU/call %.2f, p99 %.2f", size,
				ratio(g.tput32, px.tput32), ratio(float64(g.cpuFixed), float64(px.cpuFixed)), ratio(float64(g.p99), float64(px.p99))))
		}
		p("| for reference: 3 gateways vs 3 reverse proxies, both behind the round-robin proxy | – | %s | – |\n", strings.Join(parts, "; "))
	}
	// What a bearer token adds: each authenticated target against the same
	// calls without one (two gateway processes of the same build).
	var authParts []string
	for _, pair := range [][2]string{{"gw-auth", "gw-mem"}, {"gw-auth-stateless", "gw-stateless"}} {
		if r.target(pair[0]) == nil || r.target(pair[1]) == nil {
			continue
		}
		for _, size := range sizes {
			a, n := r.figures(pair[0], size), r.figures(pair[1], size)
			authParts = append(authParts, fmt.Sprintf("%s ÷ %s %s: throughput %.2f, CPU/call %.2f, p99 %.2f", pair[0], pair[1], size,
				ratio(a.tput32, n.tput32), ratio(float64(a.cpuFixed), float64(n.cpuFixed)), ratio(float64(a.p99), float64(n.p99))))
		}
	}
	if len(authParts) > 0 {
		p("| for reference: bearer token vs none | – | %s | – |\n", strings.Join(authParts, "; "))
	}

	// Rows whose figures this run did not measure (-calls-only, -targets)
	// are left out rather than shown as missed.
	if !r.opts.calls {
		r.reportAllocTarget(p)
	}
	if r.target("gw-redis") != nil || r.target("gw-redis-3") != nil {
		r.reportRedisTarget(p)
	}
	if r.target("sdk") != nil {
		r.reportSDKTarget(p, gws[:judged])
	}
	r.reportGitHubTarget(p)
	if !r.opts.calls {
		r.reportSessionTarget(p)
	}
	p("\n")
}

// reportAllocTarget: the in-process benchmark has the memory gateway only.
func (r *runner) reportAllocTarget(p func(string, ...any)) {
	var parts []string
	ok := true
	for _, size := range sizes {
		px := r.bench("BenchmarkHotPath/" + size + "/proxy")["allocs/op"]
		gw := r.bench("BenchmarkHotPath/" + size + "/gateway")["allocs/op"]
		st := r.bench("BenchmarkHotPath/" + size + "/gateway-stateless")["allocs/op"]
		parts = append(parts, fmt.Sprintf("%s: session %.2f, stateless %.2f", size, ratio(gw, px), ratio(st, px)))
		ok = ok && px > 0 && ratio(gw, px) <= 2
	}
	p("| allocations per call vs proxy | ≤ 2× | %s | %s |\n", strings.Join(parts, "; "), verdict(ok))
}

func (r *runner) reportRedisTarget(p func(string, ...any)) {
	var steady []string
	okRedis := true
	for _, key := range []string{"gw-redis", "gw-redis-3"} {
		if r.target(key) == nil {
			continue
		}
		for _, size := range sizes {
			v := r.figures(key, size).redisPerCall
			steady = append(steady, fmt.Sprintf("%s %s %.4f", key, size, v))
			okRedis = okRedis && v < 0.01
		}
	}
	var miss []string
	for _, m := range r.res.missCmds {
		per := float64(median(m.cmds))
		if m.target == "gw-redis-3" {
			per /= 3
		}
		miss = append(miss, fmt.Sprintf("%s %.1f", m.target, per))
		okRedis = okRedis && per <= 1
	}
	p("| Redis round trips per `tools/call` | 0 steady (≤ 1 on a cache miss) | steady: %s; miss, per replica: %s | %s |\n",
		strings.Join(steady, ", "), strings.Join(miss, ", "), verdict(okRedis))
}

// reportSDKTarget compares the judged gateways with the SDK server.
func (r *runner) reportSDKTarget(p func(string, ...any), judged []string) {
	var sdk []string
	okSDK := true
	for _, size := range sizes {
		s := r.figures("sdk", size)
		for _, key := range judged {
			g := r.figures(key, size)
			sdk = append(sdk, fmt.Sprintf("%s %s: %.2f at 32 conns, %.2f at 1", size, key, ratio(g.tput32, s.tput32), ratio(g.tput1, s.tput1)))
			okSDK = okSDK && ratio(g.tput32, s.tput32) >= 2
		}
	}
	p("| throughput vs sdk server | ≥ 2× | %s | %s |\n", strings.Join(sdk, "; "), verdict(okSDK))
}

func (r *runner) reportSessionTarget(p func(string, ...any)) {
	sm := r.res.sessMem
	inProc := r.bench("BenchmarkIdleSession/idle")["B/session"]
	redisB := sm.keyBytes
	redisDelta := float64(sm.redisAfter-sm.redisBefore) / float64(max(1, sm.n))
	p("| idle session footprint | ≤ 2 KB in Redis, ≤ 1 KB in process | Redis %.0f B (key) / %.0f B (used_memory); process %.0f B (heap) | %s |\n",
		redisB, redisDelta, inProc, verdict(max(redisB, redisDelta) <= 2048 && inProc > 0 && inProc <= 1024))
}
