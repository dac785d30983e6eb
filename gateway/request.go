package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// era is the protocol family of one request.
type era uint8

const (
	eraSession   era = 1 << iota // 2025-03-26, 2025-06-18, 2025-11-25
	eraStateless                 // 2026-07-28
	eraBoth      = eraSession | eraStateless
)

// request is everything a method handler may know about one JSON-RPC
// request. Handlers never see the HTTP exchange; the transport fills this.
type request struct {
	ctx     context.Context
	era     era
	version string
	// caps are the client's capabilities: negotiated once per session, or
	// sent with each stateless request.
	caps       json.RawMessage
	clientInfo json.RawMessage
	// session is nil in the stateless era.
	session *sessions.Session
	// client is the remote address of a stateless request: the caller
	// quotas count (see quotaKey).
	client string
	id     json.RawMessage
	method string
	params json.RawMessage
	// logLevel is the lowest level of notifications/message to send.
	logLevel      logLevel
	progressToken json.RawMessage
	// out receives notifications related to this request.
	out sink
	// meta is what the transport read from params.
	meta requestMeta
	// inflight is set for session requests: notifications/cancelled
	// cancels their callContext through it.
	inflight *inflightCall
}

// quotaKey names the caller for quotas: the session, or in the stateless era
// the remote address.
func (r *request) quotaKey() string {
	if r.session != nil {
		return "session:" + r.session.ID
	}
	return "addr:" + r.client
}

// callContext is the context a request's backend work runs in: bounded by
// timeout, with toolgen.ErrTimeout as the cause when it passes, and in a
// session cancelled by notifications/cancelled (with context.Canceled). One
// context serves both, so the call path derives no more. cancel must be
// called.
func (r *request) callContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeoutCause(r.ctx, timeout, toolgen.ErrTimeout)
	if r.inflight != nil {
		r.inflight.attach(cancel)
	}
	return ctx, cancel
}

// cancelled reports whether ctx (from callContext) ended for a reason other
// than its timeout: a cancellation, or the client going away.
func cancelled(ctx context.Context) bool {
	return ctx.Err() != nil && !errors.Is(context.Cause(ctx), toolgen.ErrTimeout)
}

// sink delivers notifications related to one request.
type sink interface {
	notify(method string, params any)
}

// log sends a notifications/message when the request's level allows it.
func (r *request) log(level logLevel, data any) {
	if level < r.logLevel || r.out == nil {
		return
	}
	r.out.notify("notifications/message", logMessage{Level: level.String(), Logger: "mcp-gateway", Data: data})
}

// progress sends notifications/progress when the client asked for it with
// a progress token. Values must increase; callers pass stage numbers.
func (r *request) progress(done, total int, message string) {
	if !validProgressToken(r.progressToken) || r.out == nil {
		return
	}
	r.out.notify("notifications/progress", progressParams{Token: r.progressToken, Progress: done, Total: total, Message: message})
}

// validProgressToken: a string or a number, like a request id; null or
// anything else means the client did not ask for progress.
func validProgressToken(t json.RawMessage) bool { return validID(t) }

type progressParams struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress int             `json:"progress"`
	Total    int             `json:"total,omitempty"`
	Message  string          `json:"message,omitempty"`
}

// requestMeta is the part of params the transport reads: _meta and, for
// tools/call and resources/read, the target and the arguments.
type requestMeta struct {
	Meta *metaFields
	// Name and URI are read to check the 2026-07-28 Mcp-Name header.
	Name *string
	URI  *string
	// Arguments are tools/call's, read here so params are decoded once.
	Arguments json.RawMessage
	// ok is false when params did not decode into this shape; handlers then
	// decode again to report the problem.
	ok bool
}

// metaFields are the members of params._meta the gateway reads.
type metaFields struct {
	ProtocolVersion    *string
	ClientCapabilities json.RawMessage
	ClientInfo         json.RawMessage
	LogLevel           *string
	ProgressToken      json.RawMessage
}

// readMeta reads what the transport needs from params (already valid JSON:
// decodeMessage checked the whole message). Params that are not an object
// yield an empty meta; the handler reports them. Member names match exactly.
func readMeta(params json.RawMessage) requestMeta {
	var m requestMeta
	p := bytes.TrimSpace(params)
	if len(p) == 0 || p[0] != '{' {
		m.ok = len(p) == 0
		return m
	}
	// As encoding/json would, a member of the wrong type is skipped (ok
	// becomes false) and the others are still read.
	m.ok = true
	err := jsonlex.ScanObject(p, func(key, value []byte) error {
		switch string(key) {
		case "_meta":
			switch value[0] {
			case 'n':
				m.Meta = nil
			case '{':
				m.Meta = readMetaFields(value, &m.ok)
			default:
				m.ok = false
			}
		case "name":
			optionalString(&m.Name, value, &m.ok)
		case "uri":
			optionalString(&m.URI, value, &m.ok)
		case "arguments":
			m.Arguments = value
		}
		return nil
	})
	m.ok = m.ok && err == nil
	return m
}

func readMetaFields(raw []byte, ok *bool) *metaFields {
	f := &metaFields{}
	_ = jsonlex.ScanObject(raw, func(key, value []byte) error {
		switch string(key) {
		case "io.modelcontextprotocol/protocolVersion":
			optionalString(&f.ProtocolVersion, value, ok)
		case "io.modelcontextprotocol/clientCapabilities":
			f.ClientCapabilities = value
		case "io.modelcontextprotocol/clientInfo":
			f.ClientInfo = value
		case "io.modelcontextprotocol/logLevel":
			optionalString(&f.LogLevel, value, ok)
		case "progressToken":
			f.ProgressToken = value
		}
		return nil
	})
	return f
}

// optionalString reads a JSON string member that may be null into dst; a
// value of another type leaves dst as it was and clears ok.
func optionalString(dst **string, raw []byte, ok *bool) {
	if raw[0] == 'n' {
		*dst = nil
		return
	}
	s, isString := jsonlex.String(raw)
	if !isString {
		*ok = false
		return
	}
	*dst = &s
}

// enabled reports whether a message at level would be sent, so callers
// build its data only then.
func (r *request) enabled(level logLevel) bool { return level >= r.logLevel && r.out != nil }
