package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/watch"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// replayBatch bounds how many logged events one store read returns.
const replayBatch = 256

// legacyPoll is how often a 2024-11-05 stream re-reads its log when
// keep-alives are off.
const legacyPoll = 5 * time.Second

// serveGET opens a session's push stream, or resumes a POST stream its
// Last-Event-ID names. Events come from the session's event log, so a
// stream can be resumed on any replica with Last-Event-ID; wake-up hints
// on the bus say when to read the log again.
func (s *Server) serveGET(w http.ResponseWriter, r *http.Request) {
	if err := s.openPushStream(w, r); err != nil {
		s.fail(w, r, nil, err)
	}
}

// openPushStream checks a GET, resolves where the stream starts and pumps
// it; an error it returns is the whole answer (nothing was written).
func (s *Server) openPushStream(w http.ResponseWriter, r *http.Request) error {
	sid := r.Header.Get(headerSessionID)
	if sid == "" {
		// 2026-07-28 has no GET; a session-era client must name its session.
		w.Header().Set("Allow", "POST")
		return reject(http.StatusMethodNotAllowed, mcp.CodeInvalidRequest, "Method Not Allowed: GET needs an Mcp-Session-Id")
	}
	if !accepts(r, "text/event-stream") {
		return reject(http.StatusNotAcceptable, mcp.CodeInvalidRequest, "Not Acceptable: Accept must list text/event-stream")
	}
	sess, err := s.sessionFor(r, sid)
	if err != nil {
		return err
	}
	ctx := r.Context()
	// Subscribe before reading the log so no event slips between the two.
	sub, err := s.bus.Subscribe(ctx, sessionTopic(sid))
	if err != nil {
		return busError(err)
	}
	defer sub.Close()

	last := r.Header.Get(headerLastEventID)
	if namesPostStream(last) {
		return s.resumePostStream(w, r, sess, sub.C(), last)
	}
	logID, prev := splitEventID(last)
	if prev != "" && !validStreamToken(prev, pushStreamKind) {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Bad Request: Last-Event-ID %q was not issued for this session", mcp.Truncate(last))
	}
	// A client that resumes its stream replaces it: the one it names is gone.
	p := &pushStream{srv: s, sid: sid, token: newStreamToken(pushStreamKind), resume: last != "", resumed: last != "", replaces: prev, surface: sessionSurface(sess)}
	var gap bool
	if last == "" || logID != "" { // else logStart: from the first retained event
		if p.cursor, gap, err = s.streamCursor(ctx, sid, logID); err != nil {
			return err
		}
	}
	if err := p.register(ctx); err != nil {
		return err
	}
	defer p.release(context.WithoutCancel(ctx))
	if err := p.awaitPlace(ctx, sub.C(), 2*s.cfg.StoreTimeout); err != nil {
		return err
	}

	sse, closeStream := s.openStream(w)
	defer closeStream()
	if primes(sess.ProtocolVersion) {
		start := p.cursor
		if gap {
			start = ""
		}
		if sse.prime(streamEventID(start, p.token)) != nil {
			return nil
		}
	}
	if gap {
		// Say so rather than leave a silent gap: the client missed events
		// that are no longer retained.
		if sse.event(streamEventID(logStart, p.token), gapNotice()) != nil {
			return nil
		}
	}
	s.pushSession(ctx, sse, p, sub.C())
	return nil
}

// streamCursor resolves where a session's stream starts: after the client's
// Last-Event-ID when it names one (gap: those events are no longer
// retained, so the stream starts at what is), else at the log's end, so a
// fresh stream carries what happens from now on.
func (s *Server) streamCursor(ctx context.Context, sid, lastEventID string) (cursor string, gap bool, err error) {
	if lastEventID == "" {
		cursor, err = s.store.LastEventID(ctx, sid)
		return cursor, false, storeError(err)
	}
	if _, err := s.store.ReadAfter(ctx, sid, lastEventID, 1); err != nil {
		switch {
		case errors.Is(err, sessions.ErrEventGone):
			return "", true, nil
		case errors.Is(err, sessions.ErrBadEventID):
			return "", false, reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Bad Request: Last-Event-ID %q was not issued for this session", lastEventID)
		default:
			return "", false, storeError(err)
		}
	}
	return lastEventID, false, nil
}

