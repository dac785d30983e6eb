// Package quota enforces how much principals may use the gateway: rate
// limits, quotas and concurrency for calls, and caps on open sessions.
//
// Three contracts, each with a Memory implementation for a single replica
// and a Redis one shared by all replicas, and a contract suite that runs on
// Memory, Redis and a Redis Cluster:
//
//   - Limiter decides one rate limit per call (Memory, Redis).
//   - Gate decides all the limits of one call at once, atomically: its rate
//     buckets, its fixed-window quotas and its concurrency slot, either all
//     taken or none (MemoryGate, RedisGate). In Redis that is one scripted
//     round trip, with every key of the call in one Cluster slot.
//   - SessionCounter caps the sessions open per client and in the whole
//     deployment (MemorySessionCounter, RedisSessionCounter).
//
// Rate limits use GCRA (the generic cell rate algorithm), which behaves
// exactly like a token bucket of Burst tokens refilled at Rate per second,
// but keeps a single number per key: the theoretical arrival time (TAT),
// the instant at which the bucket would be full again. A key whose TAT has
// passed holds a full bucket and needs no state at all, so idle keys are
// dropped (Memory) or expire (Redis) without changing any decision. Quotas
// count calls per window aligned to the Unix epoch in UTC; slots and
// sessions are sets of members that expire unless released or refreshed,
// so that a crashed replica's calls and sessions free themselves. The Redis
// implementations read the time from Redis, so replicas whose clocks
// disagree still decide alike.
//
// The package imports only internal/redisx (which go-redis errors are
// outages); go-redis appears only in the
// files named *redis.go.
package quota
