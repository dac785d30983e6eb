// Package lease elects, per name, the one replica that does a job no two
// replicas may do at once: poll a resource URI for changes, re-fetch the
// OpenAPI document.
//
// A replica calls Acquire with its own holder id (its replica id) at least
// once per ttl, say every ttl/3, and does the job while Acquire reports
// true. A holder that stops renewing (it crashed, or lost Redis) loses the
// lease ttl after its last renewal, and the next replica to try takes it;
// replicas that try at least once per ttl thus take over within twice the
// ttl. A holder that shuts down calls Release, and the next try takes it at
// once. A lease is advisory: a holder stalled for longer than its ttl may
// still be acting when another takes over, so jobs must tolerate a short
// overlap (the messages they publish are hints, and idempotent). A holder
// whose Acquire fails cannot know whether it still holds the lease and
// should stop until a renewal succeeds.
//
// Lease is the contract. Memory serves a single replica. Redis is shared
// by all replicas: one string key per lease,
//
//	<prefix>l:{<name>}  value = the holder, PX = the ttl
//
// the name in a hash tag so that Redis Cluster is fine. Expiry is Redis's
// own (PX), so replicas with skewed clocks agree on who holds a lease.
// Errors of an unreachable store wrap ErrUnavailable.
//
// The package imports only internal/redisx (which go-redis errors are
// outages); go-redis appears only in
// redis.go.
package lease
