package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 890123456, time.FixedZone("CET", 3600))

// syncBuffer is an Output the test reads while the writer may write.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newTest(t *testing.T, cfg Config) (*Writer, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	cfg.Metrics = reg
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	w, err := New(cfg)
	require.NoError(t, err)
	require.NotNil(t, w)
	t.Cleanup(func() { w.Close() })
	return w, reg
}

// lines splits the log into lines, requiring each to end in '\n'.
func lines(t *testing.T, s string) []string {
	t.Helper()
	if s == "" {
		return nil
	}
	require.True(t, strings.HasSuffix(s, "\n"), "the last line is terminated")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

var goldenEntries = []Entry{
	{
		Time: t0, Era: "2025-11-25", Session: HashSession("session-id-1"), Subject: "alice@example.com",
		Client: "203.0.113.7", Tool: "github_create_issue",
		Arguments:     json.RawMessage(`{"owner":"o","repo":"r","title":"Bug <b>&","auth":{"Api-Key":"k","user":"u"},"labels":[{"name":"x","token":"t"}]}`),
		BackendStatus: 201, Duration: 12345678 * time.Nanosecond, Outcome: OutcomeOK,
	},
	{
		Time: t0, Replica: "pod-b", Era: "2026-07-28", Subject: "bob", Client: "bob", Tool: "billing_refund",
		Duration: 150 * time.Microsecond, Outcome: OutcomeDenied, Reason: ReasonInsufficientScope, Detail: "billing:write",
	},
	{
		Time: t0, Tool: "upload", Arguments: json.RawMessage(`{"data":"` + strings.Repeat("A", MaxArguments) + `"}`),
		BackendStatus: 413, Duration: time.Second, Outcome: OutcomeToolError,
	},
	{Time: t0, Tool: "broken", Arguments: json.RawMessage(`{"password":"hunter2"`), Duration: time.Millisecond, Outcome: OutcomeError},
	{
		Time: t0, Tool: "ctl\x00\x1b[31m\n\"quoted\"", Detail: "line\u2028sep\xff", Arguments: json.RawMessage(`null`),
		Duration: -time.Second, Outcome: OutcomeCancelled,
	},
}

func TestLineGolden(t *testing.T) {
	var out syncBuffer
	w, _ := newTest(t, Config{Output: &out, Replica: "pod-a"})
	for _, e := range goldenEntries {
		w.Record(e)
	}
	require.NoError(t, w.Close())
	got := out.String()
	path := filepath.Join("testdata", "lines.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), got)
}

func TestLineFields(t *testing.T) {
	var out syncBuffer
	w, _ := newTest(t, Config{Output: &out, Replica: "pod-a"})
	for _, e := range goldenEntries {
		w.Record(e)
	}
	require.NoError(t, w.Close())
	ls := lines(t, out.String())
	require.Len(t, ls, len(goldenEntries))

	order := []string{"time", "replica", "era", "session", "principal", "client", "tool", "outcome", "reason", "detail", "backend_status", "duration_ms", "arguments"}
	for _, l := range ls {
		keys := keysOf(t, l)
		// The keys present appear in the fixed order.
		j := 0
		for _, k := range keys {
			for j < len(order) && order[j] != k {
				j++
			}
			require.Less(t, j, len(order), "key %q out of order in %s", k, l)
		}
	}

	var first map[string]any
	require.NoError(t, json.Unmarshal([]byte(ls[0]), &first))
	require.Equal(t, map[string]any{
		"time":           "2026-03-04T04:06:07.890123456Z",
		"replica":        "pod-a",
		"era":            "2025-11-25",
		"session":        HashSession("session-id-1"),
		"principal":      "alice@example.com",
		"client":         "203.0.113.7",
		"tool":           "github_create_issue",
		"outcome":        "ok",
		"backend_status": 201.0,
		"duration_ms":    12.346,
		"arguments": map[string]any{
			"owner": "o", "repo": "r", "title": "Bug <b>&",
			"auth":   map[string]any{"Api-Key": "[REDACTED]", "user": "u"},
			"labels": []any{map[string]any{"name": "x", "token": "[REDACTED]"}},
		},
	}, first)

	var denied map[string]any
	require.NoError(t, json.Unmarshal([]byte(ls[1]), &denied))
	require.Equal(t, "pod-b", denied["replica"], "the entry's replica wins")
	require.Equal(t, "insufficient_scope", denied["reason"])
	require.Equal(t, "billing:write", denied["detail"])
	require.Equal(t, 0.15, denied["duration_ms"])
	require.NotContains(t, denied, "backend_status", "no backend call")
	require.NotContains(t, denied, "arguments")
	require.NotContains(t, denied, "session")

	var huge map[string]any
	require.NoError(t, json.Unmarshal([]byte(ls[2]), &huge))
	require.Equal(t, map[string]any{"_truncated": true, "bytes": float64(MaxArguments + 11)}, huge["arguments"])

	var invalid map[string]any
	require.NoError(t, json.Unmarshal([]byte(ls[3]), &invalid))
	require.Equal(t, map[string]any{"_invalid": true, "bytes": 21.0}, invalid["arguments"])
	require.NotContains(t, ls[3], "hunter2")

	var ctl map[string]any
	require.NoError(t, json.Unmarshal([]byte(ls[4]), &ctl))
	require.Equal(t, "ctl\x00\x1b[31m\n\"quoted\"", ctl["tool"])
	require.Equal(t, "line\u2028sep\ufffd", ctl["detail"])
	require.Equal(t, 0.0, ctl["duration_ms"])
	require.Nil(t, ctl["arguments"])
	require.NotContains(t, ls[4], "\x1b", "control characters are escaped")
}

func keysOf(t *testing.T, l string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(l))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

func TestHashSession(t *testing.T) {
	h := HashSession("3f2a9c0e-secret-session-id")
	require.Len(t, h, 16)
	require.Equal(t, h, HashSession("3f2a9c0e-secret-session-id"))
	require.NotEqual(t, h, HashSession("3f2a9c0e-secret-session-iD"))
	require.Empty(t, HashSession(""))
}

func TestLongFieldsCut(t *testing.T) {
	var out syncBuffer
	w, _ := newTest(t, Config{Output: &out})
	w.Record(Entry{Time: t0, Tool: strings.Repeat("é", MaxField), Outcome: OutcomeOK})
	require.NoError(t, w.Close())
	var l map[string]any
	require.NoError(t, json.Unmarshal([]byte(out.String()), &l))
	tool := l["tool"].(string)
	require.LessOrEqual(t, len(tool), MaxField)
	require.True(t, strings.HasSuffix(tool, "é…"), "cut on a character boundary")
}

func TestZeroTimeIsRecordTime(t *testing.T) {
	var out syncBuffer
	w, _ := newTest(t, Config{Output: &out, now: func() time.Time { return t0 }})
	w.Record(Entry{Tool: "t", Outcome: OutcomeOK})
	require.NoError(t, w.Close())
	require.Contains(t, out.String(), `"time":"2026-03-04T04:06:07.890123456Z"`)
}

// TestArgumentsCopied: the caller reuses its buffer after Record (the
// race detector sees it if Record kept the caller's slice).
func TestArgumentsCopied(t *testing.T) {
	var out syncBuffer
	w, _ := newTest(t, Config{Output: &out})
	buf := []byte(`{"q":"first"}`)
	w.Record(Entry{Tool: "t", Arguments: buf, Outcome: OutcomeOK})
	copy(buf, `{"q":"XXXXX"}`)
	require.NoError(t, w.Close())
	require.Contains(t, out.String(), `"arguments":{"q":"first"}`)
}

// stuck is a destination whose writes wait until released.
type stuck struct {
	entered chan struct{} // closed at the first write
	release chan struct{}
	once    sync.Once
	out     syncBuffer
}

func newStuck() *stuck {
	return &stuck{entered: make(chan struct{}), release: make(chan struct{})}
}

func (s *stuck) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return s.out.Write(p)
}

func TestRecordNeverBlocks(t *testing.T) {
	const queue, calls = 1000, 100_000
	dest := newStuck()
	var logs syncBuffer
	w, reg := newTest(t, Config{
		Output: dest, QueueSize: queue,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		now:    func() time.Time { return t0 },
	})

	// The first entry is taken off the queue, and its write waits.
	w.Record(Entry{Tool: "first", Outcome: OutcomeOK})
	<-dest.entered
	big := json.RawMessage(`{"data":"` + strings.Repeat("x", 4<<20) + `"}`)
	for i := range calls {
		e := Entry{Tool: "t", Outcome: OutcomeOK}
		if i%1000 == 0 {
			e.Arguments = big
		}
		w.Record(e)
	}
	require.Equal(t, float64(calls-queue), testutil.ToFloat64(w.metrics.dropped))
	// The clock stands still: one warning, for the first drop.
	require.Equal(t, 1, strings.Count(logs.String(), "audit queue full"), logs.String())
	require.Contains(t, logs.String(), "dropped=1")

	close(dest.release)
	require.NoError(t, w.Close())
	ls := lines(t, dest.out.String())
	require.Len(t, ls, queue+1, "Close drained the queue")
	for _, l := range ls {
		require.True(t, json.Valid([]byte(l)), l)
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP mcpgw_audit_dropped_total Audit records lost: the queue was full, the writer was closed, or a write to the destination failed.
# TYPE mcpgw_audit_dropped_total counter
mcpgw_audit_dropped_total 99000
# HELP mcpgw_audit_records_total Audit records written to the destination, by call outcome (ok, tool_error, denied, error, cancelled, input_required, other).
# TYPE mcpgw_audit_records_total counter
mcpgw_audit_records_total{outcome="ok"} 1001
`), "mcpgw_audit_dropped_total", "mcpgw_audit_records_total"))
}

func TestDropWarningOncePerSecond(t *testing.T) {
	dest := newStuck()
	var logs syncBuffer
	var mu sync.Mutex
	now := t0
	w, _ := newTest(t, Config{
		Output: dest, QueueSize: 1,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		},
	})
	defer close(dest.release)
	w.Record(Entry{Tool: "first"})
	<-dest.entered
	w.Record(Entry{Tool: "queued"})
	for range 10 {
		w.Record(Entry{Tool: "dropped"})
	}
	mu.Lock()
	now = now.Add(1500 * time.Millisecond)
	mu.Unlock()
	w.Record(Entry{Tool: "dropped"})
	require.Equal(t, 2, strings.Count(logs.String(), "audit queue full"), logs.String())
	require.Contains(t, logs.String(), "dropped=1\n")
	require.Contains(t, logs.String(), "dropped=10\n", "the second warning counts the drops since the first")
}

func TestCloseDrains(t *testing.T) {
	var out syncBuffer
	w, reg := newTest(t, Config{Output: &out, QueueSize: 10_000})
	outcomes := []string{OutcomeOK, OutcomeToolError, OutcomeDenied, OutcomeError, OutcomeCancelled, "bogus"}
	for i := range 6000 {
		w.Record(Entry{Tool: "t", Outcome: outcomes[i%len(outcomes)]})
	}
	require.NoError(t, w.Close())
	require.Len(t, lines(t, out.String()), 6000)
	require.NoError(t, w.Close(), "Close twice")

	w.Record(Entry{Tool: "late"})
	require.NotContains(t, out.String(), "late")
	require.Equal(t, 1.0, testutil.ToFloat64(w.metrics.dropped), "a record after Close is dropped")
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP mcpgw_audit_records_total Audit records written to the destination, by call outcome (ok, tool_error, denied, error, cancelled, input_required, other).
# TYPE mcpgw_audit_records_total counter
mcpgw_audit_records_total{outcome="cancelled"} 1000
mcpgw_audit_records_total{outcome="denied"} 1000
mcpgw_audit_records_total{outcome="error"} 1000
mcpgw_audit_records_total{outcome="ok"} 1000
mcpgw_audit_records_total{outcome="other"} 1000
mcpgw_audit_records_total{outcome="tool_error"} 1000
`), "mcpgw_audit_records_total"))
}

