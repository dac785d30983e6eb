package lease

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Lease is a set of named leases. Every method is safe for concurrent use.
type Lease interface {
	// Acquire takes name for holder for ttl, or renews it when holder already holds it.
	// It reports whether holder holds the lease after the call. A lease held by another
	// holder is not taken before it expires. A renewal holds the lease for ttl from
	// now, whatever was left of the previous one.
	Acquire(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	// Release gives name up if holder holds it (no-op otherwise, no error).
	Release(ctx context.Context, name, holder string) error
	// Holder returns who holds name now ("" when nobody).
	Holder(ctx context.Context, name string) (string, error)
}

// ErrUnavailable: the backing store cannot be reached or cannot serve now.
// Errors of an outage wrap it; the caller's own cancellation does not.
var ErrUnavailable = errors.New("lease: store unavailable")

// minTTL is the shortest ttl: Redis expires keys in whole milliseconds.
const minTTL = time.Millisecond

// validateName reports a name no store can keep.
func validateName(name string) error {
	if name == "" {
		return errors.New("lease: empty name")
	}
	return nil
}

// validate reports an Acquire or Release that cannot mean anything: an
// empty holder would be indistinguishable from "nobody" in Holder.
func validate(name, holder string) error {
	if err := validateName(name); err != nil {
		return err
	}
	if holder == "" {
		return errors.New("lease: empty holder")
	}
	return nil
}

func validateTTL(ttl time.Duration) error {
	if ttl < minTTL {
		return fmt.Errorf("lease: ttl %v is shorter than %v", ttl, minTTL)
	}
	return nil
}
