package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// replier receives the outcome of one dispatched request.
type replier interface {
	finish(id json.RawMessage, result any, err *mcp.Error)
	// cancelled is called instead of finish when the request was cancelled:
	// no response may be sent.
	cancelled()
}

// postReply answers one POSTed request. It starts as a plain JSON response
// and switches to an SSE stream the first time the request has a message
// to send before its result: JSON when that is all the call needs, a
// stream when it needs more.
//
// In a session (newSessionReply) the stream is resumable: each of its
// messages is appended to the session's log, tagged with the stream
// (streamlog.go), then written with the log's id, so a client that loses
// the stream resumes it with GET + Last-Event-ID on any replica, and a
// message outlives a dead connection. A 2025-11-25 stream opens with a
// priming event. When the server shuts down under a running call, serve
// closes the stream with a retry hint and the call goes on; what it sends
// still goes to the log. A JSON answer costs no store round trip.
type postReply struct {
	w   http.ResponseWriter
	srv *Server
	// sid and version are set in a session; token names the stream once
	// it opens.
	sid, version, token string

	mu  sync.Mutex
	sse *sseWriter // non-nil once switched to SSE
	// done: answered (or cancelled).
	done bool
	// gone: the connection takes no more writes (the client left, or the
	// stream was closed under the call); the log still gets every message.
	gone bool
	// resumable: the client holds an id to resume the stream from;
	// firstID is the log id of the stream's first logged event.
	resumable bool
	firstID   string
	// closing: the server shuts down; close the stream once it is resumable.
	closing bool
	// ended: the call returned. detached: serve returned before it did;
	// early is closed then.
	ended    bool
	detached bool
	early    chan struct{}
}

// newPostReply answers a stateless request: its stream has no ids.
func newPostReply(w http.ResponseWriter, s *Server) *postReply {
	return &postReply{w: w, srv: s}
}

// newSessionReply answers a session-era request: its stream is logged and
// resumable.
func (s *Server) newSessionReply(w http.ResponseWriter, sess *sessions.Session) *postReply {
	return &postReply{w: w, srv: s, sid: sess.ID, version: sess.ProtocolVersion}
}

// Notify implements mcp.Sink: the first notification turns the answer into
// an SSE stream.
func (p *postReply) Notify(method string, params any) {
	data, err := mcp.Marshal(mcp.Notification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		p.srv.log.Error("encoding notification failed", "err", err, "method", method)
		return
	}
	if p.Send(data) == nil { // a gone client is not an error here
		p.srv.metrics.notify(method)
	}
}

// errAnswered: the request has its response; nothing more goes on its stream.
var errAnswered = errors.New("the request has been answered")

// Send implements mcp.Messenger: one message on the answer's SSE stream.
// In a session a message that reached the log has reached the stream,
// connection or not.
func (p *postReply) Send(data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return errAnswered
	}
	p.open()
	if p.sid == "" {
		return p.sse.event("", data)
	}
	logged, kind := data, kindMessage
	if len(data) > maxLoggedMessage {
		logged, kind = nil, kindDropped
	}
	return p.emit(kind, logged, data)
}

// open switches the answer to SSE; a 2025-11-25 session's stream starts
// with its priming event. Callers hold p.mu.
func (p *postReply) open() {
	if p.sse != nil {
		return
	}
	p.sse = startSSE(p.w)
	if p.sid == "" {
		return
	}
	p.token = newStreamToken(postStreamKind)
	if !primes(p.version) {
		return
	}
	id, err := p.srv.logStreamEvent(p.sid, p.token, kindPrimer, nil)
	if err != nil {
		p.srv.logLimited(context.Background(), slog.LevelWarn, "logging a stream's priming event failed", "err", err, "session", shortID(p.sid))
		return
	}
	p.resumable, p.firstID = true, id
	if p.sse.prime(streamEventID(id, p.token)) != nil {
		p.gone = true
	}
}