// wholeLines is a destination that checks every write holds whole lines.
type wholeLines struct {
	syncBuffer
	writes, partial int
}

func (d *wholeLines) Write(p []byte) (int, error) {
	d.mu.Lock()
	d.writes++
	if len(p) == 0 || p[len(p)-1] != '\n' {
		d.partial++
	}
	d.mu.Unlock()
	return d.syncBuffer.Write(p)
}

// TestConcurrentRecords: lines from many goroutines never mix, and every
// write holds whole lines, including lines longer than the write buffer.
func TestConcurrentRecords(t *testing.T) {
	out := &wholeLines{}
	w, _ := newTest(t, Config{Output: out, QueueSize: 100_000})
	// Invalid UTF-8 grows threefold (U+FFFD), control characters sixfold
	// (\u0000): a line of about 73 KiB.
	long := json.RawMessage(`{"s":"` + strings.Repeat("\xff", MaxArguments-8) + `"}`)
	ctl := strings.Repeat("\x00", MaxField)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				e := Entry{Tool: "t", Outcome: OutcomeOK}
				if (g+i)%50 == 0 {
					e.Arguments, e.Tool, e.Detail, e.Subject, e.Client = long, ctl, ctl, ctl, ctl
				}
				w.Record(e)
			}
		})
	}
	wg.Wait()
	require.NoError(t, w.Close())
	ls := lines(t, out.String())
	require.Len(t, ls, 4000)
	longest := 0
	for _, l := range ls {
		require.True(t, json.Valid([]byte(l)))
		longest = max(longest, len(l))
	}
	require.Greater(t, longest, 64<<10, "a line longer than the buffer")
	require.Zero(t, out.partial, "of %d writes", out.writes)
}

