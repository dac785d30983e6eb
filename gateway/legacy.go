package gateway

// The HTTP+SSE transport of 2024-11-05, for clients that speak nothing
// newer. A client GETs the SSE endpoint; the first event ("endpoint") names
// the URL it POSTs its messages to, ?sessionId=... included; every answer
// comes back on the event stream, never on the POST.
//
// The stream and the POSTs may land on different replicas: the session
// (created by the GET, before initialize) and its event log live in the
// session store like any session's, a POSTed request's response is
// appended to that log, and a wake-up hint on the bus tells the replica
// holding the stream to read it. Event ids carry the session id, so a
// client that reconnects with Last-Event-ID (after this replica shut
// down, say) resumes its session on any replica. A client that closes its
// stream ends its session after a grace period (LegacySSEGrace) in which
// it may still come back; the record names the stream that owns it, so a
// stream that died late on one replica never ends a session another
// replica is serving.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// Version20241105 is the revision of this transport. It is negotiated only
// here: on Streamable HTTP, initialize counter-offers the newest revision.
const Version20241105 = "2024-11-05"

// legacyVersion answers initialize on this transport: 2024-11-05 or any
// handshake revision served, else the newest one.
func legacyVersion(requested string) string {
	if requested == Version20241105 {
		return requested
	}
	return mcp.NegotiateVersion(requested)
}

// serveLegacySSE opens (or, with Last-Event-ID, resumes) a session's
// event stream.
func (s *Server) serveLegacySSE(w http.ResponseWriter, r *http.Request) {
	if !s.guard(w, r) {
		return
	}
	r, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	if err := s.openLegacyStream(w, r); err != nil {
		s.fail(w, r, nil, err)
	}
}

func (s *Server) openLegacyStream(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		return reject(http.StatusMethodNotAllowed, mcp.CodeInvalidRequest, "Method Not Allowed: open the event stream with GET")
	}
	if !accepts(r, "text/event-stream") {
		return reject(http.StatusNotAcceptable, mcp.CodeInvalidRequest, "Not Acceptable: Accept must list text/event-stream")
	}
	ctx := r.Context()
	// The stream makes the session: what it is served is chosen here.
	surface, err := s.requestSurface(r)
	if err != nil {
		return err
	}
	owner := newSessionID()[:16] // this stream's claim on the session
	sid, cursor, gap, err := s.legacyStart(ctx, r.Header.Get(headerLastEventID), owner, principalOf(ctx), s.clientOf(r), surface)
	if err != nil {
		return err
	}
	// Subscribe before reading the log so no event slips between the two.
	sub, err := s.bus.Subscribe(ctx, sessionTopic(sid))
	if err != nil {
		s.releaseLegacy(context.WithoutCancel(ctx), sid, owner)
		return busError(err)
	}
	defer sub.Close()

	sse, closeStream := s.openStream(w)
	defer closeStream()
	end := pumpClientGone
	// The endpoint event carries the stream's starting point, so a client
	// that loses the stream before any other event resumes this session.
	start := cursor
	if start == "" {
		start = logStart
	}
	if sse.named(sid+":"+start, "endpoint", []byte(s.legacyEndpoint()+"?sessionId="+sid)) == nil &&
		(!gap || sse.event(sid+":"+logStart, gapNotice()) == nil) {
		resumed := r.Header.Get(headerLastEventID) != ""
		end = s.pumpSession(ctx, sse, sid, cursor, sub.C(), sid+":", resumed)
	}
	if end == pumpClientGone {
		// The stream was the session: a client that left ends it, once
		// the grace period to come back is over. (A server that shuts
		// down keeps it, for the client to resume elsewhere.)
		s.releaseLegacy(context.WithoutCancel(ctx), sid, owner)
	}
	return nil
}

// logStart is the event part of a Last-Event-ID that means "before the
// first event" (the endpoint event of a session with an empty log).
const logStart = "-"

