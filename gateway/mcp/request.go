package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Request is everything a method handler may know about one JSON-RPC
// request. Handlers never see the HTTP exchange; the transport fills this
// in, the same way for both eras, and middleware may add to it (the
// principal) before the handler runs.
type Request struct {
	// Ctx is the request's context. In the stateless era it ends when the
	// client goes away; in the session era only notifications/cancelled
	// cancels it (through CallContext).
	Ctx     context.Context
	Era     Era
	Version string
	// ClientCaps are the client's capabilities: negotiated once per
	// session, or sent with each stateless request.
	ClientCaps json.RawMessage
	ClientInfo json.RawMessage
	// Principal is who is calling; nil means anonymous (no authentication
	// configured, or none presented). Authentication middleware fills it.
	Principal *Principal
	// SessionID is the session-era session; empty in the stateless era.
	SessionID string
	// SessionClient is the identity (Identity) of the client that opened
	// the session: a session's limits stay its own whatever address or
	// forwarded header a later request of it comes with.
	SessionClient string
	// Client is the remote address (without port) of the HTTP request.
	Client string
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	// Meta is what the transport already read from Params.
	Meta Meta
	// LogLevel is the lowest level of notifications/message to send.
	LogLevel      LogLevel
	ProgressToken json.RawMessage
	// Out receives notifications related to this request; nil drops them.
	Out Sink
	// Cancel, when set, is told the cancel func of the request's backend
	// work (see CallContext), so that notifications/cancelled can stop it.
	Cancel CancelSlot
	// Stamp, when set, makes the stateless era's result fields (see
	// ResultMeta).
	Stamp *Stamper
	// Backend names the operation a request other than tools/call ran on
	// the backend (a REST-backed resource's GET, the tool an
	// operation-backed resource or prompt embeds), and BackendStatus its
	// answer: the audit log records such requests as calls of it.
	// BackendStatus and BackendTime (the time the backend took, every
	// round of the call; zero when nothing was sent) are also a
	// tools/call's, for the metrics; BackendStatus is then 0 when an
	// exchange got no answer.
	Backend       string
	BackendStatus int
	BackendTime   time.Duration
	// Surface is the part of the served tools this connection chose.
	Surface Surface
}

// Principal is an authenticated caller.
type Principal struct {
	// Subject identifies the caller (a token's sub claim).
	Subject string
	// Scopes are the scopes the caller was granted.
	Scopes []string
	// Issuer is the authorization server that issued the token (iss).
	Issuer string
	// ClientID is the OAuth client the token was issued to (client_id,
	// else azp); empty when the token names none.
	ClientID string
	// Claims are a few of the token's claims, for policy and audit: sub,
	// iss, aud ([]string), client_id, azp, email, name, groups and roles
	// ([]string), each only when present and of bounded size. Values are
	// strings or []string.
	Claims map[string]any
	// Token is the raw bearer token, kept only for RFC 8693 token
	// exchange. It is a credential: never log it, never put it in an
	// error, a session record or an audit entry, and never forward it to
	// a backend.
	Token string `json:"-"`
}

// Meta is the part of params the transport reads once: _meta and, for
// tools/call, prompts/get and resources/read, the target and the arguments.
type Meta struct {
	// Name and URI are read to check the 2026-07-28 Mcp-Name header.
	Name *string
	URI  *string
	// Arguments are tools/call's, read here so params are decoded once.
	Arguments json.RawMessage
	// OK is false when params did not decode into this shape; handlers then
	// decode again to report the problem.
	OK bool
}

// Sink delivers notifications related to one request.
type Sink interface {
	Notify(method string, params any)
}

// CancelSlot holds the cancel func of a request's backend work.
// Attach cancels at once when a cancellation arrived before the work began.
type CancelSlot interface {
	Attach(cancel context.CancelFunc)
}

// CallContext is the context a request's backend work runs in: bounded by
// timeout, with cause when it passes, and in a session cancelled by
// notifications/cancelled (with context.Canceled). One context serves both,
// so the call path derives no more. cancel must be called.
func (r *Request) CallContext(timeout time.Duration, cause error) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeoutCause(r.Ctx, timeout, cause)
	if r.Cancel != nil {
		r.Cancel.Attach(cancel)
	}
	return ctx, cancel
}

// Cancelled reports whether ctx (from CallContext with timeoutCause) ended
// for a reason other than its timeout: a cancellation, or the client going
// away.
func Cancelled(ctx context.Context, timeoutCause error) bool {
	return ctx.Err() != nil && !errors.Is(context.Cause(ctx), timeoutCause)
}

// Log sends a notifications/message when the request's level allows it.
func (r *Request) Log(level LogLevel, data any) {
	if level < r.LogLevel || r.Out == nil {
		return
	}
	r.Out.Notify("notifications/message", LogMessage{Level: level.String(), Logger: "mcp-gateway", Data: data})
}

// Enabled reports whether a message at level would be sent, so callers
// build its data only then.
func (r *Request) Enabled(level LogLevel) bool { return level >= r.LogLevel && r.Out != nil }

// WantsProgress reports whether the client asked for progress.
func (r *Request) WantsProgress() bool { return ValidProgressToken(r.ProgressToken) }

// Progress sends notifications/progress when the client asked for it with
// a progress token. Values must increase; callers pass stage numbers.
func (r *Request) Progress(done, total int, message string) {
	if !ValidProgressToken(r.ProgressToken) || r.Out == nil {
		return
	}
	r.Out.Notify("notifications/progress", ProgressParams{Token: r.ProgressToken, Progress: float64(done), Total: float64(total), Message: message})
}

// ProgressValue is Progress with fractional values (total 0: unknown).
func (r *Request) ProgressValue(done, total float64, message string) {
	if !ValidProgressToken(r.ProgressToken) || r.Out == nil {
		return
	}
	r.Out.Notify("notifications/progress", ProgressParams{Token: r.ProgressToken, Progress: done, Total: total, Message: message})
}

// LogAs is Log with another logger name (a backend's own log events).
func (r *Request) LogAs(level LogLevel, logger string, data any) {
	if level < r.LogLevel || r.Out == nil {
		return
	}
	r.Out.Notify("notifications/message", LogMessage{Level: level.String(), Logger: logger, Data: data})
}

// ValidProgressToken: a string or a number, like a request id; null or
// anything else means the client did not ask for progress.
func ValidProgressToken(t json.RawMessage) bool { return ValidID(t) }

// ValidID accepts the id forms JSON-RPC allows MCP to use: a string or a
// number. id must be valid JSON (its message was parsed): only its kind
// matters.
func ValidID(id json.RawMessage) bool {
	for len(id) > 0 && (id[0] == ' ' || id[0] == '\t' || id[0] == '\r' || id[0] == '\n') {
		id = id[1:]
	}
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// ProgressParams is the params of notifications/progress.
type ProgressParams struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress float64         `json:"progress"`
	Total    float64         `json:"total,omitempty"`
	Message  string          `json:"message,omitempty"`
}

// NamedCall is the target and the arguments of tools/call and
// prompts/get: as the transport read them (Meta), else decoded from
// params now and written back to Meta, so that what the middleware (the
// audit log) reads is what the handler runs.
func (r *Request) NamedCall() (name *string, args json.RawMessage, err error) {
	if r.Meta.OK {
		return r.Meta.Name, r.Meta.Arguments, nil
	}
	var p struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := DecodeParams(r, &p); err != nil {
		return nil, nil, err
	}
	r.Meta.Name, r.Meta.Arguments = p.Name, p.Arguments
	return p.Name, p.Arguments, nil
}
