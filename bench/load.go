package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// callSpec is one kind of call a target answers: how to build the request
// and how to tell a good answer from a bad one.
type callSpec struct {
	method string
	url    string
	header http.Header
	// body appends the request body for call id to buf; nil sends none.
	body func(buf []byte, id uint64) []byte
	// ok checks a response: status and body.
	ok func(status int, body []byte) bool
}

// withHeader sets the values of extra on every request of s, replacing
// the spec's own for the same keys: the Authorization of the bearer-token
// targets, on top of a spec built for any target. A nil extra leaves s as
// it is.
func (s *callSpec) withHeader(extra http.Header) *callSpec {
	for k, v := range extra {
		s.header[k] = v
	}
	return s
}

// ids numbers JSON-RPC requests across the whole run, so no two requests
// on a session share an id.
var ids atomic.Uint64

// newLoadClient is the load generator's HTTP client: keep-alive connections
// to loopback, enough idle ones for every worker.
func newLoadClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     2 * time.Minute,
		DisableCompression:  true,
	}}
}

// worker sends calls one after another on its own connection (in practice:
// each worker keeps one keep-alive connection busy).
type worker struct {
	spec   *callSpec
	hc     *http.Client
	header http.Header // this worker's copy: requests never share a map
	req    []byte
	resp   bytes.Buffer
}

func newWorker(spec *callSpec, hc *http.Client) *worker {
	return &worker{spec: spec, hc: hc, header: spec.header.Clone()}
}

var errBadAnswer = errors.New("bad answer")

// do sends one call and reads the whole answer.
func (w *worker) do(ctx context.Context) error {
	var body io.Reader
	if w.spec.body != nil {
		w.req = w.spec.body(w.req[:0], ids.Add(1))
		body = bytes.NewReader(w.req)
	}
	req, err := http.NewRequestWithContext(ctx, w.spec.method, w.spec.url, body)
	if err != nil {
		return err
	}
	req.Header = w.header
	resp, err := w.hc.Do(req)
	if err != nil {
		return err
	}
	w.resp.Reset()
	_, err = w.resp.ReadFrom(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	if !w.spec.ok(resp.StatusCode, w.resp.Bytes()) {
		return fmt.Errorf("%w: status %d: %.200s", errBadAnswer, resp.StatusCode, w.resp.Bytes())
	}
	return nil
}

// loadResult is the outcome of one load phase.
type loadResult struct {
	Calls   int64         // answered correctly
	Errors  int64         // failed or wrong answers
	Elapsed time.Duration // wall time of the phase
	// Open loop only: latency of each call from its intended send time,
	// and how many calls could not be sent before the hard deadline.
	Latencies []time.Duration
	Unsent    int64
	FirstErr  string
}

func (r loadResult) throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Calls) / r.Elapsed.Seconds()
}

