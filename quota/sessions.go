package quota

import (
	"context"
	"fmt"
	"time"
)

// SessionCounter caps the sessions open at once, per client and for the
// whole deployment. A session counts from an admitting Open until Close,
// or until it has not been refreshed for its ttl (so that sessions nobody
// ends, and those of a crashed replica, stop counting). Every method is
// safe for concurrent use.
type SessionCounter interface {
	// Open counts session id for client if the client holds fewer than
	// perClient live sessions and the deployment fewer than total (0 means
	// no cap for that one). When it refuses, ok is false and scope says
	// which cap: ScopePerClient (checked first) or ScopeTotal; a refusal
	// is not an error and counts nothing. Opening a session that is
	// already counted renews its ttl and is admitted whatever the caps.
	// Session ids must be unique per client.
	Open(ctx context.Context, client, id string, perClient, total int, ttl time.Duration) (ok bool, scope string, err error)
	// Refresh keeps a counted session counted for ttl from now. A session
	// no longer counted (closed, or expired) is left uncounted: only Open
	// checks the caps.
	Refresh(ctx context.Context, client, id string, ttl time.Duration) error
	// Close stops counting a session; closing one not counted does
	// nothing.
	Close(ctx context.Context, client, id string) error
}

// The scopes of Open's refusals.
const (
	ScopePerClient = "per_client" // the client holds perClient sessions
	ScopeTotal     = "total"      // the deployment holds total sessions
)

// validateSession reports caps and a ttl that no counter can implement.
func validateSession(perClient, total int, ttl time.Duration) error {
	if perClient < 0 || total < 0 {
		return fmt.Errorf("%w: session caps %d per client, %d in total: a cap is 0 (none) or positive", ErrInvalidLimit, perClient, total)
	}
	return validateTTL(ttl)
}

func validateTTL(ttl time.Duration) error {
	if ttl < time.Microsecond || ttl > maxWindow {
		return fmt.Errorf("%w: session ttl %v is not between 1µs and %v", ErrInvalidLimit, ttl, maxWindow)
	}
	return nil
}