func TestDisabled(t *testing.T) {
	w, err := New(Config{Metrics: prometheus.NewRegistry()})
	require.NoError(t, err)
	require.Nil(t, w)
	w.Record(Entry{Tool: "t"})
	require.NoError(t, w.Close())

	var nilWriter *Writer
	nilWriter.Record(Entry{})
	require.NoError(t, nilWriter.Close())
}

func TestNewErrors(t *testing.T) {
	_, err := New(Config{Output: io.Discard, QueueSize: -1})
	require.Error(t, err)
	_, err = New(Config{Output: io.Discard, Redact: []string{"--"}})
	require.Error(t, err)
	_, err = New(Config{Destination: filepath.Join(t.TempDir(), "missing", "audit.log")})
	require.Error(t, err)

	reg := prometheus.NewRegistry()
	w, err := New(Config{Output: io.Discard, Metrics: reg})
	require.NoError(t, err)
	defer w.Close()
	_, err = New(Config{Output: io.Discard, Metrics: reg})
	require.Error(t, err, "the collectors are registered already")
}

func TestFileDestination(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	for _, tool := range []string{"one", "two"} {
		w, err := New(Config{Destination: path})
		require.NoError(t, err)
		w.Record(Entry{Time: t0, Tool: tool, Outcome: OutcomeOK})
		require.NoError(t, w.Close())
	}
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	ls := lines(t, string(b))
	require.Len(t, ls, 2, "the second writer appended")
	require.Contains(t, ls[0], `"tool":"one"`)
	require.Contains(t, ls[1], `"tool":"two"`)

	// copytruncate: after the file is truncated under an open writer, the
	// next line starts at the new end, not at the old offset.
	w, err := New(Config{Destination: path})
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, 0))
	w.Record(Entry{Time: t0, Tool: "three", Outcome: OutcomeOK})
	require.NoError(t, w.Close())
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, lines(t, string(b)), 1)
	require.True(t, strings.HasPrefix(string(b), `{"time"`))
}

