package main

// -sizing: what a replica and Redis need per session, per open push stream
// and per resource subscription, for the README's sizing sections. One
// gateway at a time (memory store, then Redis), each its own process on
// loopback with a private redis-server; the figures are differences of
// one process's memory before and after opening many of a thing, divided
// by how many.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// sizingGOGC is the GOGC of the measured gateways: garbage collected
// almost at once, so that the heap read at any moment is close to what is
// live (at the default 100 a heap may hold as much garbage as live data;
// the report says so).
const sizingGOGC = "5"

// sizingDoc adds declared resources to subscribe to: a text template never
// polled, so subscriptions cost only their store entries.
const sizingConfig = `resources:
  - uri_template: notes://{id}
    name: note-card
    text: "Note {{.id}}"
`

// gatewaySizes is one gateway's memory at a moment.
type gatewaySizes struct {
	rss, heap, goroutines int64
}

// sizingResult is what -sizing measured.
type sizingResult struct {
	sessions, streams, subs, shared, logEvents int

	mem                                              [3]gatewaySizes // memory gateway: before, after sessions, after streams
	red                                              [3]gatewaySizes // redis gateway: the same
	redSwept                                         gatewaySizes    // redis gateway once idle sessions left its cache
	redisBase, redisSessions, redisSubs, redisShared int64           // used_memory
	logBytes, logLen, logData                        int64
	clients                                          [3]int64  // Redis connected_clients at the redis gateway's stages
	kinds, subKinds                                  []keyKind // Redis keys after the sessions, after the subscriptions
	took                                             time.Duration
	err                                              string
}

func (r *runner) sizing() string {
	started := time.Now()
	n := r.opts.sessions
	res := &sizingResult{sessions: n, streams: min(max(r.opts.streams, 1), n), subs: n, shared: min(1000, n), logEvents: 2000}
	if err := r.measureSizing(res); err != nil {
		res.err = err.Error()
		logf("sizing: %v", err)
	}
	res.took = time.Since(started)
	return res.report()
}

