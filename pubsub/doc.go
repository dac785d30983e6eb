// Package pubsub carries messages between gateway replicas: wake-up hints for
// push streams, directed messages to one replica, broadcasts to all.
//
// Delivery is at most once. Messages are hints: a subscriber that misses one
// recovers by re-reading the stores, so every message must be idempotent.
// Bus is the contract; Memory serves a single replica. The package imports no
// sibling package.
package pubsub