// legacyEndpoint is the messages URL the endpoint event names: relative
// when it sits beside the stream's path (so a proxy that serves the
// gateway under a prefix keeps working), else absolute.
func (s *Server) legacyEndpoint() string {
	dir, file := path.Split(s.cfg.LegacyMessagesPath)
	if sseDir, _ := path.Split(s.cfg.LegacySSEPath); dir == sseDir && file != "" {
		return file
	}
	return s.cfg.LegacyMessagesPath
}

// legacyStart creates the session a new stream carries, or finds the one
// a reconnecting client's Last-Event-ID ("session:event") names; either
// way the stream (owner) claims it.
func (s *Server) legacyStart(ctx context.Context, lastEventID, owner string, p *mcp.Principal, client string, surface mcp.Surface) (sid, cursor string, gap bool, err error) {
	subject := subjectOf(p)
	if lastEventID == "" {
		now := time.Now()
		sess := &sessions.Session{ID: newSessionID(), Transport: sessions.TransportSSE, Stream: owner,
			Principal: s.boundSubject(p), Client: mcp.IdentityOf(p, client), Surface: storedSurface(surface), CreatedAt: now, LastSeen: now}
		if err := s.createSession(ctx, sess); err != nil {
			return "", "", false, err
		}
		return sess.ID, "", false, nil
	}
	sid, event, ok := strings.Cut(lastEventID, ":")
	if !ok || event == "" {
		return "", "", false, reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Bad Request: Last-Event-ID %q was not issued by this server", mcp.Truncate(lastEventID))
	}
	sess, err := s.lookupSession(ctx, sid)
	if err != nil {
		return "", "", false, err
	}
	if s.auth != nil && sess.Principal != subject {
		return "", "", false, reject(http.StatusForbidden, mcp.CodeInvalidRequest, "Forbidden: this session was opened by another principal")
	}
	if sess.Transport != sessions.TransportSSE {
		return "", "", false, reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Bad Request: Last-Event-ID %q was not issued on this transport", mcp.Truncate(lastEventID))
	}
	if event == logStart {
		cursor = "" // from the first retained event
	} else if cursor, gap, err = s.streamCursor(ctx, sid, event); err != nil {
		return "", "", false, err
	}
	if _, err := s.updateSession(ctx, sid, func(x *sessions.Session) error { x.Stream = owner; return nil }); err != nil {
		return "", "", false, err
	}
	return sid, cursor, gap, nil
}

// releaseLegacy gives up a stream's claim on its session and ends the
// session after the grace period, unless another stream claimed it
// meanwhile (the client came back, on this replica or another).
func (s *Server) releaseLegacy(ctx context.Context, sid, owner string) {
	if _, err := s.updateSession(ctx, sid, func(x *sessions.Session) error {
		if x.Stream != owner {
			return errNotOwner
		}
		x.Stream = ""
		return nil
	}); err != nil {
		if !errors.Is(err, errNotOwner) && !errors.Is(err, sessions.ErrNotFound) {
			s.log.Warn("releasing a 2024-11-05 session failed", "err", err, "session", shortID(sid))
		}
		return
	}
	time.AfterFunc(s.cfg.LegacySSEGrace, func() {
		ctx := context.Background()
		sess, err := s.store.Update(ctx, sid, func(x *sessions.Session) error {
			if x.Stream != "" {
				return errNotOwner // the client came back
			}
			return nil
		})
		if err != nil {
			return
		}
		s.cancelSessionCalls(sid)
		if err := s.deleteSession(ctx, sid, sess.Client); err != nil && !errors.Is(err, sessions.ErrNotFound) {
			s.log.Warn("ending a 2024-11-05 session failed", "err", err, "session", shortID(sid))
		}
	})
}

var errNotOwner = errors.New("another stream owns the session")

// cancelSessionCalls cancels the calls this replica runs for a session.
func (s *Server) cancelSessionCalls(sid string) {
	s.inflightMu.Lock()
	var calls []*inflightCall
	for k, c := range s.inflight {
		if k.session == sid {
			calls = append(calls, c)
		}
	}
	s.inflightMu.Unlock()
	for _, c := range calls {
		c.cancelCall()
	}
}