func (r *runner) measureSizing(res *sizingResult) error {
	_, doc, err := r.startBackend()
	if err != nil {
		return err
	}
	cfgFile := filepath.Join(r.tmp, "sizing.yaml")
	if err := os.WriteFile(cfgFile, []byte(sizingConfig), 0o644); err != nil {
		return err
	}
	if r.redis, err = startRedis(r.tmp); err != nil {
		return err
	}
	// Every session comes from one address: no per-client or total cap.
	// A machine shared with other work can stall Redis past the default
	// 1s redis_timeout, which would end the run, not change a figure.
	common := []string{"--config", cfgFile, "--max-sessions-per-client", "0", "--max-sessions", "0", "--sse-keepalive", "0", "--redis-timeout", "5s"}

	logf("sizing: memory-store gateway, %d sessions, %d streams", res.sessions, res.streams)
	mg, err := r.start("gateway (memory)", r.gatewayArgs(doc, common...), "GOGC="+sizingGOGC)
	if err != nil {
		return err
	}
	if _, err := r.sessionsAndStreams(mg, res, &res.mem, nil); err != nil {
		return err
	}
	mg.stop()

	logf("sizing: redis gateway, %d sessions, %d streams", res.sessions, res.streams)
	rg, err := r.start("gateway (redis)", r.gatewayArgs(doc, append(common, "--redis-url", r.redis.url(), "--redis-prefix", "sz:")...), "GOGC="+sizingGOGC)
	if err != nil {
		return err
	}
	sids, err := r.sessionsAndStreams(rg, res, &res.red, func(stage int) {
		switch stage {
		case 0:
			res.redisBase = r.redis.usedMemory()
		case 1:
			res.redisSessions = r.redis.usedMemory()
			res.kinds = r.redis.keyKinds("sz:")
		}
		res.clients[stage] = r.redis.connectedClients()
	})
	if err != nil {
		return err
	}
	url := rg.url
	logf("sizing: %d subscriptions to distinct URIs, then %d to one URI", res.subs, res.shared)
	if err := parallel(len(sids), func(i int) error {
		return subscribe(r.hc, url, sids[i], fmt.Sprintf("notes://%d", i))
	}); err != nil {
		return err
	}
	res.redisSubs = r.redis.usedMemory()
	if err := parallel(res.shared, func(i int) error { return subscribe(r.hc, url, sids[i], "notes://shared") }); err != nil {
		return err
	}
	res.redisShared = r.redis.usedMemory()
	res.subKinds = r.redis.keyKinds("sz:")

	// A push log filled while no stream is open: every logging/setLevel
	// confirms itself with an event there.
	sid := sids[len(sids)-1]
	levels := []string{"debug", "info"}
	for i := range res.logEvents {
		if err := expectOK(postMCP(r.hc, url, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"logging/setLevel","params":{"level":%q}}`, i+10, levels[i%2]), nil)); err != nil {
			return fmt.Errorf("setLevel: %w", err)
		}
	}
	res.logLen, res.logBytes, res.logData = r.redis.streamSize("sz:e:{"+sid+"}", "sz:s:{"+sid+"}")

	// A replica's copy of a session lasts 15 × 2 s unless in use; its sweep
	// runs meanwhile.
	logf("sizing: waiting 45s for the redis gateway to drop its copies of the sessions")
	time.Sleep(45 * time.Second)
	res.redSwept = readSizes(rg)
	return nil
}

// sessionsAndStreams fills stages[0] (idle), [1] (after the sessions) and
// [2] (after the streams, on the first sessions); at(stage) runs as each
// is read.
func (r *runner) sessionsAndStreams(p *proc, res *sizingResult, stages *[3]gatewaySizes, at func(stage int)) ([]string, error) {
	read := func(i int) {
		time.Sleep(2 * time.Second) // let the gateway settle (GC, idle conns)
		stages[i] = readSizes(p)
		if at != nil {
			at(i)
		}
	}
	read(0)
	sids := make([]string, res.sessions)
	if err := parallel(res.sessions, func(i int) (err error) {
		sids[i], err = openSession(r.hc, p.url, nil)
		return err
	}); err != nil {
		return nil, err
	}
	read(1)
	streams, err := openStreams(p.url, sids[:res.streams])
	defer streams.close()
	if err != nil {
		return nil, err
	}
	read(2)
	return sids, nil
}

// readSizes reads the gateway's RSS, and its heap and goroutines from
// /metrics ten times 100 ms apart: the least heap is the one read nearest
// after a collection.
func readSizes(p *proc) gatewaySizes {
	var s gatewaySizes
	for i := range 10 {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		one := readSizesOnce(p)
		if i == 0 || one.heap < s.heap {
			s.heap = one.heap
		}
		s.rss, s.goroutines = one.rss, one.goroutines
	}
	return s
}

func readSizesOnce(p *proc) gatewaySizes {
	rss, _ := memStatus(p.pid())
	s := gatewaySizes{rss: rss}
	base := strings.TrimSuffix(p.url, "/mcp")
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return s
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		f, _ := strconv.ParseFloat(v, 64)
		switch name {
		case "go_memstats_heap_alloc_bytes":
			s.heap = int64(f)
		case "go_goroutines":
			s.goroutines = int64(f)
		}
	}
	return s
}

// parallel runs f(0..n-1) on 16 workers and returns the first error.
func parallel(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func expectOK(status int, _ string, body []byte, err error) error {
	if err != nil {
		return err
	}
	if status != http.StatusOK || strings.Contains(string(body), `"error"`) {
		return fmt.Errorf("status %d: %.300s", status, body)
	}
	return nil
}

func subscribe(hc *http.Client, url, sid, uri string) error {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":%q}}`, ids.Add(1), uri)
	if err := expectOK(postMCP(hc, url, sid, body, nil)); err != nil {
		return fmt.Errorf("resources/subscribe %s: %w", uri, err)
	}
	return nil
}

// openStreamSet is a set of open GET push streams.
type openStreamSet struct {
	cancel context.CancelFunc
	hc     *http.Client
	wg     sync.WaitGroup
}

func (s *openStreamSet) close() {
	s.cancel()
	s.wg.Wait()
	s.hc.CloseIdleConnections()
}

// openStreams opens one GET stream per session, each on its own
// connection, and returns once every one has its 200.
func openStreams(url string, sids []string) (*openStreamSet, error) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &openStreamSet{cancel: cancel, hc: &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, DisableKeepAlives: true}}}
	errs := make(chan error, len(sids))
	for _, sid := range sids {
		s.wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", sessionVersion)
			resp, err := s.hc.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				errs <- fmt.Errorf("GET stream: status %d", resp.StatusCode)
				return
			}
			errs <- nil
			_, _ = io.Copy(io.Discard, resp.Body)
		})
	}
	for range sids {
		if err := <-errs; err != nil {
			return s, err
		}
	}
	return s, nil
}

