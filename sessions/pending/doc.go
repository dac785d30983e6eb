// Package pending keeps what the replicas must agree on about requests
// the gateway sends a client and answers it expects back: which replica
// waits for the answer to each server→client request of a session
// (Record), the single-use marks that make a token good once (Consume),
// and the deployment's shared secrets, such as the key that seals MRTR
// requestState (SharedKey).
//
// An answer may reach any replica; that replica looks the request up
// (Get), claims it (Remove reports true to one caller only) and hands the
// answer to the replica named in the record. A record lives until its
// deadline, when the waiting call gives up; Add caps how many live
// records a session holds, so a client that never answers cannot make
// the store grow. Store is the contract; Memory is the in-process
// single-replica implementation, Redis the shared one; one contract suite
// runs against Memory, a Redis server and a Redis Cluster.
//
// # Redis layout
//
//	<prefix>r:{<session>}  hash: field = id, value = "<deadline ms>:<replica>";
//	                       expires a minute after its latest deadline
//	<prefix>c:{<token>}    a used mark, "1", PX = Consume's ttl
//	<prefix>k:{<name>}     a shared secret, no expiry
//
// Braces hold a Redis Cluster hash tag (internal/redisx.HashTag escapes
// '%' and '}'), so every call touches one key and its script runs on the
// node of that key. Deadlines are the replicas' wall clocks, to the
// millisecond: each call passes its own now, and Redis's clock only ends
// the hash, a minute of slack after the latest deadline, which a record
// outlives only when clocks disagree by more. Add drops a session's
// expired fields; readers skip them.
//
// Round trips, each one command or one script (a script that runs after
// SCRIPT FLUSH or a restart falls back to EVAL, one round trip more):
//
//	Add            1 script: drop the expired, check the cap, HSET, PEXPIRE
//	Get            1 HGET
//	Remove         1 script: HGET and HDEL, so it reports only a live record
//	RemoveSession  1 script: HGETALL and DEL
//	Consume        1 SET NX PX
//	SharedKey      1 script: GET, or SET when absent
//
// A shared secret lives as long as the Redis data does: a server that
// restarts without persistence loses it, the next SharedKey stores a new
// one, and what the old one sealed no longer opens. Anyone who can read
// the keys can read the secret.
//
// The package imports only internal/redisx (which go-redis errors are
// outages); go-redis appears only in redis.go.
package pending