func TestFileReadableByOthersWarns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	require.NoError(t, os.Chmod(path, 0o644))
	var logs syncBuffer
	w, err := New(Config{Destination: path, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Contains(t, logs.String(), "readable by other users")
}

// failing is a destination whose first fails writes fail after writing
// half of what they were given. started is closed as the first write
// begins.
type failing struct {
	mu      sync.Mutex
	fails   int
	started chan struct{}
	out     bytes.Buffer
}

func newFailing(fails int) *failing { return &failing{fails: fails, started: make(chan struct{})} }

func (f *failing) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.started:
	default:
		close(f.started)
	}
	if f.fails > 0 {
		f.fails--
		n, _ := f.out.Write(p[:len(p)/2])
		return n, errors.New("no space left on device")
	}
	return f.out.Write(p)
}

func TestWriteErrors(t *testing.T) {
	dest := newFailing(1)
	var logs syncBuffer
	w, reg := newTest(t, Config{Output: dest, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	w.Record(Entry{Time: t0, Tool: "lost", Outcome: OutcomeOK})
	<-dest.started // "lost" is written alone: the queue was empty
	w.Record(Entry{Time: t0, Tool: "kept", Outcome: OutcomeOK})
	require.NoError(t, w.Close())

	// The half line the failure left is ended; the next line parses.
	sc := bufio.NewScanner(strings.NewReader(dest.out.String()))
	var got []string
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	require.Len(t, got, 2)
	require.False(t, json.Valid([]byte(got[0])))
	require.True(t, json.Valid([]byte(got[1])))
	require.Contains(t, got[1], `"tool":"kept"`)
	require.Contains(t, logs.String(), "audit log write failed")
	require.Contains(t, logs.String(), "no space left on device")
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP mcpgw_audit_dropped_total Audit records lost: the queue was full, the writer was closed, or a write to the destination failed.
# TYPE mcpgw_audit_dropped_total counter
mcpgw_audit_dropped_total 1
# HELP mcpgw_audit_records_total Audit records written to the destination, by call outcome (ok, tool_error, denied, error, cancelled, input_required, other).
# TYPE mcpgw_audit_records_total counter
mcpgw_audit_records_total{outcome="ok"} 1
# HELP mcpgw_audit_write_errors_total Failed writes to the audit destination (disk full, closed pipe); the records they held count as dropped.
# TYPE mcpgw_audit_write_errors_total counter
mcpgw_audit_write_errors_total 1
`)))
}

func TestCloseReportsFailedLastWrite(t *testing.T) {
	w, err := New(Config{Output: newFailing(1 << 30), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	w.Record(Entry{Tool: "t"})
	require.ErrorContains(t, w.Close(), "no space left on device")
}

// BenchmarkRecord is the call path's cost when the queue has room. The
// queue is emptied between batches with the timer stopped, so that the
// writer's own work is left out (BenchmarkWrite).
func BenchmarkRecord(b *testing.B) {
	m, err := newMetrics(nil)
	require.NoError(b, err)
	const batch = 4096
	w := &Writer{metrics: m, now: time.Now, log: slog.New(slog.DiscardHandler), queue: make(chan record, batch)}
	e := Entry{Tool: "github_create_issue", Subject: "alice", Outcome: OutcomeOK, Arguments: json.RawMessage(`{"owner":"o","repo":"r","title":"t"}`)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if i%batch == 0 {
			b.StopTimer()
			for len(w.queue) > 0 {
				<-w.queue
			}
			b.StartTimer()
		}
		w.Record(e)
	}
	b.StopTimer()
	require.Zero(b, testutil.ToFloat64(m.dropped))
}

// BenchmarkRecordFull is Record when the queue is full: a drop.
func BenchmarkRecordFull(b *testing.B) {
	dest := newStuck()
	w, err := New(Config{Output: dest, QueueSize: 1, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(b, err)
	w.Record(Entry{})
	<-dest.entered
	w.Record(Entry{})
	e := Entry{Tool: "github_create_issue", Outcome: OutcomeOK, Arguments: json.RawMessage(`{"owner":"o"}`)}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Record(e)
		}
	})
	b.StopTimer()
	close(dest.release)
	require.NoError(b, w.Close())
}

// BenchmarkWrite is the goroutine's work for one entry: redact, encode,
// buffer.
func BenchmarkWrite(b *testing.B) {
	w, err := New(Config{Output: io.Discard})
	require.NoError(b, err)
	require.NoError(b, w.Close()) // use its parts from this goroutine
	w.buf.Reset(io.Discard)
	e := goldenEntries[0]
	r := record{Entry: e, size: len(e.Arguments)}
	b.ReportAllocs()
	for b.Loop() {
		w.write(&r)
	}
}
