package quota

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Sentinel errors. Implementations wrap them with %w; branch with errors.Is.
var (
	// ErrUnavailable: the backing store cannot be reached or cannot serve
	// now. Whether to fail open or closed is the caller's choice.
	ErrUnavailable = errors.New("quota: store unavailable")
	// ErrInvalidLimit: a Limit that is neither unlimited nor a positive
	// rate with a burst of at least one; likewise a Quota, Slot or session
	// cap out of its documented range, or a key an Admission names twice.
	ErrInvalidLimit = errors.New("quota: invalid limit")
)

// Limiter decides whether one more request under key fits its limit.
// Every method is safe for concurrent use.
type Limiter interface {
	// Allow takes one token from key's bucket if there is one. A denial is
	// not an error: it is a Decision with Allowed false. The zero Limit is
	// unlimited and is allowed without consulting any store.
	Allow(ctx context.Context, key string, limit Limit) (Decision, error)
}

// Limit is a token bucket: it holds up to Burst tokens and refills at Rate
// tokens per second. The zero Limit means unlimited.
type Limit struct {
	// Rate is the refill rate in tokens per second; it must be positive and
	// finite unless the whole Limit is zero.
	Rate float64
	// Burst is the bucket's capacity: how many requests may pass at once
	// after a quiet spell. It must be at least 1 unless the whole Limit is
	// zero.
	Burst int
}

// Unlimited reports whether l is the zero Limit.
func (l Limit) Unlimited() bool { return l == Limit{} }

// maxWindow bounds Burst/Rate, the time an empty bucket takes to refill, so
// that time arithmetic in nanoseconds cannot overflow.
const maxWindow = 100 * 365 * 24 * time.Hour

// validate reports a Limit that no bucket can implement.
func (l Limit) validate() error {
	switch {
	case l.Unlimited():
		return nil
	case !(l.Rate > 0) || math.IsInf(l.Rate, 1):
		return fmt.Errorf("%w: rate %v is not a positive number", ErrInvalidLimit, l.Rate)
	case l.Burst < 1:
		return fmt.Errorf("%w: burst %d is less than 1", ErrInvalidLimit, l.Burst)
	case float64(l.Burst)/l.Rate > maxWindow.Seconds():
		return fmt.Errorf("%w: %d tokens at %v per second take longer than %v to refill", ErrInvalidLimit, l.Burst, l.Rate, maxWindow)
	}
	return nil
}

// interval is the time one token takes to refill, GCRA's emission
// interval, in whole microseconds and at least one. Whole microseconds keep
// the Redis script's arithmetic exact in Lua's doubles, and both
// implementations use this one definition so that they decide alike. So
// rates above a million per second count as a million per second.
func (l Limit) interval() time.Duration {
	us := math.Round(1e6 / l.Rate)
	return time.Duration(max(us, 1)) * time.Microsecond
}

// Decision is the outcome of one Allow.
type Decision struct {
	// Allowed says whether the request may proceed; it took a token.
	Allowed bool
	// Remaining is how many more requests would be allowed right now.
	// For an unlimited Limit it is math.MaxInt.
	Remaining int
	// RetryAfter is, on a denial, how long until a token is available; a
	// request made after waiting it is allowed unless others took the token
	// first. It is zero when Allowed.
	RetryAfter time.Duration
}

// unlimited is the Decision for the zero Limit.
var unlimited = Decision{Allowed: true, Remaining: math.MaxInt}
