package subscriptions

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors; callers branch on them with errors.Is.
var (
	// ErrUnavailable: the backing store cannot be reached. Outages wrap it.
	ErrUnavailable = errors.New("subscriptions: store unavailable")
	// ErrTooMany: the subscriber already holds Limits.MaxPerSubscriber live
	// subscriptions and asked for a new one.
	ErrTooMany = errors.New("subscriptions: too many subscriptions")
)

// Store keeps resource subscriptions and the per-URI change-detection state.
// A subscriber and a URI are opaque, non-empty strings of any bytes.
// Every subscription expires when ttl passes without Add or Refresh; a
// ttl is from 1ms to maxTTL. Every method is safe for concurrent use;
// an argument out of range is a plain error (neither sentinel), and an
// error of ctx is returned as it is.
type Store interface {
	// Add subscribes subscriber to uri for ttl (idempotent; re-adding
	// extends it, never shortens it). A subscriber holding
	// Limits.MaxPerSubscriber live URIs gets ErrTooMany for a new one.
	Add(ctx context.Context, subscriber, uri string, ttl time.Duration) error
	// Remove unsubscribes (no error when it was not subscribed).
	Remove(ctx context.Context, subscriber, uri string) error
	// RemoveAll drops every subscription of subscriber (its session ended).
	RemoveAll(ctx context.Context, subscriber string) error
	// Refresh extends every live subscription of subscriber to now+ttl
	// (one that lives longer already keeps its expiry). It revives none
	// that lapsed.
	Refresh(ctx context.Context, subscriber string, ttl time.Duration) error
	// Subscribers returns uri's live subscribers (sorted).
	Subscribers(ctx context.Context, uri string) ([]string, error)
	// Of returns subscriber's live URIs (sorted).
	Of(ctx context.Context, subscriber string) ([]string, error)
	// URIs returns every URI with at least one live subscriber (sorted).
	URIs(ctx context.Context) ([]string, error)
	// State returns uri's change-detection state (nil, nil when none);
	// SetState stores it for ttl, replacing what was there. The state is
	// independent of uri's subscriptions.
	State(ctx context.Context, uri string) ([]byte, error)
	SetState(ctx context.Context, uri string, state []byte, ttl time.Duration) error
}

// DefaultMaxPerSubscriber is the cap of Limits.MaxPerSubscriber's zero.
const DefaultMaxPerSubscriber = 1000

// Limits bound what one subscriber may hold.
type Limits struct {
	// MaxPerSubscriber is how many live URIs one subscriber may be
	// subscribed to. Zero (or less) means DefaultMaxPerSubscriber.
	MaxPerSubscriber int
}

func (l Limits) withDefaults() Limits {
	if l.MaxPerSubscriber <= 0 {
		l.MaxPerSubscriber = DefaultMaxPerSubscriber
	}
	return l
}

// maxTTL bounds a ttl: expiries are kept as µs since the epoch in Redis
// scores (float64), which must stay exact.
const maxTTL = 366 * 24 * time.Hour

var (
	errNoSubscriber = errors.New("subscriptions: empty subscriber")
	errNoURI        = errors.New("subscriptions: empty uri")
	errTTL          = errors.New("subscriptions: ttl out of range (1ms to 366 days)")
)

func checkSubscriber(subscriber string) error {
	if subscriber == "" {
		return errNoSubscriber
	}
	return nil
}

func checkURI(uri string) error {
	if uri == "" {
		return errNoURI
	}
	return nil
}

func checkTTL(ttl time.Duration) error {
	if ttl < time.Millisecond || ttl > maxTTL {
		return errTTL
	}
	return nil
}

// checkPair validates the arguments of Add and Remove.
func checkPair(subscriber, uri string) error {
	if err := checkSubscriber(subscriber); err != nil {
		return err
	}
	return checkURI(uri)
}
