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
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

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
	if !s.origin.allowHost(r.Host) {
		s.writeError(w, http.StatusForbidden, nil, newError(codeInvalidRequest, "Forbidden: Host %q is not allowed", r.Host))
		return
	}
	if !s.origin.allowOrigin(r.Header.Get("Origin")) {
		s.writeError(w, http.StatusForbidden, nil, newError(codeInvalidRequest, "Forbidden: Origin is not allowed"))
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
		s.writeError(w, http.StatusMethodNotAllowed, nil, newError(codeInvalidRequest, "Method Not Allowed"))
	}
}

func (s *Server) servePOST(w http.ResponseWriter, r *http.Request) {
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		s.writeError(w, http.StatusUnsupportedMediaType, nil, newError(codeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json"))
		return
	}
	if !accepts(r, "application/json") || !accepts(r, "text/event-stream") {
		s.writeError(w, http.StatusNotAcceptable, nil, newError(codeInvalidRequest, "Not Acceptable: Accept must list application/json and text/event-stream"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.writeError(w, http.StatusRequestEntityTooLarge, nil, newError(codeInvalidRequest, "Request Entity Too Large: body exceeds %d bytes", s.cfg.MaxBodyBytes))
			return
		}
		s.writeError(w, http.StatusBadRequest, nil, newError(codeParseError, "Parse error: could not read body"))
		return
	}
	if isArray(body) {
		s.serveBatch(w, r, body)
		return
	}
	msg, perr := decodeMessage(body)
	if perr != nil {
		var id json.RawMessage
		if msg != nil {
			id = msg.ID
		}
		s.writeError(w, http.StatusBadRequest, id, perr)
		return
	}
	meta := readMeta(msg.Params)
	switch sid := r.Header.Get(headerSessionID); {
	case meta.Meta != nil && meta.Meta.ProtocolVersion != nil:
		s.serveStateless(w, r, msg, meta)
	case msg.Method == "initialize":
		s.serveInitialize(w, r, msg)
	case sid != "":
		s.serveSessionMessage(w, r, sid, msg, meta)
	case r.Header.Get(headerMethod) != "" || r.Header.Get(headerProtocolVersion) == version20260728:
		// Modern headers without the modern body fields: a malformed
		// 2026-07-28 request. Answer with a modern error so the client
		// stays modern.
		s.writeError(w, http.StatusBadRequest, msg.ID, newError(codeInvalidParams,
			"Invalid params: _meta must carry io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities"))
	default:
		s.writeError(w, http.StatusBadRequest, msg.ID, newError(codeInvalidRequest,
			"Bad Request: Mcp-Session-Id header is required; start with initialize"))
	}
}

// serveStateless serves one 2026-07-28 request: headers must mirror the
// body, the version must be served, and no session is used or minted.
func (s *Server) serveStateless(w http.ResponseWriter, r *http.Request, msg *message, meta requestMeta) {
	want := *meta.Meta.ProtocolVersion
	switch got := r.Header.Get(headerProtocolVersion); {
	case got == "":
		s.writeError(w, http.StatusBadRequest, msg.ID, newError(codeHeaderMismatch, "Header mismatch: MCP-Protocol-Version header is required"))
		return
	case got != want:
		s.writeError(w, http.StatusBadRequest, msg.ID, newError(codeHeaderMismatch,
			"Header mismatch: MCP-Protocol-Version header %q does not match _meta protocolVersion %q", got, want))
		return
	}
	if !isStatelessVersion(want) {
		s.writeError(w, http.StatusBadRequest, msg.ID, newError(codeUnsupportedProtocolVer, "Unsupported protocol version").
			withData(map[string]any{"supported": supportedVersions, "requested": want}))
		return
	}
	if msg.isResponse() {
		s.writeError(w, http.StatusBadRequest, msg.ID, newError(codeInvalidRequest, "Invalid Request: clients do not send responses in %s", want))
		return
	}
	if msg.isNotification() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if err := checkMirroredHeaders(r, msg, meta); err != nil {
		s.writeError(w, http.StatusBadRequest, msg.ID, err)
		return
	}
	if !isJSONObject(meta.Meta.ClientCapabilities) {
		s.writeError(w, http.StatusBadRequest, msg.ID, newError(codeInvalidParams,
			"Invalid params: _meta io.modelcontextprotocol/clientCapabilities must be an object"))
		return
	}
	m, ok := methods[msg.Method]
	if !ok || m.eras&eraStateless == 0 {
		s.writeError(w, http.StatusNotFound, msg.ID, newError(codeMethodNotFound, "Method not found: %s", msg.Method))
		return
	}
	req := &request{
		ctx:        r.Context(), // closing the stream cancels the request
		era:        eraStateless,
		version:    want,
		caps:       meta.Meta.ClientCapabilities,
		clientInfo: meta.Meta.ClientInfo,
		id:         msg.ID,
		method:     msg.Method,
		params:     msg.Params,
		logLevel:   levelOff,
		client:     remoteHost(r),
		meta:       meta,
	}
	if meta.Meta.LogLevel != nil {
		lvl, ok := parseLogLevel(*meta.Meta.LogLevel)
		if !ok {
			s.writeError(w, http.StatusOK, msg.ID, newError(codeInvalidParams, "Invalid params: unknown log level %q", *meta.Meta.LogLevel))
			return
		}
		req.logLevel = lvl
	}
	req.progressToken = meta.Meta.ProgressToken
	if m.stream != nil {
		m.stream(s, w, r, req)
		return
	}
	reply := newPostReply(w, s)
	req.out = reply
	s.dispatch(req, m, reply)
}

// checkMirroredHeaders enforces the 2026-07-28 rule that Mcp-Method and
// Mcp-Name repeat the body.
func checkMirroredHeaders(r *http.Request, msg *message, meta requestMeta) *rpcError {
	switch got := r.Header.Get(headerMethod); {
	case got == "":
		return newError(codeHeaderMismatch, "Header mismatch: Mcp-Method header is required")
	case got != msg.Method:
		return newError(codeHeaderMismatch, "Header mismatch: Mcp-Method header %q does not match body method %q", got, msg.Method)
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
		return newError(codeHeaderMismatch, "Header mismatch: Mcp-Name header is required for %s", msg.Method)
	}
	got, ok := decodeHeaderValue(raw)
	if !ok {
		return newError(codeHeaderMismatch, "Header mismatch: Mcp-Name header is not validly encoded")
	}
	if want == nil || got != *want {
		return newError(codeHeaderMismatch, "Header mismatch: Mcp-Name header does not match the body")
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

// serveInitialize starts a session-era session.
func (s *Server) serveInitialize(w http.ResponseWriter, r *http.Request, msg *message) {
	if !msg.isRequest() {
		s.writeError(w, http.StatusBadRequest, nil, newError(codeInvalidRequest, "Invalid Request: initialize must be a request with an id"))
		return
	}
	res, sess, err := s.initialize(r.Context(), msg.Params)
	if err != nil {
		s.writeResult(w, http.StatusOK, msg.ID, nil, s.reportError(r.Context(), msg.Method, err))
		return
	}
	w.Header().Set(headerSessionID, sess.ID)
	s.writeResult(w, http.StatusOK, msg.ID, res, nil)
}

// lookupSession resolves a session id, writing the error response itself
// when it cannot.
func (s *Server) lookupSession(w http.ResponseWriter, r *http.Request, sid string, id json.RawMessage) *sessions.Session {
	now := time.Now()
	// A cached record serves only while it is provably alive: within the
	// TTL of its last touch, and still there when the touch is due.
	if sess := s.cache.get(sid, now); sess != nil && now.Sub(sess.LastSeen) <= StoreTTL(s.cfg.SessionTTL) && s.isListening() {
		if s.touch(r.Context(), sess, now) {
			return sess
		}
		s.cache.drop(sid)
	}
	if !validSessionID(sid) {
		// Not an id this gateway mints: no store round trip needed.
		s.writeError(w, http.StatusNotFound, id, newError(codeSessionNotFound, "Session not found: it ended or expired; send initialize to start a new one"))
		return nil
	}
	sess, err := s.store.Get(r.Context(), sid)
	switch {
	case errors.Is(err, sessions.ErrNotFound):
		s.writeError(w, http.StatusNotFound, id, newError(codeSessionNotFound, "Session not found: it ended or expired; send initialize to start a new one"))
		return nil
	case err != nil:
		s.log.Error("session store failed", "err", err, "session", sid)
		s.writeError(w, http.StatusServiceUnavailable, id, newError(codeUnavailable, "Service Unavailable: the session store is unavailable"))
		return nil
	}
	if !s.touch(r.Context(), sess, now) {
		s.writeError(w, http.StatusNotFound, id, newError(codeSessionNotFound, "Session not found: it ended or expired; send initialize to start a new one"))
		return nil
	}
	s.cache.put(sess, now)
	return sess
}

// touch refreshes a session's idle TTL lazily: at most a few writes per TTL,
// not one per request. It reports false when the session is gone.
func (s *Server) touch(ctx context.Context, sess *sessions.Session, now time.Time) bool {
	if now.Sub(sess.LastSeen) <= touchEvery(s.cfg.SessionTTL) {
		return true
	}
	if err := s.store.Touch(ctx, sess.ID, now); err != nil {
		if errors.Is(err, sessions.ErrNotFound) {
			return false
		}
		// The store is down: serve from what we know; the request itself
		// fails later if it needs the store.
		s.log.Warn("session touch failed", "err", err, "session", sess.ID)
		return true
	}
	cp := *sess
	cp.LastSeen = now
	s.cache.put(&cp, now)
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
func (s *Server) checkSessionVersion(w http.ResponseWriter, r *http.Request, id json.RawMessage) bool {
	v := r.Header.Get(headerProtocolVersion)
	if v == "" || isSessionVersion(v) {
		return true
	}
	s.writeError(w, http.StatusBadRequest, id, newError(codeInvalidRequest,
		"Bad Request: unsupported MCP-Protocol-Version %q for a session (supported: %s)", v, strings.Join(sessionVersions, ", ")))
	return false
}

func (s *Server) serveSessionMessage(w http.ResponseWriter, r *http.Request, sid string, msg *message, meta requestMeta) {
	if !s.checkSessionVersion(w, r, msg.ID) {
		return
	}
	sess := s.lookupSession(w, r, sid, msg.ID)
	if sess == nil {
		return
	}
	switch {
	case msg.isNotification():
		s.sessionNotification(r.Context(), sess, msg)
		w.WriteHeader(http.StatusAccepted)
	case msg.isResponse():
		// Answers to server→client requests. The gateway sends none yet;
		// an unexpected answer is accepted and dropped.
		w.WriteHeader(http.StatusAccepted)
	default:
		reply := newPostReply(w, s)
		req := s.sessionRequest(r.Context(), sess, msg, meta, reply)
		m, ok := methods[msg.Method]
		if !ok || m.eras&eraSession == 0 {
			reply.finish(msg.ID, nil, newError(codeMethodNotFound, "Method not found: %s", msg.Method))
			return
		}
		cancel := s.trackInflight(sess.ID, msg.ID, req)
		defer cancel()
		s.dispatch(req, m, reply)
	}
}

// sessionRequest builds the request value of a session-era request. Its
// context is detached from the HTTP connection: in this era a disconnect is
// not a cancellation, only notifications/cancelled is.
func (s *Server) sessionRequest(ctx context.Context, sess *sessions.Session, msg *message, meta requestMeta, out sink) *request {
	lvl := levelOff
	if sess.LogLevel != "" {
		lvl, _ = parseLogLevel(sess.LogLevel)
	}
	req := &request{
		ctx:        context.WithoutCancel(ctx),
		era:        eraSession,
		version:    sess.ProtocolVersion,
		caps:       sess.Capabilities,
		clientInfo: sess.ClientInfo,
		session:    sess,
		id:         msg.ID,
		method:     msg.Method,
		params:     msg.Params,
		logLevel:   lvl,
		out:        out,
		meta:       meta,
	}
	if meta.Meta != nil {
		req.progressToken = meta.Meta.ProgressToken
	}
	return req
}

// trackInflight makes a session request cancellable by notifications/cancelled:
// its backend work (request.callContext) is cancelled. The returned func must
// be called when it ends.
func (s *Server) trackInflight(sid string, id json.RawMessage, req *request) func() {
	key := inflightKey{session: sid, id: canonicalID(id)}
	entry := &inflightCall{}
	req.inflight = entry
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
			s.updateSession(ctx, sess.ID, func(x *sessions.Session) error { x.Initialized = true; return nil })
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
			s.announce(ctx, broadcast{Kind: "cancel", Session: sess.ID, Request: p.RequestID})
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

// serveBatch serves a JSON array body: allowed in 2025-03-26 sessions only.
func (s *Server) serveBatch(w http.ResponseWriter, r *http.Request, body []byte) {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		s.writeError(w, http.StatusBadRequest, nil, newError(codeParseError, "Parse error: body is not valid JSON"))
		return
	}
	sid := r.Header.Get(headerSessionID)
	if sid == "" {
		s.writeError(w, http.StatusBadRequest, nil, newError(codeInvalidRequest,
			"Invalid Request: JSON-RPC batches are only accepted within a 2025-03-26 session"))
		return
	}
	if !s.checkSessionVersion(w, r, nil) {
		return
	}
	sess := s.lookupSession(w, r, sid, nil)
	if sess == nil {
		return
	}
	if sess.ProtocolVersion != version20250326 {
		s.writeError(w, http.StatusBadRequest, nil, newError(codeInvalidRequest,
			"Invalid Request: JSON-RPC batches are not supported in protocol revision %s", sess.ProtocolVersion))
		return
	}
	if len(raws) == 0 {
		s.writeError(w, http.StatusBadRequest, nil, newError(codeInvalidRequest, "Invalid Request: empty batch"))
		return
	}
	var out []response
	for _, raw := range raws {
		msg, perr := decodeMessage(raw)
		if perr != nil {
			var id json.RawMessage
			if msg != nil {
				id = msg.ID
			}
			out = append(out, response{JSONRPC: "2.0", ID: id, Error: perr})
			continue
		}
		switch {
		case msg.Method == "initialize":
			if msg.ID != nil {
				out = append(out, response{JSONRPC: "2.0", ID: msg.ID, Error: newError(codeInvalidRequest, "Invalid Request: initialize must not be part of a batch")})
			}
		case msg.isNotification():
			s.sessionNotification(r.Context(), sess, msg)
		case msg.isResponse():
		default:
			rec := &collectReply{}
			// Notifications of batched requests go to the session's push stream.
			req := s.sessionRequest(r.Context(), sess, msg, readMeta(msg.Params), s.sessionSink(sess.ID))
			m, ok := methods[msg.Method]
			if !ok || m.eras&eraSession == 0 {
				out = append(out, response{JSONRPC: "2.0", ID: msg.ID, Error: newError(codeMethodNotFound, "Method not found: %s", msg.Method)})
				continue
			}
			cancel := s.trackInflight(sess.ID, msg.ID, req)
			s.dispatch(req, m, rec)
			cancel()
			if rec.resp != nil {
				out = append(out, *rec.resp)
			}
		}
	}
	if len(out) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) serveDELETE(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(headerSessionID)
	if sid == "" || s.cfg.DisableSessionDelete {
		w.Header().Set("Allow", "GET, POST")
		if !s.cfg.DisableSessionDelete {
			w.Header().Set("Allow", "GET, POST, DELETE")
		}
		s.writeError(w, http.StatusMethodNotAllowed, nil, newError(codeInvalidRequest, "Method Not Allowed"))
		return
	}
	if !s.checkSessionVersion(w, r, nil) {
		return
	}
	if !validSessionID(sid) {
		s.writeError(w, http.StatusNotFound, nil, newError(codeSessionNotFound, "Session not found"))
		return
	}
	err := s.store.Delete(r.Context(), sid)
	s.cache.end(sid, time.Now())
	switch {
	case errors.Is(err, sessions.ErrNotFound):
		s.writeError(w, http.StatusNotFound, nil, newError(codeSessionNotFound, "Session not found"))
		return
	case err != nil:
		s.log.Error("session delete failed", "err", err, "session", sid)
		s.writeError(w, http.StatusServiceUnavailable, nil, newError(codeUnavailable, "Service Unavailable: the session store is unavailable"))
		return
	}
	s.announce(r.Context(), broadcast{Kind: "ended", Session: sid})
	s.wakeSession(r.Context(), sid)
	w.WriteHeader(http.StatusOK)
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