// emit logs one event of a session's stream and writes live (when not
// nil) with the log's id. It fails only when the message reached neither
// the log nor the connection. Callers hold p.mu.
func (p *postReply) emit(kind logKind, logged, live []byte) error {
	id, err := p.srv.logStreamEvent(p.sid, p.token, kind, logged)
	evID := ""
	if err != nil {
		// Written without an id: better than not at all.
		p.srv.logLimited(context.Background(), slog.LevelWarn, "logging a stream's message failed", "err", err, "session", shortID(p.sid))
	} else {
		evID, p.resumable = streamEventID(id, p.token), true
		if p.firstID == "" {
			p.firstID = id
		}
	}
	if live != nil && !p.gone && p.sse.event(evID, live) != nil {
		p.gone = true
	}
	if p.closing && p.resumable && !p.done {
		p.close()
	}
	if err != nil && (p.gone || live == nil) {
		return err
	}
	return nil
}

func (p *postReply) finish(id json.RawMessage, result any, rerr *mcp.Error) {
	// The response is written (or not wanted) when finish returns: nothing
	// holds the result after that.
	defer releaseResult(result)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	if p.sse == nil {
		p.srv.writeResult(p.w, http.StatusOK, id, result, rerr)
		return
	}
	buf := getBuf()
	defer putBuf(buf)
	*buf, _ = p.srv.encodeResponse(*buf, id, result, rerr)
	if p.sid == "" {
		_ = p.sse.event("", *buf)
	} else {
		logged := *buf
		if len(logged) > maxLoggedMessage {
			logged = p.srv.tooBigToLog(id)
		}
		_ = p.emit(kindFinal, logged, *buf)
	}
	if !p.detached {
		p.sse.release()
	}
}

// cancelled ends the exchange without a response: an empty event stream
// when nothing was sent yet, so the client sees a clean end of stream; a
// logged stream records its end, for a resumed one to end too.
func (p *postReply) cancelled() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	if p.sse == nil {
		p.sse = startSSE(p.w)
		return
	}
	if p.sid != "" {
		_ = p.emit(kindEnd, nil, nil)
	}
}

// serve runs fn, which dispatches the request, and returns when the
// answer is complete; or, in a session whose answer streams, once the
// stream is closed because the server shuts down: the call goes on
// (DrainBackground waits for it) and what it sends goes to the log only,
// for the client to resume on another replica. A 2025-11-25 answer still
// JSON is turned into a primed stream to close; an older one waits for
// its result. A panic in fn is raised again here while serve waits.
//
// gone, when not nil, is the client's going away (the request context's
// Done): onGone runs then, once (cancel_on_disconnect), unless the server
// itself is shutting down.
func (p *postReply) serve(fn func(), gone <-chan struct{}, onGone func()) {
	p.early = make(chan struct{})
	ended := make(chan any, 1)
	go func() {
		var panicked any
		defer func() {
			p.mu.Lock()
			p.ended = true
			detached := p.detached
			p.mu.Unlock()
			if !detached {
				ended <- panicked
				return
			}
			if panicked != nil {
				p.srv.log.Error("a request running after its stream closed panicked", "panic", panicked, "session", shortID(p.sid))
				p.cancelled() // a resumed stream ends, without an answer
			}
			p.srv.background.Done()
		}()
		defer func() { panicked = recover() }()
		fn()
	}()
	var grace <-chan time.Time
	for waiting := true; waiting; {
		select {
		case v := <-ended:
			repanic(v)
			return
		case <-gone:
			gone = nil
			select {
			case <-p.srv.done: // a stream the server closes is resumed elsewhere
			default:
				if p.resumableNow() {
					// The client may be resuming it (network blip): give it
					// the time to, then cancel only if it did not.
					t := time.NewTimer(p.srv.resumeGrace())
					defer t.Stop()
					grace = t.C
				} else {
					onGone()
				}
			}
		case <-grace:
			grace = nil
			p.mu.Lock()
			token, first := p.token, p.firstID
			p.mu.Unlock()
			if !p.srv.resumedSince(p.sid, token, first) {
				onGone()
			}
		case <-p.srv.done:
			waiting = false
		}
	}
	if p.shutdown() {
		return
	}
	select {
	case v := <-ended:
		repanic(v)
	case <-p.early:
	}
}

