package pending

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors; callers branch on them with errors.Is.
var (
	// ErrNotFound: no live record of that (session, id): none was added,
	// it was removed, or its deadline passed.
	ErrNotFound = errors.New("pending: no such request")
	// ErrFull: the session already holds as many live records as Add's max.
	ErrFull = errors.New("pending: too many pending requests")
	// ErrUnavailable: the backing store cannot be reached or cannot serve
	// now. Outages wrap it; the caller's own cancellation does not.
	ErrUnavailable = errors.New("pending: store unavailable")
)

// Record is one server→client request a replica waits on.
type Record struct {
	Session string
	// ID is the JSON-RPC id the gateway gave the request, in its
	// canonical text form.
	ID string
	// Replica is the replica whose call waits for the answer.
	Replica string
	// Deadline is when the waiting call gives up; the record is live
	// before it. Stores keep it to the millisecond (rounded down) on the
	// wall clock.
	Deadline time.Time
}

// Store keeps pending requests, single-use marks and the deployment's
// shared secrets. Sessions, ids, replicas, tokens and names are opaque,
// non-empty strings of any bytes. Every method is safe for concurrent
// use; an argument out of range is a plain error (no sentinel), and an
// error of ctx is returned as it is.
type Store interface {
	// Add records a pending request, replacing the session's record of the
	// same id. Its deadline must be after now and at most 366 days later.
	// ErrFull when the session already holds max other live records;
	// max <= 0: no cap.
	Add(ctx context.Context, rec Record, max int) error
	// Get returns the live record of (session, id); ErrNotFound when there
	// is none or its deadline passed.
	Get(ctx context.Context, session, id string) (Record, error)
	// Remove deletes the record of (session, id) and reports whether a
	// live one was there; absent is not an error.
	Remove(ctx context.Context, session, id string) (bool, error)
	// RemoveSession deletes every record of session and returns the live
	// ones, sorted by ID.
	RemoveSession(ctx context.Context, session string) ([]Record, error)
	// Consume marks token as used for ttl (at least 1ms, rounded up to
	// whole milliseconds). first is false when it already was: a replay.
	Consume(ctx context.Context, token string, ttl time.Duration) (first bool, err error)
	// SharedKey returns the deployment's secret under name: the stored
	// one, or candidate, stored now, when none was. The first writer wins
	// atomically, and the secret never expires.
	SharedKey(ctx context.Context, name string, candidate []byte) ([]byte, error)
}

// maxAhead bounds how far ahead a deadline may be: deadlines travel as
// milliseconds through Lua numbers (float64), which must stay exact.
const maxAhead = 366 * 24 * time.Hour

var (
	errNoSession   = errors.New("pending: empty session")
	errNoID        = errors.New("pending: empty id")
	errNoReplica   = errors.New("pending: empty replica")
	errDeadline    = errors.New("pending: deadline not after now or more than 366 days ahead")
	errNoToken     = errors.New("pending: empty token")
	errTTL         = errors.New("pending: ttl shorter than 1ms")
	errNoName      = errors.New("pending: empty key name")
	errNoCandidate = errors.New("pending: empty candidate key")
)

func checkSession(session string) error {
	if session == "" {
		return errNoSession
	}
	return nil
}

func checkKey(session, id string) error {
	if err := checkSession(session); err != nil {
		return err
	}
	if id == "" {
		return errNoID
	}
	return nil
}

// checkRecord validates Add's record against now and returns it with
// its deadline kept to the millisecond.
func checkRecord(rec Record, now time.Time) (Record, error) {
	if err := checkKey(rec.Session, rec.ID); err != nil {
		return Record{}, err
	}
	if rec.Replica == "" {
		return Record{}, errNoReplica
	}
	rec.Deadline = time.UnixMilli(rec.Deadline.UnixMilli())
	if !rec.Deadline.After(now) || rec.Deadline.Sub(now) > maxAhead {
		return Record{}, errDeadline
	}
	return rec, nil
}

// checkConsume validates Consume's arguments and returns ttl rounded up
// to whole milliseconds, so that a mark never lapses early.
func checkConsume(token string, ttl time.Duration) (time.Duration, error) {
	if token == "" {
		return 0, errNoToken
	}
	if ttl < time.Millisecond {
		return 0, errTTL
	}
	if r := ttl % time.Millisecond; r != 0 {
		ttl += time.Millisecond - r
	}
	return ttl, nil
}

func checkShared(name string, candidate []byte) error {
	if name == "" {
		return errNoName
	}
	if len(candidate) == 0 {
		return errNoCandidate
	}
	return nil
}