// openStream starts a long-lived SSE response: counted for shutdown
// (Run waits for streams) and in the open-streams gauge. The returned
// func must be called when the stream ends.
func (s *Server) openStream(w http.ResponseWriter) (*sseWriter, func()) {
	s.streams.Add(1)
	s.metrics.openStream.Inc()
	sse := startSSE(w)
	return sse, func() {
		sse.release()
		s.metrics.openStream.Dec()
		s.streams.Done()
	}
}

// gapNotice tells a stream's client that events it should have had are no
// longer retained.
func gapNotice() []byte {
	data, _ := mcp.Marshal(mcp.Notification{JSONRPC: "2.0", Method: "notifications/message", Params: mcp.LogMessage{
		Level: "error", Logger: "mcp-gateway",
		Data: map[string]string{"message": "events after Last-Event-ID are no longer retained; some notifications were lost"},
	}})
	return data
}

// keepAliveTicks ticks every SSEKeepAlive (never when it is zero); stop
// must be called.
func (s *Server) keepAliveTicks() (ticks <-chan time.Time, stop func()) {
	if s.cfg.SSEKeepAlive <= 0 {
		return nil, func() {}
	}
	t := time.NewTicker(s.cfg.SSEKeepAlive)
	return t.C, t.Stop
}

// pumpEnd says why a session's stream ended.
type pumpEnd uint8

const (
	pumpClientGone   pumpEnd = iota // the client closed it or stopped reading
	pumpServerDone                  // the server is shutting down
	pumpSessionEnded                // the session ended or expired
)

// pumpSession copies a 2024-11-05 session's log to its stream until the
// client goes, the session ends, or the server shuts down. Event ids are
// the log's, after idPrefix. The stream is its session's life: each
// keep-alive also keeps the session from idling out. resumed: the client
// sent Last-Event-ID, so what it first gets is a replay
// (mcpgw_events_replayed_total), as on a GET push stream.
func (s *Server) pumpSession(ctx context.Context, sse *sseWriter, sid, cursor string, wake <-chan []byte, idPrefix string, resumed bool) pumpEnd {
	defer s.local.add(&localStream{sid: sid, principal: principalOf(ctx)})()
	keepAlive, stop := s.keepAliveTicks()
	defer stop()
	// A 2024-11-05 stream carries every answer: when keep-alives (the
	// backstop for lost wake-up hints) are off, it still re-reads the log.
	poll := keepAlive
	if idPrefix != "" && poll == nil {
		t := time.NewTicker(legacyPoll)
		defer t.Stop()
		poll = t.C
	}
	for {
		evs, err := s.store.ReadAfter(ctx, sid, cursor, replayBatch)
		switch {
		case errors.Is(err, sessions.ErrNotFound):
			return pumpSessionEnded // the session ended: end its stream
		case errors.Is(err, sessions.ErrEventGone):
			// Fell behind the log's bound: say so, then go on from what is retained.
			if sse.event(idPrefix+logStart, gapNotice()) != nil {
				return pumpClientGone
			}
			cursor = ""
			continue
		case err != nil:
			s.logLimited(ctx, slog.LevelWarn, "reading session stream failed", "err", err, "session", shortID(sid))
		}
		for _, e := range evs {
			if le := readLogEvent(e.Data); le.kind == 0 {
				if sse.event(idPrefix+e.ID, le.msg) != nil {
					return pumpClientGone
				}
				if resumed {
					s.metrics.replayed.Inc()
				}
			}
			cursor = e.ID
		}
		if len(evs) == replayBatch {
			continue
		}
		resumed = false // until the first wait: what the client missed
		select {
		case <-ctx.Done():
			return pumpClientGone
		case <-s.done:
			_ = sse.retry(retryMillis) // tell the client to come back (to another replica) soon
			return pumpServerDone
		case _, ok := <-wake:
			if !ok {
				return pumpServerDone // the bus closed under us: let the client reconnect
			}
		case <-poll:
			if keepAlive != nil && sse.comment("keep-alive") != nil {
				return pumpClientGone
			}
			if idPrefix != "" {
				if _, err := s.lookupSession(ctx, sid); errors.Is(err, sessions.ErrNotFound) {
					return pumpSessionEnded
				}
			}
			// The keep-alive tick doubles as the backstop for missed hints:
			// the loop re-reads the log and notices an ended session.
		}
	}
}

// maxListenSubscriptions bounds one listen stream's resourceSubscriptions:
// each is read once when the stream opens, and renewed while it lasts.
const maxListenSubscriptions = 100

