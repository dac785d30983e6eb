package gateway

// The audit trail: one record per tools/call — admitted, denied (auth,
// scope, rate, quota, policy) or failed. Calls that reach the method
// table are recorded by a middleware at the head of the chain, so it
// sees what the feature and every other middleware decided; calls refused
// before it (no or a bad token) are recorded by the transport.

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/tools"
)

// auditMiddleware records every tools/call that passes the chain, and every
// other request that ran an operation on the backend (a REST-backed
// resource read, a prompt embedding a tool's result): those as calls of
// the operation, with the method in detail.
func (s *Server) auditMiddleware(next mcp.Handler) mcp.Handler {
	return func(r *mcp.Request) (any, error) {
		start := time.Now()
		res, err := next(r)
		if r.Method != "tools/call" && r.Backend == "" {
			return res, err
		}
		e := s.auditEntry(r, start)
		if r.Method != "tools/call" {
			e.Tool, e.BackendStatus, e.Arguments, e.Detail = r.Backend, r.BackendStatus, nil, r.Method
		}
		switch {
		case err != nil:
			e.Outcome, e.Reason = errorOutcome(err)
			var rerr *mcp.Error
			if errors.As(err, &rerr) {
				e.Detail = mcp.TruncateTo(rerr.Message, 200, "…")
				if r.Method != "tools/call" {
					e.Detail = r.Method + ": " + e.Detail
				}
			}
		case r.Method != "tools/call":
			e.Outcome = audit.OutcomeOK
		default:
			e.Outcome = audit.OutcomeOK
			if _, ok := res.(*tools.InputRequiredResult); ok {
				e.Outcome = audit.OutcomeInputRequired
			}
			if p, ok := res.(*mcp.PooledResult); ok {
				e.BackendStatus = p.BackendStatus()
				switch {
				case p.Denied() != "":
					e.Outcome, e.Reason = audit.OutcomeDenied, p.Denied()
				case p.IsError():
					e.Outcome = audit.OutcomeToolError
				}
			}
		}
		s.audit.Record(e)
		return res, err
	}
}

// errorOutcome is how the audit log records a request that failed:
// cancelled, denied (its error names a refusal's kind) or an error (a
// backend's failure is not a refusal).
func errorOutcome(err error) (outcome, reason string) {
	if errors.Is(err, mcp.ErrCancelled) {
		return audit.OutcomeCancelled, ""
	}
	var rerr *mcp.Error
	if errors.As(err, &rerr) {
		switch kind := errorKind(rerr); kind {
		case "", "backend_error", "backend_timeout", "tool_error":
		default:
			return audit.OutcomeDenied, kind
		}
	}
	return audit.OutcomeError, ""
}

// errorKind is the denial an error reports in its data (kind), if any.
func errorKind(e *mcp.Error) string {
	if m, ok := e.Data.(map[string]any); ok {
		if k, ok := m["kind"].(string); ok {
			return k
		}
	}
	return ""
}

func (s *Server) auditEntry(r *mcp.Request, start time.Time) audit.Entry {
	e := audit.Entry{
		Time:      start,
		Client:    r.Identity(),
		Arguments: r.Meta.Arguments,
		Duration:  time.Since(start),
		Era:       r.Version,
		API:       s.cfg.API,
	}
	if r.SessionID != "" {
		e.Session = audit.HashSession(r.SessionID)
	}
	if r.Principal != nil {
		e.Subject = r.Principal.Subject
	}
	if r.Meta.Name != nil {
		e.Tool = *r.Meta.Name
	}
	return e
}

// auditAuthFailure records the tools/call requests of a POST that
// authentication refused. The body is read only when auditing is on,
// within MaxBodyBytes and ReadTimeout like any body, and at most MaxBatch
// records come of one request: a client without a token cannot flood the
// log faster than it could with one.
func (s *Server) auditAuthFailure(w http.ResponseWriter, r *http.Request) {
	if s.audit == nil || r.Method != http.MethodPost {
		return
	}
	body, err := s.readJSON(w, r)
	if err != nil {
		return
	}
	var msgs []json.RawMessage
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		if json.Unmarshal(t, &msgs) != nil {
			return
		}
	} else {
		msgs = []json.RawMessage{body}
	}
	recorded := 0
	for _, raw := range msgs {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &m) != nil || m.Method != "tools/call" {
			continue
		}
		if recorded++; recorded > s.cfg.MaxBatch {
			return
		}
		s.audit.Record(audit.Entry{
			Time:      time.Now(),
			API:       s.cfg.API,
			Client:    "addr:" + s.clientOf(r),
			Tool:      mcp.TruncateTo(m.Params.Name, 128, "…"),
			Arguments: m.Params.Arguments,
			Outcome:   audit.OutcomeDenied,
			Reason:    audit.ReasonUnauthenticated,
		})
	}
}

// auditForbiddenSession records a tools/call refused because its session
// belongs to another principal (a replayed session id), which the
// transport answers before the chain.
func (s *Server) auditForbiddenSession(r *http.Request, err error, method string, meta mcp.Meta) {
	var rerr *mcp.Error
	if s.audit == nil || method != "tools/call" || !errors.As(err, &rerr) || errorKind(rerr) != kindForbiddenSession {
		return
	}
	e := audit.Entry{
		Time:      time.Now(),
		API:       s.cfg.API,
		Client:    mcp.IdentityOf(principalOf(r.Context()), s.clientOf(r)),
		Arguments: meta.Arguments,
		Outcome:   audit.OutcomeDenied,
		Reason:    audit.ReasonForbiddenSession,
		Session:   audit.HashSession(r.Header.Get(headerSessionID)),
	}
	if p := principalOf(r.Context()); p != nil {
		e.Subject = p.Subject
	}
	if meta.Name != nil {
		e.Tool = *meta.Name
	}
	s.audit.Record(e)
}
