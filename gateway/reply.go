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
)

// replier receives the outcome of one dispatched request.
type replier interface {
	finish(id json.RawMessage, result any, err *mcp.Error)
	// cancelled is called instead of finish when the request was cancelled:
	// no response may be sent.
	cancelled()
}

// postReply answers one POSTed request. It starts as a plain JSON response
// and switches to an SSE stream the first time the request has a
// notification to send before its result: JSON when that is all the call
// needs, a stream when it needs more.
type postReply struct {
	w   http.ResponseWriter
	srv *Server

	mu   sync.Mutex
	sse  *sseWriter // non-nil once switched to SSE
	done bool
}

func newPostReply(w http.ResponseWriter, s *Server) *postReply {
	return &postReply{w: w, srv: s}
}

// Notify implements mcp.Sink: the first notification turns the answer into
// an SSE stream.
func (p *postReply) Notify(method string, params any) {
	data, err := mcp.Marshal(mcp.Notification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		p.srv.log.Error("encoding notification failed", "err", err, "method", method)
		return
	}
	_ = p.Send(data) // a gone client is not an error here
}

// errAnswered: the request has its response; nothing more goes on its stream.
var errAnswered = errors.New("the request has been answered")

// Send implements mcp.Messenger: one message on the answer's SSE stream.
func (p *postReply) Send(data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return errAnswered
	}
	if p.sse == nil {
		p.sse = startSSE(p.w)
	}
	return p.sse.event("", data)
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
	_ = p.sse.event("", *buf)
	p.sse.release()
}

// cancelled ends the exchange without a response: an empty event stream
// when nothing was sent yet, so the client sees a clean end of stream.
func (p *postReply) cancelled() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	if p.sse == nil {
		p.sse = startSSE(p.w)
	}
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