// listen serves subscriptions/listen (2026-07-28): acknowledge the
// notifications the gateway honours (resourceSubscriptions of resources the
// caller may read), then carry them until the client closes the stream or
// the server shuts down.
func (s *Server) listen(w http.ResponseWriter, _ *http.Request, r *mcp.Request) {
	var p struct {
		Notifications *struct {
			ToolsListChanged      bool     `json:"toolsListChanged"`
			PromptsListChanged    bool     `json:"promptsListChanged"`
			ResourcesListChanged  bool     `json:"resourcesListChanged"`
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	}
	if err := mcp.DecodeParams(r, &p); err != nil {
		s.writeResult(w, http.StatusOK, r.ID, nil, s.translate(r.Ctx, r.Method, err))
		return
	}
	if p.Notifications == nil {
		s.writeResult(w, http.StatusOK, r.ID, nil, mcp.InvalidParams("Invalid params for subscriptions/listen: notifications is required"))
		return
	}
	subID := r.ID
	// Resource subscriptions: those the caller may read, up to the
	// session cap; the acknowledgement lists what is honoured.
	honoured := map[string]any{}
	var watched []string
	for _, uri := range p.Notifications.ResourceSubscriptions {
		if len(watched) == maxListenSubscriptions || len(uri) > maxSubscribedURI || slices.Contains(watched, uri) {
			continue
		}
		if s.checkSubscribable(r, uri) == nil {
			watched = append(watched, uri)
		}
	}
	var listener *watch.Listener
	var changed <-chan struct{}
	if len(watched) > 0 {
		ctx, cancel := context.WithTimeout(r.Ctx, s.cfg.StoreTimeout*time.Duration(1+len(watched)/10))
		l, err := s.watch.Listen(ctx, watched)
		cancel()
		if err != nil {
			s.writeResult(w, http.StatusOK, r.ID, nil, s.translate(r.Ctx, r.Method, storeError(err)))
			return
		}
		listener, changed = l, l.C()
		defer listener.Close()
		honoured["resourceSubscriptions"] = watched
	}
	// List changes (a document reload): tools, resources, and prompts
	// (which a caller may use depends on the tools' scopes).
	local := &localStream{principal: r.Principal, surface: r.Surface, ch: make(chan string, 3),
		wants: listKinds{tools: p.Notifications.ToolsListChanged, resources: p.Notifications.ResourcesListChanged,
			prompts: p.Notifications.PromptsListChanged}}
	if local.wants.tools {
		honoured["toolsListChanged"] = true
	}
	if local.wants.resources {
		honoured["resourcesListChanged"] = true
	}
	if local.wants.prompts {
		honoured["promptsListChanged"] = true
	}
	if local.wants.tools || local.wants.resources || local.wants.prompts {
		defer s.local.add(local)()
	}
	sse, closeStream := s.openStream(w)
	defer closeStream()
	meta := map[string]any{"io.modelcontextprotocol/subscriptionId": subID}
	ack, _ := mcp.Marshal(mcp.Notification{JSONRPC: "2.0", Method: "notifications/subscriptions/acknowledged", Params: map[string]any{
		"_meta":         meta,
		"notifications": honoured,
	}})
	if sse.event("", ack) != nil {
		return
	}
	s.metrics.notify("notifications/subscriptions/acknowledged")
	keepAlive, stop := s.keepAliveTicks()
	defer stop()
	for {
		select {
		case <-r.Ctx.Done():
			return
		case <-s.done:
			// Graceful server-side close: the final listen result, then end.
			final, _ := mcp.Marshal(mcp.Response{JSONRPC: "2.0", ID: subID, Result: map[string]any{
				"resultType": "complete",
				"_meta":      meta,
			}})
			_ = sse.event("", final)
			return
		case method := <-local.ch:
			msg, _ := mcp.Marshal(mcp.Notification{JSONRPC: "2.0", Method: method, Params: map[string]any{"_meta": meta}})
			if sse.event("", msg) != nil {
				return
			}
			s.metrics.notify(method)
		case <-changed:
			for _, uri := range listener.Take() {
				msg, _ := mcp.Marshal(mcp.Notification{JSONRPC: "2.0", Method: "notifications/resources/updated",
					Params: map[string]any{"_meta": meta, "uri": uri}})
				if sse.event("", msg) != nil {
					return
				}
				s.metrics.notify("notifications/resources/updated")
			}
		case <-keepAlive:
			if sse.comment("keep-alive") != nil {
				return
			}
		}
	}
}