func (res *sizingResult) report() string {
	var b strings.Builder
	kb := func(d int64, n int) string { return fmt.Sprintf("%.2f KB", float64(d)/float64(n)/1000) }
	fmt.Fprintf(&b, "# Sizing figures\n\n`go run ./bench -sizing -sessions %d -streams %d` on %s, %s (%s).\n\n",
		res.sessions, res.streams, hostname(), time.Now().UTC().Format("2006-01-02 15:04 UTC"), res.took.Round(time.Second))
	if res.err != "" {
		fmt.Fprintf(&b, "**The run failed:** %s\n\n", res.err)
	}
	fmt.Fprintf(&b, "Gateways run with GOGC=%s so the heap read is close to what is live; at the default GOGC=100 a\n"+
		"heap may reach twice its live data before a collection.\n\n", sizingGOGC)
	b.WriteString("| gateway | per idle session: heap | per idle session: RSS | per open GET stream: heap | per open GET stream: RSS | goroutines per stream |\n|---|---:|---:|---:|---:|---:|\n")
	for _, g := range []struct {
		name string
		s    [3]gatewaySizes
	}{{"memory store", res.mem}, {"redis store", res.red}} {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.1f |\n", g.name,
			kb(g.s[1].heap-g.s[0].heap, res.sessions), kb(g.s[1].rss-g.s[0].rss, res.sessions),
			kb(g.s[2].heap-g.s[1].heap, res.streams), kb(g.s[2].rss-g.s[1].rss, res.streams),
			float64(g.s[2].goroutines-g.s[1].goroutines)/float64(res.streams))
	}
	fmt.Fprintf(&b, "\nWith Redis a replica's copy of a session is dropped 30 s after it was fetched unless in use; the redis gateway 45 s after the streams closed: heap %.1f MB (idle before: %.1f MB, with the sessions: %.1f MB).\n\n",
		megabytes(res.redSwept.heap), megabytes(res.red[0].heap), megabytes(res.red[1].heap))
	b.WriteString("| Redis (`used_memory` growth) | total | per item |\n|---|---:|---:|\n")
	fmt.Fprintf(&b, "| %d idle sessions | %.1f MB | %s (%.1f MB per 10,000) |\n", res.sessions, megabytes(res.redisSessions-res.redisBase),
		kb(res.redisSessions-res.redisBase, res.sessions), megabytes(res.redisSessions-res.redisBase)*10000/float64(res.sessions))
	fmt.Fprintf(&b, "| %d subscriptions, one URI each | %.1f MB | %s |\n", res.subs, megabytes(res.redisSubs-res.redisSessions), kb(res.redisSubs-res.redisSessions, res.subs))
	fmt.Fprintf(&b, "| %d more subscriptions, all to one URI | %.2f MB | %s |\n", res.shared, megabytes(res.redisShared-res.redisSubs), kb(res.redisShared-res.redisSubs, res.shared))
	fmt.Fprintf(&b, "| a push log after %d small events (`MEMORY USAGE`; stream_max_events 1000 keeps %d, holding %.1f KB of event data) | %.1f KB | %s per event |\n",
		res.logEvents, res.logLen, float64(res.logData)/1000, float64(res.logBytes)/1000, kb(res.logBytes, int(max(res.logLen, 1))))
	fmt.Fprintf(&b, "\nRedis connections of the redis gateway: %d idle, %d with the sessions, %d with %d streams open.\n\n",
		res.clients[0], res.clients[1], res.clients[2], res.streams)
	for _, k := range []struct {
		when  string
		kinds []keyKind
	}{{"after the sessions", res.kinds}, {"after the subscriptions", res.subKinds}} {
		fmt.Fprintf(&b, "Keys %s (prefix `sz:`; mean `MEMORY USAGE` of up to 200 each):", k.when)
		for _, kk := range k.kinds {
			fmt.Fprintf(&b, " `%s` %d × %.0f B;", kk.kind, kk.count, kk.mean)
		}
		b.WriteString("\n\n")
	}
	b.WriteString("Raw readings (bytes):\n\n```\n")
	for _, g := range []struct {
		name string
		s    [3]gatewaySizes
	}{{"memory", res.mem}, {"redis", res.red}} {
		for i, st := range []string{"idle", "sessions", "streams"} {
			fmt.Fprintf(&b, "%-7s %-9s rss=%d heap=%d goroutines=%d\n", g.name, st, g.s[i].rss, g.s[i].heap, g.s[i].goroutines)
		}
	}
	fmt.Fprintf(&b, "redis   swept     rss=%d heap=%d goroutines=%d\n", res.redSwept.rss, res.redSwept.heap, res.redSwept.goroutines)
	fmt.Fprintf(&b, "used_memory base=%d sessions=%d subs=%d shared=%d; log len=%d bytes=%d data=%d\n```\n",
		res.redisBase, res.redisSessions, res.redisSubs, res.redisShared, res.logLen, res.logBytes, res.logData)
	return b.String()
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
func megabytes(n int64) float64 { return float64(n) / 1e6 }
