package gateway

// Input from the client in the middle of a call (tools.Input), both eras.
//
// Session era: each input request goes to the client as a JSON-RPC
// request on the call's stream (its POST stream; a batch member's or a
// 2024-11-05 request's on the session's push stream), with an id the
// gateway mints. The pending request is recorded in the store (id →
// replica, deadline; at most MaxPendingPerSession per session), so the
// client's response, POSTed to whichever replica the balancer picks, is
// routed to the waiting replica over the bus: each replica listens on a
// topic of its own. A response for an id nobody waits for is dropped
// (202). When the session ends, on any replica, its waiting calls end.
//
// 2026-07-28: the call's continuation is sealed (gateway/mrtr: AES-GCM,
// bound to the principal, the method and the params) into requestState;
// the retry opens it and spends it (pending.Store.Consume), so a replayed
// state is refused on every replica.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/mcp-gateway/gateway/tools"
	"github.com/mcp-gateway/mcp-gateway/sessions/pending"
)

// stateKeyName names the shared requestState key in the pending store.
const stateKeyName = "mrtr-state-key"

// inputAsker implements tools.Input for the server.
type inputAsker struct{ s *Server }

var _ tools.Input = inputAsker{}

// waiterKey names one pending server→client request.
type waiterKey struct{ session, id string }

// waiter receives the client's response (nil: the session ended).
type waiter chan []byte

// answer is a response routed from the replica that received it to the
// one whose call waits for it.
type answer struct {
	Session string          `json:"s"`
	ID      string          `json:"i"`
	Message json.RawMessage `json:"m"`
}

// replicaTopic is the bus topic only replica name listens on.
func replicaTopic(name string) string { return "replica:" + name }

func (a inputAsker) Ask(ctx context.Context, r *mcp.Request, reqs mcp.InputRequests) (mcp.InputResponses, error) {
	s := a.s
	out, ok := r.Out.(mcp.Messenger)
	if !ok || r.SessionID == "" {
		return nil, errors.New("this request has no stream to carry requests to the client")
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(s.cfg.ServerRequestTimeout)
	}
	if len(reqs) == 0 {
		return mcp.InputResponses{}, nil
	}
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	ids := make([]string, len(keys))
	chans := make([]waiter, len(keys))
	answered := make([]bool, len(keys))
	ended := false
	defer func() {
		for i, id := range ids {
			if id == "" {
				continue
			}
			s.dropWaiter(r.SessionID, id)
			if !answered[i] && !ended {
				// The gateway stopped waiting (timeout, cancel): tell the
				// client, so its dialog closes rather than take an answer
				// nobody will read.
				note, _ := mcp.Marshal(mcp.Notification{JSONRPC: "2.0", Method: "notifications/cancelled",
					Params: map[string]any{"requestId": json.RawMessage(id), "reason": "the gateway stopped waiting for this answer"}})
				if out.Send(note) == nil {
					s.metrics.notify("notifications/cancelled")
				}
			}
		}
		if ids[0] == "" {
			return
		}
		s.inBackground("pending:"+r.SessionID+":"+ids[0], func(ctx context.Context) {
			for _, id := range ids {
				if id != "" {
					_, _ = s.pending.Remove(ctx, r.SessionID, id)
				}
			}
		})
	}()
	for i, k := range keys {
		id := newRequestID()
		ch := s.addWaiter(r.SessionID, id)
		ids[i], chans[i] = id, ch
		err := s.pending.Add(ctx, pending.Record{Session: r.SessionID, ID: id, Replica: s.cfg.Replica, Deadline: deadline}, s.cfg.MaxPendingPerSession)
		switch {
		case errors.Is(err, pending.ErrFull):
			return nil, tools.ErrTooManyPending
		case err != nil:
			s.logLimited(ctx, slog.LevelWarn, "recording a pending request failed", "err", err, "session", shortID(r.SessionID))
			return nil, errors.New("the gateway's store is unavailable")
		}
		msg, err := mcp.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params,omitempty"`
		}{"2.0", json.RawMessage(id), reqs[k].Method, reqs[k].Params})
		if err != nil {
			return nil, err
		}
		if err := out.Send(msg); err != nil {
			return nil, errors.New("the call's stream to the client is closed")
		}
	}
	answers := make(mcp.InputResponses, len(keys))
	for i, k := range keys {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case data := <-chans[i]:
			answered[i] = true
			if data == nil {
				ended = true
				return nil, tools.ErrSessionEnded
			}
			var m message
			if json.Unmarshal(data, &m) != nil {
				return nil, errors.New("the client's answer is not a JSON-RPC response")
			}
			if m.Error != nil {
				var e struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				}
				_ = json.Unmarshal(m.Error, &e)
				return nil, errors.New("the client refused the " + reqs[k].Method + " request (" + mcp.Truncate(strings.TrimSpace(e.Message)) + ")")
			}
			if len(m.Result) == 0 {
				return nil, errors.New("the client's answer has no result")
			}
			answers[k] = m.Result
		}
	}
	return answers, nil
}