// resumableNow reports whether the answer is a session stream the
// client can resume (it holds one of its ids) and still runs.
func (p *postReply) resumableNow() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sid != "" && p.resumable && p.firstID != "" && !p.done
}

func repanic(v any) {
	if v != nil {
		panic(v)
	}
}

// shutdown closes a session's stream under its running call when the
// client can resume it; it reports whether it did.
func (p *postReply) shutdown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done || p.ended || p.sid == "" {
		return false
	}
	if p.sse == nil && primes(p.version) {
		p.open()
	}
	if p.sse == nil || !p.resumable {
		p.closing = true // once the stream has an id
		return false
	}
	return p.close()
}

// close ends the stream with a retry hint and lets serve return, handing
// the call to DrainBackground (unless that already finished waiting: then
// the stream stays). Callers hold p.mu.
func (p *postReply) close() bool {
	if p.detached || p.early == nil || p.ended {
		return p.detached
	}
	s := p.srv
	s.bgMu.Lock()
	if s.bgClosed {
		s.bgMu.Unlock()
		return false
	}
	s.background.Add(1)
	s.bgMu.Unlock()
	if !p.gone {
		_ = p.sse.retry(retryMillis)
	}
	p.sse.release()
	p.gone, p.detached = true, true
	close(p.early)
	return true
}

// releaseResult lets a tool result's body buffer be reused
// (mcp.PooledResult.Release): only the response writer releases, once the
// response is written.
func releaseResult(result any) {
	if r, ok := result.(*mcp.PooledResult); ok {
		r.Release()
	}
}

// collectReply keeps the response of a batch member; the batch encodes it
// and releases its result.
type collectReply struct{ resp *mcp.Response }

func (c *collectReply) finish(id json.RawMessage, result any, err *mcp.Error) {
	c.resp = &mcp.Response{JSONRPC: "2.0", ID: id, Result: result, Error: err}
}
func (c *collectReply) cancelled() {}

// sseWriter frames Server-Sent Events and flushes each one.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func startSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no") // nginx and friends must not buffer the stream
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.Flush()
	return s
}

// sseWriteTimeout bounds one SSE write: a client that stops reading must
// not hold a goroutine (and shutdown) forever.
const sseWriteTimeout = 10 * time.Second

// deadline arms the write deadline for the next write.
func (s *sseWriter) deadline() { _ = s.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout)) }

// release clears the deadline so a kept-alive connection's next response
// does not inherit it (the server only resets deadlines it set itself).
func (s *sseWriter) release() { _ = s.rc.SetWriteDeadline(time.Time{}) }

// event writes one message. id may be empty (no resumption cursor).
func (s *sseWriter) event(id string, data []byte) error { return s.named(id, "message", data) }

