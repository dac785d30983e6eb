package gateway

// The Streamable HTTP transport for every revision on one endpoint.
//
// Era detection follows PROTOCOL.md §3.1: a body whose params._meta carries
// io.modelcontextprotocol/protocolVersion is stateless (2026-07-28) whatever
// other headers say; initialize starts a session; anything else must name a
// session. A request with neither a session nor modern markers gets a 400
// whose body carries no 2026-era error code, so a dual-era client falls back
// to initialize.
//
// Status codes: 404 means "session unknown" in the session era and "method
// not found" in the stateless era, never anything else. Transport rejections
// carry an id-less JSON-RPC error body.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "MCP-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerLastEventID     = "Last-Event-ID"
)

// ServeHTTP serves the MCP endpoint.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.guard(w, r) {
		return
	}
	r = s.withTraceHeaders(r)
	r, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	switch r.Method {
	case http.MethodPost:
		s.servePOST(w, r)
	case http.MethodGet:
		s.serveGET(w, r)
	case http.MethodDelete:
		s.serveDELETE(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		s.fail(w, r, nil, reject(http.StatusMethodNotAllowed, mcp.CodeInvalidRequest, "Method Not Allowed"))
	}
}

// guard applies the Host and Origin checks every MCP endpoint shares; it
// reports false when it has answered.
func (s *Server) guard(w http.ResponseWriter, r *http.Request) bool {
	if !s.origin.allowHost(r.Host) {
		s.fail(w, r, nil, reject(http.StatusForbidden, mcp.CodeInvalidRequest, "Forbidden: Host %q is not allowed", r.Host))
		return false
	}
	if !s.origin.allowOrigin(r.Header.Get("Origin")) {
		s.fail(w, r, nil, reject(http.StatusForbidden, mcp.CodeInvalidRequest, "Forbidden: Origin is not allowed"))
		return false
	}
	return true
}

// readBody checks a POST's headers and reads its body.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		return nil, reject(http.StatusUnsupportedMediaType, mcp.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json")
	}
	if !accepts(r, "application/json") || !accepts(r, "text/event-stream") {
		return nil, reject(http.StatusNotAcceptable, mcp.CodeInvalidRequest, "Not Acceptable: Accept must list application/json and text/event-stream")
	}
	return s.readJSON(w, r)
}

// readJSON reads a POST body within MaxBodyBytes and ReadTimeout. A
// declared Content-Length over the bound is refused before any byte is
// read; a body that trickles in is cut off at the deadline. The deadline
// is lifted once the body is in, so a long answer (an SSE stream on the
// POST) is not cut.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return nil, reject(http.StatusRequestEntityTooLarge, mcp.CodeInvalidRequest, "Request Entity Too Large: body exceeds %d bytes", s.cfg.MaxBodyBytes)
	}
	rc := http.NewResponseController(w)
	if s.cfg.ReadTimeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(s.cfg.ReadTimeout))
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, reject(http.StatusRequestEntityTooLarge, mcp.CodeInvalidRequest, "Request Entity Too Large: body exceeds %d bytes", s.cfg.MaxBodyBytes)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			w.Header().Set("Connection", "close")
			return nil, reject(http.StatusRequestTimeout, mcp.CodeInvalidRequest, "Request Timeout: the body did not arrive within %s", s.cfg.ReadTimeout)
		}
		return nil, reject(http.StatusBadRequest, mcp.CodeParseError, "Parse error: could not read body")
	}
	return body, nil
}

func (s *Server) servePOST(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	if isArray(body) {
		if err := s.serveBatch(w, r, body); err != nil {
			s.fail(w, r, nil, err)
		}
		return
	}
	msg, perr := decodeMessage(body)
	if perr != nil {
		var id json.RawMessage
		if msg != nil {
			id = msg.ID
		}
		s.fail(w, r, id, perr)
		return
	}
	meta := readMeta(msg.Params)
	switch sid := r.Header.Get(headerSessionID); {
	case meta.fields != nil && meta.fields.ProtocolVersion != nil:
		err = s.serveStateless(w, r, msg, meta)
	case msg.Method == "initialize":
		err = s.serveInitialize(w, r, msg)
	case sid != "":
		err = s.serveSessionMessage(w, r, sid, msg, meta)
	case r.Header.Get(headerMethod) != "" || r.Header.Get(headerProtocolVersion) == mcp.Version20260728:
		// Modern headers without the modern body fields: a malformed
		// 2026-07-28 request. Answer with a modern error so the client
		// stays modern.
		err = s.serveIncompleteModern(w, r, msg)
	default:
		err = reject(http.StatusBadRequest, mcp.CodeInvalidRequest,
			"Bad Request: Mcp-Session-Id header is required; start with initialize")
	}
	if err != nil {
		s.fail(w, r, msg.ID, err)
	}
}