// percentile of the open-loop latencies (q in 0..1). Unsent calls count as
// slower than every answered one.
func (r loadResult) percentile(q float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.Latencies)
	slices.Sort(s)
	i := int(float64(len(s))*q+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

type errCounter struct {
	n     atomic.Int64
	once  sync.Once
	first string
}

func (e *errCounter) add(err error) {
	e.n.Add(1)
	e.once.Do(func() { e.first = err.Error() })
}

// closedLoop keeps conns workers busy for dur: each sends its next call as
// soon as the previous one is answered. At most maxCalls calls are sent.
func closedLoop(spec *callSpec, hc *http.Client, conns int, dur time.Duration, maxCalls int64) loadResult {
	ctx, cancel := context.WithTimeout(context.Background(), dur+30*time.Second)
	defer cancel()
	var calls atomic.Int64
	var errs errCounter
	deadline := time.Now().Add(dur)
	start := time.Now()
	var wg sync.WaitGroup
	for range conns {
		w := newWorker(spec, hc)
		wg.Go(func() {
			for time.Now().Before(deadline) && calls.Load()+errs.n.Load() < maxCalls {
				if err := w.do(ctx); err != nil {
					errs.add(err)
					if ctx.Err() != nil {
						return
					}
					continue
				}
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	return loadResult{Calls: calls.Load(), Errors: errs.n.Load(), Elapsed: time.Since(start), FirstErr: errs.first}
}

// openLoop sends calls at a constant rate for dur, whatever the answers'
// pace: call i is due at start + i/rate and its latency is measured from
// then, so a slow answer delays the measurement of the calls queued behind
// it instead of hiding them (no coordinated omission). conns workers send
// the due calls; calls not sent by dur+grace count as unsent and their
// latency as "at least until the deadline".
func openLoop(spec *callSpec, hc *http.Client, rate float64, dur, grace time.Duration, conns int) loadResult {
	n := int(rate * dur.Seconds())
	if n < 1 {
		n = 1
	}
	interval := time.Duration(float64(time.Second) / rate)
	ctx, cancel := context.WithTimeout(context.Background(), dur+grace+10*time.Second)
	defer cancel()
	start := time.Now().Add(20 * time.Millisecond)
	hard := start.Add(dur + grace)
	due := func(i int) time.Time { return start.Add(time.Duration(i) * interval) }

	queue := make(chan int, n)
	go func() {
		defer close(queue)
		for i := range n {
			if d := time.Until(due(i)); d > 0 {
				time.Sleep(d)
			}
			queue <- i
		}
	}()
	lat := make([]time.Duration, n)
	var calls, unsent atomic.Int64
	var errs errCounter
	var wg sync.WaitGroup
	for range conns {
		w := newWorker(spec, hc)
		wg.Go(func() {
			for i := range queue {
				if time.Now().After(hard) {
					unsent.Add(1)
					lat[i] = hard.Sub(due(i))
					continue
				}
				err := w.do(ctx)
				lat[i] = time.Since(due(i))
				if err != nil {
					errs.add(err)
					continue
				}
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	return loadResult{Calls: calls.Load(), Errors: errs.n.Load(), Elapsed: time.Since(start),
		Latencies: lat, Unsent: unsent.Load(), FirstErr: errs.first}
}

// REST calls: the payload, checked by length.
func restSpec(base, size string) *callSpec {
	want := len(payloads[size])
	return &callSpec{
		method: http.MethodGet,
		url:    base + "/payload?size=" + size,
		header: http.Header{"Accept": {"application/json"}},
		ok:     func(status int, body []byte) bool { return status == http.StatusOK && len(body) == want },
	}
}

const (
	sessionVersion   = "2025-06-18"
	statelessVersion = "2026-07-28"
	toolName         = "getPayload"
)

var (
	okResult = []byte(`"structuredContent"`)
	isError  = []byte(`"isError":true`)
)

// mcpOK: a 200 whose result carries structured content and is no error.
// The checks look at bytes, not parsed JSON, so that the load generator
// spends little of the CPU it shares with the servers.
func mcpOK(status int, body []byte) bool {
	return status == http.StatusOK && bytes.Contains(body, okResult) && !bytes.Contains(body, isError)
}

func mcpHeader() http.Header {
	return http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json, text/event-stream"},
	}
}

// sessionSpec: tools/call on a live session of the 2025-06-18 revision.
func sessionSpec(url, sid, size string) *callSpec {
	h := mcpHeader()
	h.Set("Mcp-Session-Id", sid)
	h.Set("MCP-Protocol-Version", sessionVersion)
	tailJSON := `,"method":"tools/call","params":{"name":"` + toolName + `","arguments":{"size":"` + size + `"}}}`
	return &callSpec{
		method: http.MethodPost, url: url, header: h, ok: mcpOK,
		body: func(buf []byte, id uint64) []byte {
			buf = append(buf, `{"jsonrpc":"2.0","id":`...)
			buf = strconv.AppendUint(buf, id, 10)
			return append(buf, tailJSON...)
		},
	}
}

// statelessSpec: tools/call in the 2026-07-28 revision: no session, the
// version and capabilities in _meta, method and name mirrored in headers.
func statelessSpec(url, size string) *callSpec {
	h := mcpHeader()
	h.Set("MCP-Protocol-Version", statelessVersion)
	h.Set("Mcp-Method", "tools/call")
	h.Set("Mcp-Name", toolName)
	tailJSON := `,"method":"tools/call","params":{"name":"` + toolName + `","arguments":{"size":"` + size +
		`"},"_meta":{"io.modelcontextprotocol/protocolVersion":"` + statelessVersion +
		`","io.modelcontextprotocol/clientCapabilities":{}}}}`
	return &callSpec{
		method: http.MethodPost, url: url, header: h, ok: mcpOK,
		body: func(buf []byte, id uint64) []byte {
			buf = append(buf, `{"jsonrpc":"2.0","id":`...)
			buf = strconv.AppendUint(buf, id, 10)
			return append(buf, tailJSON...)
		},
	}
}

// initBody is the initialize request every session starts with: what a
// typical client sends.
const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + sessionVersion +
	`","capabilities":{"roots":{"listChanged":true},"sampling":{}},"clientInfo":{"name":"mcp-gateway-bench","version":"1.0.0"}}}`

// postMCP sends one MCP message, with the values of extra (nil: none) in
// its header, and returns the status, the session id header and the body.
func postMCP(hc *http.Client, url, sid, body string, extra http.Header) (int, string, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header = mcpHeader()
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", sessionVersion)
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), b, err
}

// openSession runs the handshake: initialize, then notifications/initialized,
// both with the values of extra (nil: none) in their header.
func openSession(hc *http.Client, url string, extra http.Header) (string, error) {
	status, sid, body, err := postMCP(hc, url, "", initBody, extra)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK || sid == "" {
		return "", fmt.Errorf("initialize: status %d, session %q: %.300s", status, sid, body)
	}
	status, _, body, err = postMCP(hc, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, extra)
	if err != nil {
		return "", err
	}
	if status != http.StatusAccepted {
		return "", fmt.Errorf("notifications/initialized: status %d: %.300s", status, body)
	}
	return sid, nil
}