// named writes one event of the given type (the 2024-11-05 transport's
// first event is "endpoint").
func (s *sseWriter) named(id, name string, data []byte) error {
	s.deadline()
	buf := make([]byte, 0, len(data)+len(id)+len(name)+24)
	if id != "" {
		buf = append(buf, "id: "...)
		buf = append(buf, id...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "event: "...)
	buf = append(buf, name...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		return err
	}
	return s.rc.Flush()
}

// comment writes a keep-alive line that clients ignore.
func (s *sseWriter) comment(text string) error {
	s.deadline()
	if _, err := s.w.Write([]byte(": " + text + "\n\n")); err != nil {
		return err
	}
	return s.rc.Flush()
}

// retry tells the client how long to wait before reconnecting.
func (s *sseWriter) retry(ms int) error {
	s.deadline()
	if _, err := s.w.Write([]byte("retry: " + strconv.Itoa(ms) + "\n\n")); err != nil {
		return err
	}
	return s.rc.Flush()
}

// prime writes the priming event: a resumption point and the retry delay.
func (s *sseWriter) prime(id string) error {
	s.deadline()
	buf := make([]byte, 0, len(id)+32)
	buf = append(buf, "id: "...)
	buf = append(buf, id...)
	buf = append(buf, "\nretry: "...)
	buf = append(buf, retryText...)
	buf = append(buf, "\ndata: \n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		return err
	}
	return s.rc.Flush()
}

// retryText is retryMillis as the retry field carries it.
var retryText = strconv.Itoa(retryMillis)

// writeResult writes a JSON-RPC response as a plain JSON body.
func (s *Server) writeResult(w http.ResponseWriter, status int, id json.RawMessage, result any, rerr *mcp.Error) {
	if rerr != nil && rerr.Status != 0 {
		status = rerr.Status
		setErrorHeaders(w, rerr)
	}
	buf := getBuf()
	defer putBuf(buf)
	var ok bool
	if *buf, ok = s.encodeResponse(*buf, id, result, rerr); !ok {
		status = http.StatusInternalServerError
	}
	writeBody(w, status, *buf)
}

// encodeResponse appends a JSON-RPC response to b; a result that cannot be
// encoded is logged and answered with an internal error (ok is false).
func (s *Server) encodeResponse(b []byte, id json.RawMessage, result any, rerr *mcp.Error) (data []byte, ok bool) {
	data, err := mcp.AppendResponse(b, id, result, rerr)
	if err != nil {
		s.log.Error("encoding response failed", "err", err)
		data, _ = mcp.AppendResponse(data[:0], id, nil, mcp.InternalError())
		return data, false
	}
	return data, true
}

// setErrorHeaders sends the headers an error carries for when it is the
// whole response.
func setErrorHeaders(w http.ResponseWriter, rerr *mcp.Error) {
	for k, v := range rerr.Header {
		w.Header().Set(k, v)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := mcp.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"}}`)
	}
	writeBody(w, status, data)
}

func writeBody(w http.ResponseWriter, status int, data []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// sessionTopic is the bus topic that wakes a session's push streams.
func sessionTopic(sid string) string { return "session:" + sid }

// wakeSession hints every replica's streams of a session to re-read the store.
func (s *Server) wakeSession(ctx context.Context, sid string) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	if err := s.bus.Publish(ctx, sessionTopic(sid), nil); err != nil {
		s.logLimited(ctx, slog.LevelWarn, "publishing session wake-up failed", "err", err, "session", shortID(sid))
	}
}

// sessionSink delivers notifications to a session's push stream (the GET
// stream): appended to the session's event log, then a wake-up hint.
type sessionSink struct {
	srv *Server
	sid string
}

func (s *Server) sessionSink(sid string) mcp.Sink { return sessionSink{srv: s, sid: sid} }

func (k sessionSink) Notify(method string, params any) {
	data, err := mcp.Marshal(mcp.Notification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		k.srv.log.Error("encoding notification failed", "err", err, "method", method)
		return
	}
	k.srv.pushToSession(k.sid, data)
	k.srv.metrics.notify(method)
}

// Send implements mcp.Messenger: a whole message on the session's stream.
func (k sessionSink) Send(data []byte) error {
	return k.srv.appendToSession(context.Background(), k.sid, data)
}

// pushToSession appends a message to a session's event log and wakes the
// streams that carry it, on whichever replica they are. The store keeps a
// copy of data. A failure is logged.
func (s *Server) pushToSession(sid string, data []byte) {
	ctx := context.Background()
	if err := s.appendToSession(ctx, sid, data); err != nil {
		s.logLimited(ctx, slog.LevelWarn, "appending to session stream failed", "err", err, "session", shortID(sid))
	}
}

// appendToSession is pushToSession for a caller that handles the error
// (sessions.ErrNotFound: the session ended).
func (s *Server) appendToSession(ctx context.Context, sid string, data []byte) error {
	if _, err := s.store.Append(ctx, sid, data); err != nil {
		return err
	}
	s.wakeSession(ctx, sid)
	return nil
}

// appendNotification puts a notification on a session's push stream
// (appendToSession), counted once it is in the session's log.
func (s *Server) appendNotification(ctx context.Context, sid, method string, params any) error {
	data, err := mcp.Marshal(mcp.Notification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return err
	}
	if err := s.appendToSession(ctx, sid, data); err != nil {
		return err
	}
	s.metrics.notify(method)
	return nil
}