// serveLegacyMessage takes one POSTed message of a 2024-11-05 session. A
// message the transport cannot take is refused on the POST itself; a
// request is accepted (202) at once and answered on the event stream, so
// a client's POST never waits for a slow tool call.
func (s *Server) serveLegacyMessage(w http.ResponseWriter, r *http.Request) {
	if !s.guard(w, r) {
		return
	}
	r = s.withTraceHeaders(r)
	r, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	if err := s.takeLegacyMessage(w, r); err != nil {
		s.fail(w, r, nil, err)
	}
}

func (s *Server) takeLegacyMessage(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		return reject(http.StatusMethodNotAllowed, mcp.CodeInvalidRequest, "Method Not Allowed: POST messages here; open the event stream at %s", mcp.Verbatim(s.cfg.LegacySSEPath))
	}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return reject(http.StatusRequestEntityTooLarge, mcp.CodeInvalidRequest, "Request Entity Too Large: body exceeds %d bytes", s.cfg.MaxBodyBytes)
	}
	sid := r.URL.Query().Get("sessionId")
	if sid == "" {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Bad Request: sessionId query parameter is required; it comes in the stream's endpoint event")
	}
	if v := r.Header.Get(headerProtocolVersion); v != "" && v != Version20241105 && !mcp.IsSessionVersion(v) {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version %q", v)
	}
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		return reject(http.StatusUnsupportedMediaType, mcp.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json")
	}
	sess, err := s.lookupSession(r.Context(), sid)
	if err != nil {
		return err
	}
	if err := s.checkSessionPrincipal(r, sess); err != nil {
		return err
	}
	if sess.Transport != sessions.TransportSSE {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Bad Request: session %s is not a 2024-11-05 session; use %s", sid, mcp.Verbatim(s.cfg.MountPath))
	}
	body, err := s.readJSON(w, r)
	if err != nil {
		return err
	}
	if isArray(body) {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not accepted on the 2024-11-05 transport; send one message per POST")
	}
	msg, perr := decodeMessage(body)
	if perr != nil {
		return perr
	}
	switch {
	case msg.isNotification():
		s.sessionNotification(r.Context(), sess, msg)
	case msg.isResponse():
		s.routeResponse(r.Context(), sess.ID, msg)
	default:
		if err := s.startLegacyRequest(r, sess, msg); err != nil {
			return err
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte("Accepted"))
	return nil
}

// legacyMaxRunning bounds the requests of one 2024-11-05 session running
// on one replica: their POSTs are answered at once, so nothing else would.
const legacyMaxRunning = 64

// startLegacyRequest runs a request in the background; its response and
// its notifications go to the session's stream. It refuses (on the POST)
// when the session has legacyMaxRunning requests running here, or when
// the server is shutting down.
func (s *Server) startLegacyRequest(r *http.Request, sess *sessions.Session, msg *message) error {
	sess, admitErr := s.legacyAdmits(r.Context(), sess, msg.Method)
	if admitErr != nil && !isMCPError(admitErr) {
		return admitErr // the store: the POST's own answer (503)
	}
	s.bgMu.Lock()
	switch {
	case s.bgClosed:
		s.bgMu.Unlock()
		return reject(http.StatusServiceUnavailable, mcp.CodeUnavailable, "Service Unavailable: the server is shutting down; reconnect to another replica")
	case s.bgRunning[sess.ID] >= legacyMaxRunning:
		s.bgMu.Unlock()
		return reject(http.StatusTooManyRequests, mcp.CodeInvalidRequest, "Too Many Requests: %d requests of this session are running", legacyMaxRunning)
	}
	s.bgRunning[sess.ID]++
	s.background.Add(1)
	s.bgMu.Unlock()

	reply := streamReply{srv: s, sid: sess.ID}
	req := s.sessionRequest(r, sess, msg, readMeta(msg.Params), s.sessionSink(sess.ID))
	h := s.sessionHandler(msg.Method)
	if admitErr != nil {
		h = func(*mcp.Request) (any, error) { return nil, admitErr }
	}
	done := s.trackInflight(sess.ID, msg.ID, req)
	go func() {
		defer func() {
			done()
			s.bgMu.Lock()
			if s.bgRunning[sess.ID]--; s.bgRunning[sess.ID] <= 0 {
				delete(s.bgRunning, sess.ID)
			}
			s.bgMu.Unlock()
			s.background.Done()
		}()
		s.dispatch(req, h, reply)
	}()
	return nil
}