// newRequestID mints the JSON text of a server→client request id.
func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return `"mcpgw-` + base64.RawURLEncoding.EncodeToString(b[:]) + `"`
}

// waitingRequests counts the server→client requests this replica's calls
// wait answers for (mcpgw_pending_client_requests).
func (s *Server) waitingRequests() float64 {
	s.waitersMu.Lock()
	defer s.waitersMu.Unlock()
	return float64(len(s.waiters))
}

func (s *Server) addWaiter(sid, id string) waiter {
	ch := make(waiter, 1)
	s.waitersMu.Lock()
	s.waiters[waiterKey{sid, id}] = ch
	s.waitersMu.Unlock()
	return ch
}

func (s *Server) dropWaiter(sid, id string) {
	s.waitersMu.Lock()
	delete(s.waiters, waiterKey{sid, id})
	s.waitersMu.Unlock()
}

// deliverLocal hands a response to a call of this replica waiting for it;
// it reports whether one was.
func (s *Server) deliverLocal(sid, id string, data []byte) bool {
	s.waitersMu.Lock()
	ch, ok := s.waiters[waiterKey{sid, id}]
	if ok {
		delete(s.waiters, waiterKey{sid, id})
	}
	s.waitersMu.Unlock()
	if ok {
		ch <- data // buffered, and only one send: the entry is gone
	}
	return ok
}

// endWaiters ends every call of this replica waiting for an answer within
// session sid: the session ended.
func (s *Server) endWaiters(sid string) {
	s.waitersMu.Lock()
	var chans []waiter
	for k, ch := range s.waiters {
		if k.session == sid {
			chans = append(chans, ch)
			delete(s.waiters, k)
		}
	}
	s.waitersMu.Unlock()
	for _, ch := range chans {
		ch <- nil
	}
}

// routeResponse takes a client's response to a server→client request,
// received by this replica, to the call waiting for it, wherever it runs.
// A response nobody waits for is dropped.
func (s *Server) routeResponse(ctx context.Context, sid string, msg *message) {
	id := canonicalID(msg.ID)
	if !strings.HasPrefix(id, `"mcpgw-`) {
		return // not an id this gateway minted
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return
	}
	if s.deliverLocal(sid, id, data) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.StoreTimeout)
	defer cancel()
	rec, err := s.pending.Get(ctx, sid, id)
	switch {
	case errors.Is(err, pending.ErrNotFound):
		return
	case err != nil:
		s.logLimited(ctx, slog.LevelWarn, "looking up a pending request failed; the client's answer is lost", "err", err, "session", shortID(sid))
		return
	case rec.Replica == s.cfg.Replica:
		return // its call stopped waiting
	}
	b, _ := json.Marshal(answer{Session: sid, ID: id, Message: data})
	if err := s.bus.Publish(ctx, replicaTopic(rec.Replica), b); err != nil {
		s.logLimited(ctx, slog.LevelWarn, "routing a client's answer to its replica failed", "err", err, "session", shortID(sid))
	}
}

// listenAnswers delivers the responses other replicas route here until
// ctx ends.
func (s *Server) listenAnswers(ctx context.Context) {
	s.follow(ctx, replicaTopic(s.cfg.Replica), "this replica's topic", nil, func(data []byte) {
		var a answer
		if json.Unmarshal(data, &a) == nil {
			s.deliverLocal(a.Session, a.ID, a.Message)
		}
	})
}

