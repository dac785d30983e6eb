package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Sentinel errors. Implementations translate their own errors into these at
// the boundary so that callers can branch with errors.Is.
var (
	// ErrNotFound: the session does not exist, ended, or expired.
	ErrNotFound = errors.New("sessions: not found")
	// ErrExists: Create was called with an id already in use.
	ErrExists = errors.New("sessions: already exists")
	// ErrEventGone: a Last-Event-ID names an event older than the retained log.
	ErrEventGone = errors.New("sessions: event no longer retained")
	// ErrBadEventID: a Last-Event-ID that this store never produced.
	ErrBadEventID = errors.New("sessions: malformed event id")
	// ErrUnavailable: the backing store cannot be reached.
	ErrUnavailable = errors.New("sessions: store unavailable")
)

// Session is one session-era client's record.
type Session struct {
	ID              string          `json:"id"`
	ProtocolVersion string          `json:"v"`
	ClientInfo      json.RawMessage `json:"ci,omitempty"`
	Capabilities    json.RawMessage `json:"cc,omitempty"`
	// Principal is the subject of the principal that opened the session
	// (empty for an anonymous one); only that principal may use it.
	Principal string `json:"p,omitempty"`
	// Client is the caller identity the session counts against for the
	// per-client session cap (mcp.Request.Identity).
	Client string `json:"cl,omitempty"`
	// LogLevel is the level set by logging/setLevel; empty means not set.
	LogLevel    string `json:"ll,omitempty"`
	Initialized bool   `json:"in,omitempty"`
	// Transport is TransportSSE for a session of the 2024-11-05 HTTP+SSE
	// transport (its stream is opened before initialize, so
	// ProtocolVersion is empty until then); empty for Streamable HTTP.
	Transport string `json:"tr,omitempty"`
	// Stream names the 2024-11-05 event stream that owns the session (a
	// random token); empty while no stream does.
	Stream string `json:"st,omitempty"`
	// Push says which of the session's GET streams (Streamable HTTP)
	// carries its push-stream log: each event goes on one stream only.
	Push PushStreams `json:"ps,omitzero"`
	// Surface is what the session's initialize chose to be served (its
	// headers and path); nil means the operator's choice.
	Surface *Surface `json:"sf,omitempty"`
	// Toolsets are the toolsets the session enabled (enable_toolset).
	Toolsets  []string  `json:"ts,omitempty"`
	CreatedAt time.Time `json:"ca"`
	// LastSeen is refreshed lazily (see Store.Touch); with the TTL it decides expiry.
	LastSeen time.Time `json:"ls"`
}

// PushStreams are a session's open GET streams, which share one delivery of
// its push-stream log: only Owner sends the log's events. A stream that
// gives its place up records where delivery stopped (Cursor) for the one
// that takes over. The gateway owns the rules; the store only keeps them.
type PushStreams struct {
	// Open lists the streams in the order they opened, oldest first.
	Open []StreamLease `json:"o,omitempty"`
	// Owner is the token of the stream that delivers; empty when none does.
	Owner string `json:"w,omitempty"`
	// Cursor is the id of the last event the owner reported delivered
	// ("" for the start of the log).
	Cursor string `json:"c,omitempty"`
}

// StreamLease is one open stream's registration: it lapses at Until
// unless renewed, so a stream whose replica died stops counting.
type StreamLease struct {
	Token string    `json:"t"`
	Until time.Time `json:"u"`
}

// clone returns a copy that shares no mutable memory with s.
func (s *Session) clone() *Session {
	cp := *s
	cp.Push.Open = append([]StreamLease(nil), s.Push.Open...)
	cp.Toolsets = append([]string(nil), s.Toolsets...)
	if s.Surface != nil {
		sf := *s.Surface
		sf.Toolsets = append([]string(nil), s.Surface.Toolsets...)
		cp.Surface = &sf
	}
	return &cp
}

// Surface is the part of the served tools a session chose (the gateway
// owns its meaning: gateway/mcp.Surface).
type Surface struct {
	// Toolsets names the toolsets chosen; nil (and, as stored, empty)
	// means all: the gateway never stores an empty choice.
	Toolsets   []string `json:"t,omitempty"`
	ReadOnly   bool     `json:"r,omitempty"`
	ToolMode   string   `json:"m,omitempty"`
	SchemaRefs string   `json:"d,omitempty"`
}

// TransportSSE marks a session of the 2024-11-05 HTTP+SSE transport.
const TransportSSE = "sse"

// Event is one message on a session's push stream.
type Event struct {
	// ID is the SSE event id: unique within the session and ordered.
	ID   string
	Data []byte
}

// Store keeps session records and their push-stream event logs.
// Every method is safe for concurrent use.
type Store interface {
	// Create stores a new session. The session expires when it has not been
	// touched for the store's TTL.
	Create(ctx context.Context, s *Session) error
	// Get returns a copy of the session, or ErrNotFound.
	Get(ctx context.Context, id string) (*Session, error)
	// Update applies fn to the stored session atomically and stores the result.
	Update(ctx context.Context, id string, fn func(*Session) error) (*Session, error)
	// Touch marks the session as used at now, extending its life by the TTL.
	Touch(ctx context.Context, id string, now time.Time) error
	// Delete ends the session and drops its event log. Deleting an unknown
	// session returns ErrNotFound.
	Delete(ctx context.Context, id string) error

	// Append adds a message to the session's push-stream log and returns its
	// event id. The log is bounded; the oldest events fall off.
	Append(ctx context.Context, id string, data []byte) (string, error)
	// ReadAfter returns up to max events after the event id after (all retained
	// events when after is empty), oldest first. An after older than the log
	// returns ErrEventGone.
	ReadAfter(ctx context.Context, id string, after string, max int) ([]Event, error)
	// LastEventID returns the id of the newest event, or "" for an empty log.
	LastEventID(ctx context.Context, id string) (string, error)

	// Ping reports whether the store is reachable.
	Ping(ctx context.Context) error
}

// Sweeper is a store that drops expired sessions only when asked (an
// in-process store has no expiry of its own); the gateway's Run calls Sweep
// periodically. Stores that expire entries themselves (Redis) do not
// implement it.
type Sweeper interface {
	// Sweep drops expired sessions and returns how many it dropped.
	Sweep() int
}
