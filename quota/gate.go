package quota

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Gate decides all the limits of one call at once: its rate buckets, its
// quotas and its concurrency slot. Every method is safe for concurrent use.
type Gate interface {
	// Admit checks every bucket, quota and concurrency slot of req
	// atomically: if all admit, it takes one token from each bucket, counts
	// one against each quota and takes the slot; if any denies, it changes
	// nothing and reports the first denial (in the order: concurrency,
	// buckets in the given order, quotas) with its retry-after. A denial is
	// not an error. An Admission with nothing to check (no slot, no quota,
	// only unlimited buckets) is admitted without consulting any store.
	Admit(ctx context.Context, req Admission) (Verdict, error)
	// Release frees a concurrency slot taken by Admit under tag (the
	// Admission's Tag); call it after the call ends. Releasing a slot that
	// is not held (never taken, already released or expired) does nothing.
	Release(ctx context.Context, tag string, slot Slot) error
}

// Admission is everything one call is counted against.
type Admission struct {
	// Tag scopes every key of the Admission, typically to the client
	// identity: Buckets, Quotas and Slot keys under one Tag are apart from
	// the same keys under another. In Redis it is the Cluster hash tag of
	// all the Admission's keys, so they share a slot and one script decides
	// them. Any string will do, the empty one too.
	Tag string
	// Buckets are rate limits, checked in order; a zero Limit is unlimited
	// and skipped. A Key may appear once.
	Buckets []Bucket
	// Quotas are counts per fixed window. A Key may appear once.
	Quotas []Quota
	// Slot, when set, bounds the calls running at once.
	Slot *Slot
}

// Bucket is a rate limit within an Admission. It runs the same GCRA as
// Limiter.Allow, with the same Limit semantics, so a Limit decides alike in
// both; the two keep their buckets apart (a Gate's are under the
// Admission's Tag).
type Bucket struct {
	// Key names the bucket within the Admission's Tag.
	Key string
	// Limit is the bucket's rate and burst; the zero Limit is unlimited.
	Limit Limit
	// Scope is the caller's label for this bucket (such as "per_tool"),
	// returned in the Verdict when this bucket denies.
	Scope string
}

// Quota allows Limit calls per fixed window of length Window. Windows are
// aligned to the Unix epoch in UTC: window number floor(now / Window), so a
// 24h window resets at 00:00 UTC and a 1h window on the hour. A count is
// kept until its window ends (and a moment longer, see quotaMargin).
type Quota struct {
	// Key names the count within the Admission's Tag.
	Key string
	// Name is the caller's label for this quota, returned in the Verdict
	// when this quota denies.
	Name string
	// Limit is how many calls a window admits: at least 1, at most 2^53
	// (Redis's Lua counts in doubles).
	Limit int64
	// Window is the length of a window: at least a microsecond (it is
	// counted in whole microseconds) and at most 100 years.
	Window time.Duration
}

// Slot bounds concurrency: at most Limit members hold Key at once. A member
// is held from an admitting Admit until Release, or until TTL has passed
// (so that calls of a crashed replica free themselves); make TTL longer
// than the longest call.
type Slot struct {
	// Key names the slot within the Admission's Tag.
	Key string
	// Member identifies one call, uniquely: admitting a member already
	// held renews its expiry and takes no second place, but it needs a free
	// place like any other.
	Member string
	// Limit is how many members may hold the slot at once: at least 1, at
	// most 2^53.
	Limit int
	// TTL is how long a member holds the slot unless released: at least a
	// microsecond, at most 100 years.
	TTL time.Duration
}

// Verdict kinds: which part of an Admission denied it.
const (
	KindRateLimited   = "rate_limited"   // a Bucket is empty
	KindQuotaExceeded = "quota_exceeded" // a Quota is used up for this window
	KindConcurrency   = "concurrency"    // the Slot is full
)