// sealer is the requestState sealer: the configured key, else the
// deployment's, generated once and kept in the store.
func (s *Server) sealer(ctx context.Context) (*mrtr.Sealer, error) {
	if sl := s.stateSealer.Load(); sl != nil {
		return sl, nil
	}
	key := s.cfg.StateKey
	if len(key) == 0 {
		var err error
		if key, err = s.sharedStateKey(ctx); err != nil {
			s.logLimited(ctx, slog.LevelWarn, "reading the shared requestState key failed", "err", err)
			return nil, mcp.NewError(mcp.CodeUnavailable, "Service Unavailable: the gateway cannot reach its store; retry")
		}
	}
	sl, err := mrtr.NewSealer(key)
	if err != nil {
		return nil, err
	}
	s.stateSealer.Store(sl)
	return sl, nil
}

// sharedStateKey is the deployment's requestState key as the store holds
// it: the first replica to ask stores a random one.
func (s *Server) sharedStateKey(ctx context.Context) ([]byte, error) {
	candidate := make([]byte, mrtr.KeyLen)
	_, _ = rand.Read(candidate)
	return s.pending.SharedKey(ctx, stateKeyName, candidate)
}

// rereadSealer replaces the cached sealer with one of the key the store
// holds now, when that differs from old's; nil when it does not (or was
// read less than a second ago).
func (s *Server) rereadSealer(ctx context.Context, old *mrtr.Sealer) *mrtr.Sealer {
	now := time.Now().UnixNano()
	last := s.stateKeyRead.Load()
	if now-last < int64(time.Second) || !s.stateKeyRead.CompareAndSwap(last, now) {
		return nil
	}
	key, err := s.sharedStateKey(ctx)
	if err != nil || len(key) == 0 {
		return nil
	}
	sl, err := mrtr.NewSealer(key)
	if err != nil || sl.SameKey(old) {
		return nil
	}
	s.stateSealer.Store(sl)
	return sl
}

// binding is what a requestState is bound to.
func binding(r *mcp.Request) (mrtr.Binding, error) {
	b := mrtr.Binding{Method: r.Method}
	if r.Principal != nil {
		b.Principal = r.Principal.Issuer + "\x00" + r.Principal.Subject
	}
	d, err := mrtr.ParamsDigest(r.Params)
	if err != nil {
		return b, mcp.InvalidParams("Invalid params: %s", "params are not valid JSON")
	}
	b.Params = d
	return b, nil
}

func (a inputAsker) Seal(r *mcp.Request, state []byte) (string, error) {
	sl, err := a.s.sealer(r.Ctx)
	if err != nil {
		return "", err
	}
	b, err := binding(r)
	if err != nil {
		return "", err
	}
	token, _, err := sl.Seal(b, state, time.Now().Add(a.s.cfg.ServerRequestTimeout))
	return token, err
}

func (a inputAsker) Open(r *mcp.Request, token string) ([]byte, error) {
	s := a.s
	sl, err := s.sealer(r.Ctx)
	if err != nil {
		return nil, err
	}
	b, err := binding(r)
	if err != nil {
		return nil, err
	}
	payload, id, expires, err := sl.Open(b, token, time.Now())
	if errors.Is(err, mrtr.ErrTampered) && len(s.cfg.StateKey) == 0 {
		// The deployment's key may have changed under this replica (a
		// Redis that lost it, and a replica that made a new one): read it
		// again, at most once a second, and try once more.
		if fresh := s.rereadSealer(r.Ctx, sl); fresh != nil {
			payload, id, expires, err = fresh.Open(b, token, time.Now())
		}
	}
	if err != nil {
		return nil, mcp.InvalidParams("Invalid params for %s: requestState %s", r.Method, stateProblem(err))
	}
	first, err := s.pending.Consume(r.Ctx, "state:"+id, time.Until(expires)+time.Minute)
	switch {
	case err != nil:
		s.logLimited(r.Ctx, slog.LevelWarn, "spending a requestState failed", "err", err)
		return nil, mcp.NewError(mcp.CodeUnavailable, "Service Unavailable: the gateway cannot reach its store; retry")
	case !first:
		return nil, mcp.InvalidParams("Invalid params for %s: requestState was already used; start the call again without it", r.Method)
	}
	return payload, nil
}

// stateProblem says what is wrong with a requestState, for the client.
func stateProblem(err error) string {
	switch {
	case errors.Is(err, mrtr.ErrExpired):
		return "has expired; start the call again without it"
	case errors.Is(err, mrtr.ErrForeignPrincipal):
		return "was issued to another caller"
	case errors.Is(err, mrtr.ErrOtherRequest):
		return "was issued for another request (the method or params differ)"
	case errors.Is(err, mrtr.ErrTampered):
		return "failed its integrity check"
	}
	return "is not one this gateway issued"
}
