package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// Outcomes of a call (Entry.Outcome).
const (
	OutcomeOK        = "ok"         // the tool answered
	OutcomeToolError = "tool_error" // an isError result, backend errors included
	OutcomeDenied    = "denied"     // refused before the backend; Reason says why
	OutcomeError     = "error"      // a JSON-RPC error
	OutcomeCancelled = "cancelled"  // the client cancelled or went away
	// OutcomeInputRequired: a 2026-07-28 call answered input_required; its
	// retry is a call of its own.
	OutcomeInputRequired = "input_required"
)

// Reasons for a denial (Entry.Reason).
const (
	ReasonUnauthenticated   = "unauthenticated"
	ReasonForbiddenSession  = "forbidden_session"
	ReasonInsufficientScope = "insufficient_scope"
	ReasonRateLimited       = "rate_limited"
	ReasonQuotaExceeded     = "quota_exceeded"
	ReasonQuotaUnavailable  = "quota_unavailable" // the quota store is down: quotas fail closed
	ReasonConcurrency       = "concurrency"
	ReasonPolicy            = "policy"
	ReasonBusy              = "busy"
	ReasonDeclined          = "declined" // the user did not confirm the call
)

// MaxField is the longest string field recorded (arguments aside); a longer
// one is cut on a character boundary and ends in "…".
const MaxField = 1 << 10

// Entry is one tools/call. The zero value of a field leaves it out of the
// line, except where noted.
type Entry struct {
	// Time is when the call arrived; zero means when Record was called.
	Time time.Time
	// Replica names the replica; empty means Config.Replica.
	Replica string
	// Session is HashSession of the session id. Never put the id itself
	// here: it is the session's only credential.
	Session string
	// Subject is the authenticated principal ("principal").
	Subject string
	// Client is the client's identity: its address or subject.
	Client string
	// API names the API of the endpoint called, when the gateway serves
	// several (the apis list); empty for one.
	API string
	// Tool is the tool called; always written.
	Tool string
	// Arguments are the call's arguments as received. Record copies them:
	// the caller may reuse the buffer.
	Arguments json.RawMessage
	// BackendStatus is the REST backend's HTTP status; zero when no backend
	// call was made.
	BackendStatus int
	// Duration is the time to answer; always written.
	Duration time.Duration
	// Outcome is one of the Outcome* constants; always written.
	Outcome string
	// Reason says why a call was denied: one of the Reason* constants.
	Reason string
	// Detail qualifies Outcome or Reason: the missing scope, the quota.
	Detail string
	// Era is the request's protocol revision ("2025-11-25") or era name.
	Era string
}

// HashSession is how the audit log names a session: the first 16 hex
// digits of the SHA-256 of its id ("" for none). Callers fill
// Entry.Session with it.
func HashSession(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// line is an Entry as written: the field order is the line's.
type line struct {
	Time          string          `json:"time"`
	Replica       string          `json:"replica,omitempty"`
	Era           string          `json:"era,omitempty"`
	Session       string          `json:"session,omitempty"`
	Principal     string          `json:"principal,omitempty"`
	Client        string          `json:"client,omitempty"`
	API           string          `json:"api,omitempty"`
	Tool          string          `json:"tool"`
	Outcome       string          `json:"outcome"`
	Reason        string          `json:"reason,omitempty"`
	Detail        string          `json:"detail,omitempty"`
	BackendStatus int             `json:"backend_status,omitempty"`
	DurationMS    float64         `json:"duration_ms"`
	Arguments     json.RawMessage `json:"arguments,omitempty"`
}

// newLine makes the line for e, with args already redacted.
func newLine(e *Entry, args []byte) line {
	d := e.Duration
	if d < 0 {
		d = 0
	}
	return line{
		Time:          e.Time.UTC().Format(time.RFC3339Nano),
		Replica:       field(e.Replica),
		Era:           field(e.Era),
		Session:       field(e.Session),
		Principal:     field(e.Subject),
		Client:        field(e.Client),
		API:           field(e.API),
		Tool:          field(e.Tool),
		Outcome:       field(e.Outcome),
		Reason:        field(e.Reason),
		Detail:        field(e.Detail),
		BackendStatus: e.BackendStatus,
		DurationMS:    float64(d.Round(time.Microsecond)) / float64(time.Millisecond),
		Arguments:     args,
	}
}

// field cuts s to MaxField bytes.
func field(s string) string {
	if len(s) <= MaxField {
		return s
	}
	const ellipsis = "…"
	cut := MaxField - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
