// Package quota enforces rate limits: how often a principal may call a tool
// or the gateway as a whole.
//
// Limiter is the contract. Memory serves a single replica; Redis shares the
// limits between replicas, with one scripted round trip per decision. Both
// implement the same algorithm, GCRA (the generic cell rate algorithm),
// which behaves exactly like a token bucket of Burst tokens refilled at Rate
// per second, but keeps a single number per key: the theoretical arrival
// time (TAT), the instant at which the bucket would be full again. A key
// whose TAT has passed holds a full bucket and needs no state at all, so
// idle keys are dropped (Memory) or expire (Redis) without changing any
// decision.
//
// The package imports no sibling package; go-redis appears only in redis.go.
package quota
