package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/mcp-gateway/internal/lograte"
)

// Config configures the audit log. Zero values take the defaults noted on
// each field.
type Config struct {
	// Destination is where lines go: "stdout", "stderr" or a file path.
	// Empty (and no Output) means no audit log: New returns a nil Writer.
	Destination string
	// Output, when set, is the destination instead of Destination: for
	// embedding and tests. Close does not close it.
	Output io.Writer
	// Redact lists the argument keys whose values are replaced, matched
	// case-insensitively as substrings of the key with everything but
	// letters and digits removed. It replaces the default list; empty means
	// DefaultRedact().
	Redact []string
	// QueueSize is how many entries wait for the writer before Record
	// drops them. Zero means 4096. A full queue holds up to QueueSize
	// times MaxArguments bytes of arguments: 64 MiB by default.
	QueueSize int
	// Replica names this replica (hostname, pod) in every line; empty
	// leaves the field out.
	Replica string
	// Logger receives the writer's warnings; nil means slog.Default().
	Logger *slog.Logger
	// Metrics, when set, receives mcpgw_audit_records_total{outcome},
	// mcpgw_audit_dropped_total and mcpgw_audit_write_errors_total.
	Metrics prometheus.Registerer

	now func() time.Time // tests: the clock; nil means time.Now
}

// Writer writes the audit log. A nil *Writer is a disabled log: Record
// and Close do nothing, so callers need no check.
type Writer struct {
	replica string
	log     *slog.Logger
	metrics *metrics
	now     func() time.Time

	mu     sync.RWMutex // Record holds it to send, Close to close the queue
	closed bool
	queue  chan record
	done   chan struct{} // closed when the goroutine has returned

	logLimit lograte.Limiter

	// Used by the goroutine only.
	out     *lineWriter
	buf     *bufio.Writer
	file    *os.File // nil unless New opened it
	redact  *redactor
	enc     *json.Encoder // into scratch
	scratch bytes.Buffer
	pending [len(outcomes)]int // records in buf, not yet flushed
	failed  error              // the last write's error, until a write succeeds
	resync  bool               // a failed write left part of a line
}

// record is an Entry queued, its arguments copied.
type record struct {
	Entry
	size int // of the caller's arguments (Arguments is nil when too large)
}

// New opens the destination and starts the writer's goroutine, which
// Close stops. It returns a nil Writer, and starts nothing, when
// cfg.Destination and cfg.Output are both empty.
func New(cfg Config) (*Writer, error) {
	if cfg.Destination == "" && cfg.Output == nil {
		return nil, nil
	}
	if cfg.QueueSize < 0 {
		return nil, fmt.Errorf("audit: queue size %d is negative", cfg.QueueSize)
	}
	if cfg.QueueSize == 0 {
		cfg.QueueSize = 4096
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	keys, err := newMatcher(cfg.Redact)
	if err != nil {
		return nil, err
	}
	w := &Writer{
		replica: cfg.Replica,
		log:     cfg.Logger,
		now:     cfg.now,
		queue:   make(chan record, cfg.QueueSize),
		done:    make(chan struct{}),
		redact:  newRedactor(keys),
	}
	var out io.Writer
	switch {
	case cfg.Output != nil:
		out = cfg.Output
	case cfg.Destination == "stdout":
		out = os.Stdout
	case cfg.Destination == "stderr":
		out = os.Stderr
	default:
		if w.file, err = openFile(cfg.Destination, cfg.Logger); err != nil {
			return nil, err
		}
		out = w.file
	}
	if w.metrics, err = newMetrics(cfg.Metrics); err != nil {
		if w.file != nil {
			w.file.Close()
		}
		return nil, err
	}
	w.out = &lineWriter{w: out}
	w.buf = bufio.NewWriterSize(w.out, 64<<10)
	w.enc = json.NewEncoder(&w.scratch)
	w.enc.SetEscapeHTML(false)
	go w.run()
	return w, nil
}

// openFile opens path for appending, creating it with mode 0600.
func openFile(path string, log *slog.Logger) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
		// An existing file keeps its mode: say so rather than chmod a file
		// an operator may have set up on purpose.
		log.Warn("audit log is readable by other users", "path", path, "mode", fi.Mode().Perm().String())
	}
	return f, nil
}