// Verdict is the outcome of one Admit.
type Verdict struct {
	// Allowed says whether the call may proceed; it then took a token from
	// each bucket, counted against each quota and holds the slot.
	Allowed bool
	// Kind is, on a denial, which part denied: KindRateLimited,
	// KindQuotaExceeded or KindConcurrency. Empty when Allowed.
	Kind string
	// Scope is the denying Bucket's Scope (KindRateLimited only).
	Scope string
	// Quota is the denying Quota's Name (KindQuotaExceeded only).
	Quota string
	// RetryAfter is, on a denial, how long to wait: until a token is back
	// (a bucket), until the window ends (a quota), or until the earliest
	// member's expiry but at most slotRetryCap (a slot: calls usually end
	// long before their TTL, so retry soon). Zero when Allowed.
	RetryAfter time.Duration
	// Remaining is, when Allowed, how many more calls like this one would
	// be admitted right now: the least over its buckets' tokens, its
	// quotas' counts left and the slot's free places; math.MaxInt when
	// nothing limits it. Zero on a denial.
	Remaining int
}

const (
	// slotRetryCap bounds the RetryAfter of a full slot.
	slotRetryCap = time.Second
	// quotaMargin is how long a quota's count outlives its window. No
	// decision reads a past window's count (the window number differs);
	// the margin keeps the count through a failover to a Redis whose clock
	// runs a little behind.
	quotaMargin = time.Second
	// maxCount bounds quota and slot limits: the Redis script's doubles
	// hold every integer up to it exactly.
	maxCount = 1 << 53
)

// admitted is the Verdict of an Admission with nothing to check.
var admitted = Verdict{Allowed: true, Remaining: math.MaxInt}

// validate reports an Admission that no store can implement: an invalid
// bucket Limit, quota or slot, or a key given twice (Admit takes one token,
// or counts one, per key).
func (req *Admission) validate() error {
	for i, b := range req.Buckets {
		if err := b.Limit.validate(); err != nil {
			return fmt.Errorf("%w (bucket %q)", err, b.Key)
		}
		for _, o := range req.Buckets[:i] {
			if o.Key == b.Key {
				return fmt.Errorf("%w: bucket %q appears twice", ErrInvalidLimit, b.Key)
			}
		}
	}
	for i, q := range req.Quotas {
		switch {
		case q.Limit < 1 || q.Limit > maxCount:
			return fmt.Errorf("%w: quota %q: limit %d is not between 1 and 2^53", ErrInvalidLimit, q.Key, q.Limit)
		case q.Window < time.Microsecond || q.Window > maxWindow:
			return fmt.Errorf("%w: quota %q: window %v is not between 1µs and %v", ErrInvalidLimit, q.Key, q.Window, maxWindow)
		}
		for _, o := range req.Quotas[:i] {
			if o.Key == q.Key {
				return fmt.Errorf("%w: quota %q appears twice", ErrInvalidLimit, q.Key)
			}
		}
	}
	if s := req.Slot; s != nil {
		switch {
		case s.Limit < 1 || int64(s.Limit) > maxCount:
			return fmt.Errorf("%w: slot %q: limit %d is not between 1 and 2^53", ErrInvalidLimit, s.Key, s.Limit)
		case s.TTL < time.Microsecond || s.TTL > maxWindow:
			return fmt.Errorf("%w: slot %q: TTL %v is not between 1µs and %v", ErrInvalidLimit, s.Key, s.TTL, maxWindow)
		}
	}
	return nil
}

// empty reports whether req checks nothing: no slot, no quota and only
// unlimited buckets.
func (req *Admission) empty() bool {
	if req.Slot != nil || len(req.Quotas) > 0 {
		return false
	}
	for _, b := range req.Buckets {
		if !b.Limit.Unlimited() {
			return false
		}
	}
	return true
}

// quotaWindow returns the number of the window holding now and the end of
// that window, both for a window of length window; all in microseconds
// since the Unix epoch. now is not negative (clocks are past 1970).
func quotaWindow(nowMicros, windowMicros int64) (index, end int64) {
	index = nowMicros / windowMicros
	return index, (index + 1) * windowMicros
}