// serveStateless serves one 2026-07-28 request: headers must mirror the
// body, the version must be served, and no session is used or minted. An
// error it returns is the whole answer; once it dispatches, the replier
// answers.
func (s *Server) serveStateless(w http.ResponseWriter, r *http.Request, msg *message, meta requestMeta) error {
	want := *meta.fields.ProtocolVersion
	switch got := r.Header.Get(headerProtocolVersion); {
	case got == "":
		return reject(http.StatusBadRequest, mcp.CodeHeaderMismatch, "Header mismatch: MCP-Protocol-Version header is required")
	case got != want:
		return reject(http.StatusBadRequest, mcp.CodeHeaderMismatch,
			"Header mismatch: MCP-Protocol-Version header %q does not match _meta protocolVersion %q", got, want)
	}
	if !mcp.IsStatelessVersion(want) {
		return reject(http.StatusBadRequest, mcp.CodeUnsupportedProtocolVer, "Unsupported protocol version").
			WithData(map[string]any{"supported": mcp.SupportedVersions, "requested": mcp.Truncate(want)})
	}
	if msg.isResponse() {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Invalid Request: clients do not send responses in %s", want)
	}
	if msg.isNotification() {
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	if err := checkMirroredHeaders(r, msg, meta); err != nil {
		return err
	}
	surface, err := s.requestSurface(r)
	if err != nil {
		return err
	}
	req := &mcp.Request{
		Surface:       surface,
		Ctx:           r.Context(), // closing the stream cancels the request
		Era:           mcp.EraStateless,
		Version:       want,
		ClientCaps:    meta.fields.ClientCapabilities,
		ClientInfo:    meta.fields.ClientInfo,
		ID:            msg.ID,
		Method:        msg.Method,
		Params:        msg.Params,
		LogLevel:      mcp.LevelOff,
		Client:        s.clientOf(r),
		Principal:     principalOf(r.Context()),
		Meta:          meta.Meta,
		ProgressToken: meta.fields.ProgressToken,
		Stamp:         s.stamper,
	}
	req.Ctx = s.withTraceMeta(req.Ctx, msg.Params)
	m, ok := s.lookup(msg.Method, mcp.EraStateless)
	if !ok {
		// The chain sees it too; its handler answers 404 with -32601.
		s.answerPOST(w, req, s.notFound)
		return nil
	}
	if !isJSONObject(meta.fields.ClientCapabilities) {
		return reject(http.StatusBadRequest, mcp.CodeInvalidParams,
			"Invalid params: _meta io.modelcontextprotocol/clientCapabilities must be an object")
	}
	if meta.fields.LogLevel != nil {
		lvl, ok := mcp.ParseLogLevel(*meta.fields.LogLevel)
		if !ok {
			return reject(http.StatusOK, mcp.CodeInvalidParams, "Invalid params: unknown log level %q", *meta.fields.LogLevel)
		}
		req.LogLevel = lvl
	}
	if m.stream != nil {
		// The chain admits the stream, with the request as the chain
		// passed it on, or answers in its place as for any request.
		res, err := s.traced(req, m.handle)
		if admitted, ok := res.(streamAdmitted); ok && err == nil {
			// The span ended with the admission: the stream's own work
			// (its keep-alives, for as long as it lasts) is no part of it.
			admitted.r.Ctx = outsideServerSpan(admitted.r.Ctx)
			m.stream(s, w, r, admitted.r)
			return nil
		}
		if _, stream := res.(streamAdmitted); stream {
			res = nil // an error after admission: the error answers
		}
		s.dispatch(req, func(*mcp.Request) (any, error) { return res, err }, newPostReply(w, s))
		return nil
	}
	s.answerPOST(w, req, m.handle)
	return nil
}

// answerPOST runs a stateless request's handler and answers on its POST:
// JSON, or SSE once the request has notifications to send.
func (s *Server) answerPOST(w http.ResponseWriter, req *mcp.Request, h mcp.Handler) {
	reply := newPostReply(w, s)
	req.Out = reply
	s.dispatch(req, h, reply)
}

// serveIncompleteModern answers a request with 2026-07-28 headers whose
// params lack the required _meta, in the stateless era's order: a
// mismatched Mcp-Method header (-32020), then a method the era does not
// have (404, -32601: ping, say, which no _meta would make exist), then the
// missing _meta (-32602).
func (s *Server) serveIncompleteModern(w http.ResponseWriter, r *http.Request, msg *message) error {
	if got := r.Header.Get(headerMethod); got != "" && got != msg.Method {
		return reject(http.StatusBadRequest, mcp.CodeHeaderMismatch, "Header mismatch: Mcp-Method header %q does not match body method %q", got, msg.Method)
	}
	if _, ok := s.lookup(msg.Method, mcp.EraStateless); !ok && msg.isRequest() {
		req := &mcp.Request{Ctx: r.Context(), Era: mcp.EraStateless, Version: mcp.Version20260728, ID: msg.ID,
			Method: msg.Method, Params: msg.Params, LogLevel: mcp.LevelOff, Client: s.clientOf(r), Principal: principalOf(r.Context()), Stamp: s.stamper}
		s.answerPOST(w, req, s.notFound)
		return nil
	}
	return reject(http.StatusBadRequest, mcp.CodeInvalidParams,
		"Invalid params: _meta must carry io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities")
}

// checkMirroredHeaders enforces the 2026-07-28 rule that Mcp-Method and
// Mcp-Name repeat the body.
func checkMirroredHeaders(r *http.Request, msg *message, meta requestMeta) *mcp.Error {
	mismatch := func(format string, args ...any) *mcp.Error {
		return reject(http.StatusBadRequest, mcp.CodeHeaderMismatch, format, args...)
	}
	switch got := r.Header.Get(headerMethod); {
	case got == "":
		return mismatch("Header mismatch: Mcp-Method header is required")
	case got != msg.Method:
		return mismatch("Header mismatch: Mcp-Method header %q does not match body method %q", got, msg.Method)
	}
	var want *string
	switch msg.Method {
	case "tools/call", "prompts/get":
		want = meta.Name
	case "resources/read":
		want = meta.URI
	default:
		return nil
	}
	raw := r.Header.Get(headerName)
	if raw == "" {
		return mismatch("Header mismatch: Mcp-Name header is required for %s", msg.Method)
	}
	got, ok := decodeHeaderValue(raw)
	if !ok {
		return mismatch("Header mismatch: Mcp-Name header is not validly encoded")
	}
	if want == nil || got != *want {
		return mismatch("Header mismatch: Mcp-Name header does not match the body")
	}
	return nil
}

// decodeHeaderValue undoes the =?base64?...?= encoding clients use for
// header values that are not plain ASCII.
func decodeHeaderValue(v string) (string, bool) {
	const pre, post = "=?base64?", "?="
	if !strings.HasPrefix(v, pre) || !strings.HasSuffix(v, post) || len(v) < len(pre)+len(post) {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(v[len(pre) : len(v)-len(post)])
	if err != nil {
		return "", false
	}
	return string(b), true
}

// serveInitialize starts a session-era session: initialize runs through the
// middleware chain like every request, and its result names the session.
func (s *Server) serveInitialize(w http.ResponseWriter, r *http.Request, msg *message) error {
	if !msg.isRequest() {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Invalid Request: initialize must be a request with an id")
	}
	surface, err := s.requestSurface(r)
	if err != nil {
		return err
	}
	m, _ := s.lookup("initialize", mcp.EraSession)
	req := &mcp.Request{
		Surface:   surface,
		Ctx:       r.Context(),
		Era:       mcp.EraSession,
		ID:        msg.ID,
		Method:    msg.Method,
		Params:    msg.Params,
		LogLevel:  mcp.LevelOff,
		Client:    s.clientOf(r),
		Principal: principalOf(r.Context()),
	}
	res, err := s.traced(req, m.handle)
	if err != nil {
		s.writeResult(w, http.StatusOK, msg.ID, nil, s.translate(r.Context(), msg.Method, err))
		return nil
	}
	if ir, ok := res.(*initializeResult); ok {
		w.Header().Set(headerSessionID, ir.sessionID)
	}
	s.writeResult(w, http.StatusOK, msg.ID, res, nil)
	return nil
}

// lookupSession resolves a session id: sessions.ErrNotFound (404) when it
// does not exist, a store error (503) when the store cannot say. A session
// this replica has cached is served without waiting for the store: the
// touch that keeps it alive, and the refresh of a stale copy, run in the
// background (bounded by StoreTimeout), so a slow or stalled store does
// not stall calls on live sessions.
func (s *Server) lookupSession(ctx context.Context, sid string) (*sessions.Session, error) {
	now := time.Now()
	// A cached record serves only while it is provably alive: within the
	// TTL of its last touch, and still there when the touch is due.
	if sess, fresh := s.cache.lookup(sid, now); sess != nil && now.Sub(sess.LastSeen) <= StoreTTL(s.cfg.SessionTTL) && s.isListening() {
		if !fresh {
			s.inBackground("refresh:"+sid, func(ctx context.Context) { s.refresh(ctx, sid) })
		}
		if now.Sub(sess.LastSeen) > touchEvery(s.cfg.SessionTTL) {
			s.inBackground("touch:"+sid, func(ctx context.Context) { s.touch(ctx, sess, now) })
		}
		return sess, nil
	}
	if !validSessionID(sid) {
		// Not an id this gateway mints: no store round trip needed.
		return nil, sessions.ErrNotFound
	}
	sess, err := s.store.Get(ctx, sid)
	if err != nil {
		return nil, storeError(err)
	}
	s.cache.put(sess, now)
	if !s.touch(ctx, sess, now) {
		return nil, sessions.ErrNotFound
	}
	return sess, nil
}

// inBackground runs fn once per key at a time, with a StoreTimeout
// context; a second call while one runs is dropped.
func (s *Server) inBackground(key string, fn func(context.Context)) {
	if _, running := s.backgroundStore.LoadOrStore(key, struct{}{}); running {
		return
	}
	go func() {
		defer s.backgroundStore.Delete(key)
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.StoreTimeout)
		defer cancel()
		fn(ctx)
	}()
}

// refresh fetches a session's record again and caches it; a session that
// is gone is dropped for good.
func (s *Server) refresh(ctx context.Context, sid string) {
	sess, err := s.store.Get(ctx, sid)
	switch {
	case errors.Is(err, sessions.ErrNotFound):
		s.forgetSession(sid)
	case err != nil:
		s.logLimited(ctx, slog.LevelWarn, "refreshing a cached session failed; serving the cached copy", "err", err, "session", shortID(sid))
	default:
		s.cache.put(sess, time.Now())
	}
}

// touch refreshes a session's idle TTL lazily: at most a few writes per TTL,
// not one per request. It reports false when the session is gone (and then
// drops it from the cache).
func (s *Server) touch(ctx context.Context, sess *sessions.Session, now time.Time) bool {
	if now.Sub(sess.LastSeen) <= touchEvery(s.cfg.SessionTTL) {
		return true
	}
	if err := s.store.Touch(ctx, sess.ID, now); err != nil {
		if errors.Is(err, sessions.ErrNotFound) {
			s.forgetSession(sess.ID)
			return false
		}
		// The store is down: serve from what we know; the request itself
		// fails later if it needs the store.
		s.logLimited(ctx, slog.LevelWarn, "session touch failed", "err", err, "session", shortID(sess.ID))
		return true
	}
	s.cache.touched(sess.ID, now)
	// What lives as long as the session follows its touch, off the
	// request's path: a refresh a moment late costs nothing.
	s.inBackground("touched:"+sess.ID, func(ctx context.Context) {
		s.refreshSessionCount(ctx, sess.Client, sess.ID)
		s.refreshSubscriptions(ctx, sess.ID)
	})
	return true
}

// validSessionID: the gateway mints 43 URL-safe base64 characters.
func validSessionID(id string) bool {
	if len(id) != 43 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// checkSessionVersion enforces MCP-Protocol-Version on a session request:
// any handshake revision we serve is accepted (clients and the conformance
// suite send older ones on later sessions); anything else is a 400.
func checkSessionVersion(r *http.Request) error {
	v := r.Header.Get(headerProtocolVersion)
	if v == "" || mcp.IsSessionVersion(v) {
		return nil
	}
	return reject(http.StatusBadRequest, mcp.CodeInvalidRequest,
		"Bad Request: unsupported MCP-Protocol-Version %q for a session (supported: %s)", v, strings.Join(mcp.SessionVersions, ", "))
}

// sessionFor checks a session request's version header and resolves its
// session.
func (s *Server) sessionFor(r *http.Request, sid string) (*sessions.Session, error) {
	if err := checkSessionVersion(r); err != nil {
		return nil, err
	}
	sess, err := s.lookupSession(r.Context(), sid)
	if err == nil {
		if err := s.checkSessionPrincipal(r, sess); err != nil {
			return nil, err
		}
	}
	if err == nil && sess.Transport == sessions.TransportSSE {
		return nil, reject(http.StatusBadRequest, mcp.CodeInvalidRequest,
			"Bad Request: session %s belongs to the 2024-11-05 HTTP+SSE transport; POST its messages to %s", sid, mcp.Verbatim(s.cfg.LegacyMessagesPath))
	}
	return sess, err
}

func (s *Server) serveSessionMessage(w http.ResponseWriter, r *http.Request, sid string, msg *message, meta requestMeta) error {
	sess, err := s.sessionFor(r, sid)
	if err != nil {
		s.auditForbiddenSession(r, err, msg.Method, meta.Meta)
		return err
	}
	switch {
	case msg.isNotification():
		s.sessionNotification(r.Context(), sess, msg)
		w.WriteHeader(http.StatusAccepted)
	case msg.isResponse():
		// An answer to a server→client request: to the call waiting for
		// it, on whichever replica; one nobody waits for is dropped.
		s.routeResponse(r.Context(), sess.ID, msg)
		w.WriteHeader(http.StatusAccepted)
	default:
		reply := s.newSessionReply(w, sess)
		req := s.sessionRequest(r, sess, msg, meta, reply)
		done := s.trackInflight(sess.ID, msg.ID, req)
		// The client going away cancels the call (cancel_on_disconnect),
		// as notifications/cancelled would.
		var gone <-chan struct{}
		if !s.cfg.KeepCallsOnDisconnect {
			gone = r.Context().Done()
		}
		// The call runs on: a stream the server closes at shutdown is
		// resumed elsewhere while the call finishes here.
		reply.serve(func() {
			defer done()
			s.dispatch(req, s.sessionHandler(msg.Method), reply)
		}, gone, req.Cancel.(*inflightCall).cancelCall)
	}
	return nil
}

// sessionHandler is the handler of a session-era method, inside the
// middleware chain; a method the era lacks (streams are stateless only) is
// answered "method not found".
func (s *Server) sessionHandler(method string) mcp.Handler {
	if m, ok := s.lookup(method, mcp.EraSession); ok && m.stream == nil {
		return m.handle
	}
	return s.notFound
}

// sessionRequest builds the request value of a session-era request. Its
// context is detached from the HTTP connection: in this era a disconnect is
// not a cancellation, only notifications/cancelled is.
func (s *Server) sessionRequest(r *http.Request, sess *sessions.Session, msg *message, meta requestMeta, out mcp.Sink) *mcp.Request {
	lvl := mcp.LevelOff
	if sess.LogLevel != "" {
		lvl, _ = mcp.ParseLogLevel(sess.LogLevel)
	}
	req := &mcp.Request{
		Ctx:           context.WithoutCancel(r.Context()),
		Era:           mcp.EraSession,
		Version:       sess.ProtocolVersion,
		ClientCaps:    sess.Capabilities,
		ClientInfo:    sess.ClientInfo,
		SessionID:     sess.ID,
		SessionClient: sess.Client,
		Client:        s.clientOf(r),
		Principal:     principalOf(r.Context()),
		ID:            msg.ID,
		Method:        msg.Method,
		Params:        msg.Params,
		LogLevel:      lvl,
		Out:           out,
		Meta:          meta.Meta,
		Stamp:         s.stamper,
		Surface:       sessionSurface(sess),
	}
	if meta.fields != nil {
		req.ProgressToken = meta.fields.ProgressToken
	}
	return req
}

// trackInflight makes a session request cancellable by notifications/cancelled:
// its backend work (mcp.Request.CallContext) is cancelled. The returned func
// must be called when it ends.
func (s *Server) trackInflight(sid string, id json.RawMessage, req *mcp.Request) func() {
	key := inflightKey{session: sid, id: canonicalID(id)}
	entry := &inflightCall{}
	req.Cancel = entry
	s.inflightMu.Lock()
	s.inflight[key] = entry
	s.inflightMu.Unlock()
	return func() {
		s.inflightMu.Lock()
		// A client that reused the id for a newer request owns the key now.
		if s.inflight[key] == entry {
			delete(s.inflight, key)
		}
		s.inflightMu.Unlock()
	}
}

// canonicalID makes 7, 7.0 and "7" distinct but stable map keys.
func canonicalID(id json.RawMessage) string { return string(bytes.TrimSpace(id)) }

func (s *Server) sessionNotification(ctx context.Context, sess *sessions.Session, msg *message) {
	switch msg.Method {
	case "notifications/initialized":
		if !sess.Initialized {
			if _, err := s.updateSession(ctx, sess.ID, func(x *sessions.Session) error { x.Initialized = true; return nil }); err != nil {
				// A notification has no answer to carry the failure.
				s.logLimited(ctx, slog.LevelWarn, "updating session failed", "err", err, "session", shortID(sess.ID))
			}
		}
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(msg.Params, &p) != nil || p.RequestID == nil {
			return
		}
		if !s.cancelLocal(sess.ID, p.RequestID) {
			// The request runs on another replica (or already ended).
			s.announce(ctx, broadcast{Kind: kindCancel, Session: sess.ID, Request: p.RequestID})
		}
	}
}

// cancelLocal cancels a request this replica runs; it reports whether it did.
func (s *Server) cancelLocal(sid string, id json.RawMessage) bool {
	s.inflightMu.Lock()
	call := s.inflight[inflightKey{session: sid, id: canonicalID(id)}]
	s.inflightMu.Unlock()
	if call != nil {
		call.cancelCall()
	}
	return call != nil
}

// batchConcurrency bounds how many members of one batch run at once (the
// session's concurrency bound, when lower, bounds them instead).
const batchConcurrency = 8

// serveBatch serves a JSON array body: allowed in 2025-03-26 sessions only,
// at most MaxBatch messages. Each member passes through the middleware
// chain like a single request; up to batchConcurrency run at once, and
// closing the HTTP request cancels those still running. The answer is at
// most MaxResponseBytes: a member whose response would go beyond gets an
// error in its place.
func (s *Server) serveBatch(w http.ResponseWriter, r *http.Request, body []byte) error {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return reject(http.StatusBadRequest, mcp.CodeParseError, "Parse error: body is not valid JSON")
	}
	sid := r.Header.Get(headerSessionID)
	if sid == "" {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest,
			"Invalid Request: JSON-RPC batches are only accepted within a 2025-03-26 session")
	}
	sess, err := s.sessionFor(r, sid)
	if err != nil {
		return err
	}
	if sess.ProtocolVersion != mcp.Version20250326 {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest,
			"Invalid Request: JSON-RPC batches are not supported in protocol revision %s", sess.ProtocolVersion)
	}
	switch {
	case len(raws) == 0:
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Invalid Request: empty batch")
	case len(raws) > s.cfg.MaxBatch:
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Invalid Request: a batch of %d messages; at most %d are accepted", len(raws), s.cfg.MaxBatch)
	}
	// Members answer in order; a nil entry has no answer (a notification,
	// a response, a cancelled request). Each member's answer is encoded as
	// soon as it is there (its result released at once); answers are kept
	// while they fit the budget, which leaves room for an error in the
	// place of every member.
	out := make([][]byte, len(raws))
	budget := s.cfg.MaxResponseBytes
	for _, raw := range raws {
		budget -= int64(min(len(raw), maxIDBytes)) + 200
	}
	var budgetMu sync.Mutex
	answer := func(i int, id json.RawMessage, result any, rerr *mcp.Error) {
		enc, _ := s.encodeResponse(nil, id, result, rerr)
		releaseResult(result)
		budgetMu.Lock()
		fits := int64(len(enc)) <= budget
		if fits {
			budget -= int64(len(enc))
		}
		budgetMu.Unlock()
		if !fits {
			enc, _ = s.encodeResponse(nil, id, nil, mcp.NewError(mcp.CodeInternalError,
				"Internal error: the batch's answer would exceed %d bytes; send this request on its own", s.cfg.MaxResponseBytes))
		}
		out[i] = enc
	}
	// Members run up to batchConcurrency at once, and never more than the
	// session may run (session_concurrency): the rest wait their turn
	// rather than be refused.
	running := batchConcurrency
	if sc := s.settings().sessionConcurrency; sc > 0 && sc < running {
		running = sc
	}
	sem := make(chan struct{}, running)
	var wg sync.WaitGroup
	for i, raw := range raws {
		msg, perr := decodeMessage(raw)
		if perr != nil {
			var id json.RawMessage
			if msg != nil {
				id = msg.ID
			}
			answer(i, id, nil, perr.WithStatus(0))
			continue
		}
		switch {
		case msg.Method == "initialize":
			if msg.ID != nil {
				answer(i, msg.ID, nil, mcp.NewError(mcp.CodeInvalidRequest, "Invalid Request: initialize must not be part of a batch"))
			}
		case msg.isNotification():
			s.sessionNotification(r.Context(), sess, msg)
		case msg.isResponse():
			s.routeResponse(r.Context(), sess.ID, msg)
		default:
			// Notifications of batched requests go to the session's push stream.
			req := s.sessionRequest(r, sess, msg, readMeta(msg.Params), s.sessionSink(sess.ID))
			req.Ctx = r.Context() // a batch whose client left is not worth finishing
			done := s.trackInflight(sess.ID, msg.ID, req)
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem; done() }()
				rec := &collectReply{}
				s.dispatch(req, s.sessionHandler(msg.Method), rec)
				if rec.resp != nil {
					answer(i, rec.resp.ID, rec.resp.Result, rec.resp.Error)
				}
			})
		}
	}
	wg.Wait()
	b := []byte{'['}
	for _, enc := range out {
		if enc == nil {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, enc...)
	}
	if len(b) == 1 {
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	writeBody(w, http.StatusOK, append(b, ']'))
	return nil
}