func isMCPError(err error) bool {
	var e *mcp.Error
	return errors.As(err, &e)
}

// DrainBackground refuses new 2024-11-05 requests and waits (until ctx
// ends) for those running: their answers go to the store, where the
// client finds them on whichever replica it reconnects to. Call it after
// the HTTP server stopped taking requests and before stopping Run.
func (s *Server) DrainBackground(ctx context.Context) error {
	s.bgMu.Lock()
	s.bgClosed = true
	s.bgMu.Unlock()
	done := make(chan struct{})
	go func() { s.background.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// legacyAdmits enforces the handshake order the stream-first transport
// allows to be broken: one initialize, and nothing but ping before it. A
// record cached before initialize may be stale, so a refusal is checked
// against the store first, and the fresh record serves the request. An
// *mcp.Error is the request's answer (on the stream); another error is
// the store's.
func (s *Server) legacyAdmits(ctx context.Context, sess *sessions.Session, method string) (*sessions.Session, error) {
	switch method {
	case "ping":
		return sess, nil
	case "initialize":
		if sess.ProtocolVersion != "" {
			return sess, mcp.NewError(mcp.CodeInvalidRequest, "Invalid Request: this session is already initialized")
		}
		return sess, nil
	}
	if sess.ProtocolVersion != "" {
		return sess, nil
	}
	fresh, err := s.store.Get(ctx, sess.ID)
	if err != nil {
		return sess, storeError(err)
	}
	s.cache.put(fresh, time.Now())
	if fresh.ProtocolVersion == "" {
		return fresh, mcp.NewError(mcp.CodeInvalidRequest, "Invalid Request: send initialize first")
	}
	return fresh, nil
}

// streamReply answers a 2024-11-05 request on its session's event stream,
// wherever that stream is held.
type streamReply struct {
	srv *Server
	sid string
}

func (p streamReply) finish(id json.RawMessage, result any, rerr *mcp.Error) {
	defer releaseResult(result)
	buf := getBuf()
	defer putBuf(buf)
	*buf, _ = p.srv.encodeResponse(*buf, id, result, rerr)
	p.srv.pushToSession(p.sid, *buf)
}

// cancelled: a cancelled request gets no response.
func (streamReply) cancelled() {}

// initializeLegacy completes the handshake of a session the stream opened:
// the record exists already and gets the negotiated revision and the
// client's details.
func (s *Server) initializeLegacy(r *mcp.Request, p initializeParams) (any, error) {
	v := legacyVersion(*p.ProtocolVersion)
	_, err := s.updateSession(r.Ctx, r.SessionID, func(x *sessions.Session) error {
		if x.ProtocolVersion != "" {
			return errAlreadyInitialized
		}
		x.ProtocolVersion, x.Capabilities, x.ClientInfo = v, p.Capabilities, p.ClientInfo
		return nil
	})
	if errors.Is(err, errAlreadyInitialized) {
		return nil, mcp.NewError(mcp.CodeInvalidRequest, "Invalid Request: this session is already initialized")
	}
	if err != nil {
		return nil, err
	}
	return &initializeResult{
		ProtocolVersion: v,
		Capabilities:    s.capabilities(),
		ServerInfo:      s.serverInfo(),
		Instructions:    s.cfg.Instructions,
	}, nil
}

var errAlreadyInitialized = errors.New("session already initialized")

// LegacySSEPath is where the 2024-11-05 transport's stream is served;
// empty when the transport is off.
func (s *Server) LegacySSEPath() string {
	if s.cfg.DisableLegacySSE {
		return ""
	}
	return s.cfg.LegacySSEPath
}
