package gateway

// The audit trail and the call metrics: one record per tools/call —
// admitted, denied (auth, scope, rate, quota, policy) or failed. Calls
// that reach the method table are recorded by a middleware at the head of
// the chain, so it sees what the feature and every other middleware
// decided; calls refused before it (no or a bad token) are recorded by the
// transport.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/tools"
)

// callMiddleware records every tools/call that passes the chain, and every
// other request that ran an operation on the backend (a REST-backed
// resource read, a prompt embedding a tool's result): in the metrics, and
// in the audit log when there is one, those as calls of the operation,
// with the method in detail. One classification (callOutcome) serves both.
func (s *Server) callMiddleware(next mcp.Handler) mcp.Handler {
	return func(r *mcp.Request) (any, error) {
		start := time.Now()
		res, err := next(r)
		if err != nil {
			var rerr *mcp.Error
			if errors.As(err, &rerr) && errorKind(rerr) == reasonInsufficientScope {
				s.metrics.authFailed(reasonInsufficientScope)
			}
		}
		if r.Method != "tools/call" && r.Backend == "" {
			return res, err
		}
		outcome, reason := callOutcome(r, res, err)
		s.observeCall(r, outcome, reason, start)
		if s.audit == nil {
			return res, err
		}
		e := s.auditEntry(r, start)
		e.Outcome, e.Reason = outcome, reason
		if r.Method != "tools/call" {
			e.Tool, e.BackendStatus, e.Arguments, e.Detail = r.Backend, r.BackendStatus, nil, r.Method
		} else if p, ok := res.(*mcp.PooledResult); ok && err == nil {
			e.BackendStatus = p.BackendStatus()
		}
		var rerr *mcp.Error
		if err != nil && errors.As(err, &rerr) {
			e.Detail = mcp.TruncateTo(rerr.Message, 200, "…")
			if r.Method != "tools/call" {
				e.Detail = r.Method + ": " + e.Detail
			}
		}
		s.audit.Record(e)
		return res, err
	}
}

// callOutcome is how a call ended, as the audit log records it and the
// metrics count it: its outcome (audit.Outcome*) and, for a denial, the
// check that refused (audit.Reason*).
func callOutcome(r *mcp.Request, res any, err error) (outcome, reason string) {
	switch {
	case err != nil && r.Ctx != nil && errors.Is(r.Ctx.Err(), context.Canceled):
		return audit.OutcomeCancelled, "" // the client went away
	case err != nil:
		return errorOutcome(err)
	case r.Method != "tools/call":
		return audit.OutcomeOK, ""
	}
	if _, ok := res.(*tools.InputRequiredResult); ok {
		return audit.OutcomeInputRequired, ""
	}
	if p, ok := res.(*mcp.PooledResult); ok {
		switch {
		case p.Denied() != "":
			return audit.OutcomeDenied, p.Denied()
		case p.IsError():
			return audit.OutcomeToolError, ""
		}
	}
	return audit.OutcomeOK, ""
}

// observeCall counts a call in the metrics of its tool (the document's:
// a name it lacks is "unknown"), with its backend exchange if it had one.
func (s *Server) observeCall(r *mcp.Request, outcome, reason string, start time.Time) {
	if r.Method != "tools/call" {
		if r.BackendTime > 0 {
			s.metrics.tool(r.Backend).observeBackend(r.BackendStatus, r.BackendTime)
		}
		return
	}
	var name string
	if r.Meta.Name != nil {
		name = *r.Meta.Name
	}
	t := s.metrics.tool(name)
	t.calls[callMetricOutcome(outcome, reason)].Inc()
	t.duration.Observe(time.Since(start).Seconds())
	if r.BackendTime > 0 {
		t.observeBackend(r.BackendStatus, r.BackendTime)
	}
}

// callMetricOutcome is the mcpgw_tool_calls_total outcome of an audit
// outcome and reason: the denials an operator alerts on apart (limits,
// quotas, a full replica) have their own.
func callMetricOutcome(outcome, reason string) int {
	switch outcome {
	case audit.OutcomeOK:
		return callOK
	case audit.OutcomeToolError:
		return callToolError
	case audit.OutcomeCancelled:
		return callCancelled
	case audit.OutcomeInputRequired:
		return callInputRequired
	case audit.OutcomeDenied:
		switch reason {
		case audit.ReasonRateLimited, audit.ReasonConcurrency:
			return callRateLimited
		case audit.ReasonQuotaExceeded:
			return callQuotaExceeded
		case audit.ReasonQuotaUnavailable:
			return callQuotaUnavailable
		case audit.ReasonBusy:
			return callBusy
		}
		return callDenied
	}
	return callError
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
		case audit.ReasonQuotaExceeded:
			// As a tool result's denial (tools' denial.reason): a quota
			// store that is down is not a client over its quota.
			if m, _ := rerr.Data.(map[string]any); m["scope"] == "unavailable" {
				return audit.OutcomeDenied, audit.ReasonQuotaUnavailable
			}
			return audit.OutcomeDenied, kind
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