// Record queues e and returns at once. When the queue is full, e is
// dropped and counted, and a warning says how many were dropped, at most
// once a second.
func (w *Writer) Record(e Entry) {
	if w == nil {
		return
	}
	if len(w.queue) == cap(w.queue) {
		// Full: spare the copy below.
		w.drop()
		return
	}
	if e.Time.IsZero() {
		e.Time = w.now()
	}
	if e.Replica == "" {
		e.Replica = w.replica
	}
	r := record{Entry: e, size: len(e.Arguments)}
	if r.size > MaxArguments {
		r.Arguments = nil
	} else if r.size > 0 {
		// The caller's buffer may be pooled and reused once we return.
		r.Arguments = bytes.Clone(e.Arguments)
	}
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		w.metrics.dropped.Inc()
		return
	}
	select {
	case w.queue <- r:
		w.mu.RUnlock()
	default:
		w.mu.RUnlock()
		w.drop()
	}
}

func (w *Writer) drop() {
	w.metrics.dropped.Inc()
	if ok, held := w.logLimit.Allow("queue", w.now()); ok {
		w.log.Warn("audit queue full; records dropped", "dropped", held+1)
	}
}

// Close writes the entries still queued, flushes, and closes the file New
// opened (never stdout, stderr or Config.Output). Records after Close are
// dropped. It waits for the destination: one that blocks forever blocks
// Close. It returns the error of the last write when that failed, and the
// file's.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return nil
	}
	w.closed = true
	close(w.queue)
	w.mu.Unlock()
	<-w.done
	err := w.failed
	if w.file != nil {
		err = errors.Join(err, w.file.Close())
	}
	return err
}

// run is the writer's goroutine: it writes every queued record, flushing
// whenever the queue runs empty, until Close closes the queue.
func (w *Writer) run() {
	defer close(w.done)
	for r := range w.queue {
		w.write(&r)
		if len(w.queue) == 0 {
			w.flush()
		}
	}
	w.flush()
}

// write encodes r and hands the line to the buffer, flushing first when it
// does not fit, so that every write to the destination holds whole lines.
func (w *Writer) write(r *record) {
	args := []byte(nil)
	if r.size > 0 {
		args = w.redact.arguments(r.Arguments, r.size)
	}
	l := newLine(&r.Entry, args)
	w.scratch.Reset()
	if err := w.enc.Encode(&l); err != nil {
		// Cannot happen: every field encodes and args is valid JSON.
		w.metrics.dropped.Inc()
		w.warn("encode", "audit record not encodable", err)
		return
	}
	b := w.scratch.Bytes()
	if w.resync {
		// End the part of a line a failed write left, so that what
		// follows parses.
		b = append([]byte{'\n'}, b...)
		w.resync = false
	}
	if w.buf.Buffered() > 0 && w.buf.Available() < len(b) {
		w.flush()
	}
	// With an empty buffer, a line longer than it goes out in one write.
	w.pending[outcomeIndex(r.Outcome)]++
	if _, err := w.buf.Write(b); err != nil {
		w.fail(err)
	}
}

// flush writes the buffer out and counts the records it held.
func (w *Writer) flush() {
	if w.buf.Buffered() == 0 && w.pending == [len(outcomes)]int{} {
		return // nothing since the last flush or failure
	}
	if err := w.buf.Flush(); err != nil {
		w.fail(err)
		return
	}
	w.failed = nil
	for i, n := range w.pending {
		if n > 0 {
			w.metrics.records.WithLabelValues(outcomes[i]).Add(float64(n))
			w.pending[i] = 0
		}
	}
}

// fail counts a write error and the records lost with it, and empties the
// buffer so that the next record gets a fresh try.
func (w *Writer) fail(err error) {
	lost := 0
	for i, n := range w.pending {
		lost += n
		w.pending[i] = 0
	}
	w.buf.Reset(w.out)
	w.failed, w.resync = err, w.out.midLine
	w.metrics.writeErrors.Inc()
	w.metrics.dropped.Add(float64(lost))
	w.warn("write", "audit log write failed; records dropped", err, "dropped", lost)
}

// warn logs at most one line of a kind a second.
func (w *Writer) warn(kind, msg string, err error, args ...any) {
	ok, held := w.logLimit.Allow(kind, w.now())
	if !ok {
		return
	}
	args = append(args, "err", err)
	if held > 0 {
		args = append(args, "suppressed", held)
	}
	w.log.Warn(msg, args...)
}

// lineWriter remembers whether the bytes written so far end a line.
type lineWriter struct {
	w       io.Writer
	midLine bool
}

func (l *lineWriter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		l.midLine = p[n-1] != '\n'
	}
	return n, err
}