func (s *Server) serveDELETE(w http.ResponseWriter, r *http.Request) {
	if err := s.endSession(w, r); err != nil {
		s.fail(w, r, nil, err)
	}
}

func (s *Server) endSession(w http.ResponseWriter, r *http.Request) error {
	sid := r.Header.Get(headerSessionID)
	if sid == "" || s.cfg.DisableSessionDelete {
		w.Header().Set("Allow", "GET, POST")
		if !s.cfg.DisableSessionDelete {
			w.Header().Set("Allow", "GET, POST, DELETE")
		}
		return reject(http.StatusMethodNotAllowed, mcp.CodeInvalidRequest, "Method Not Allowed")
	}
	if err := checkSessionVersion(r); err != nil {
		return err
	}
	if !validSessionID(sid) {
		return sessions.ErrNotFound
	}
	client := ""
	if s.auth != nil || s.counter != nil {
		// Only its own principal ends a session, and it stops counting
		// against its client's cap: both need the record (not a touch:
		// it is about to go).
		sess, fresh := s.cache.lookup(sid, time.Now())
		if sess == nil || !fresh {
			var err error
			if sess, err = s.store.Get(r.Context(), sid); err != nil {
				return storeError(err)
			}
		}
		if err := s.checkSessionPrincipal(r, sess); err != nil {
			return err
		}
		client = sess.Client
	}
	if err := s.deleteSession(r.Context(), sid, client); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// deleteSession ends a session: its record and log go, every replica
// drops its cached copy and ends the session's streams, and it stops
// counting against client's session cap (client: sessions.Session.Client).
func (s *Server) deleteSession(ctx context.Context, sid, client string) error {
	defer s.releaseSession(context.WithoutCancel(ctx), client, sid)
	err := s.store.Delete(ctx, sid)
	s.forgetSession(sid)
	if err != nil {
		return storeError(err)
	}
	s.announce(ctx, broadcast{Kind: kindEnded, Session: sid})
	s.wakeSession(ctx, sid)
	s.dropSubscriptions(ctx, sid)
	s.inBackground("pending-end:"+sid, func(ctx context.Context) {
		if _, err := s.pending.RemoveSession(ctx, sid); err != nil {
			s.logLimited(ctx, slog.LevelWarn, "dropping an ended session's pending requests failed", "err", err, "session", shortID(sid))
		}
	})
	return nil
}

// newSessionID returns 256 random bits as URL-safe base64: visible ASCII.
func newSessionID() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// remoteHost is the client's address without the port.
func remoteHost(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

func isJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// accepts reports whether the request's Accept header admits media type mt
// (wildcards count).
func accepts(r *http.Request, mt string) bool {
	major, _, _ := strings.Cut(mt, "/")
	for _, h := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(h, ",") {
			t, _, _ := strings.Cut(part, ";")
			t = strings.ToLower(strings.TrimSpace(t))
			if t == mt || t == "*/*" || t == major+"/*" {
				return true
			}
		}
	}
	return false
}
