// Package subscriptions keeps the MCP resource subscriptions
// (resources/subscribe) of every replica's clients in a store all replicas
// share, so that a subscription survives its client reconnecting to
// another replica, together with the per-URI change-detection state of
// whichever replica polls the URI.
//
// A subscriber is an opaque string (the gateway uses "s:"+session id for a
// session and "l:"+replica id+":"+n for a stateless listen stream); a URI
// is any non-empty string. Every subscription expires when its ttl passes
// without Add or Refresh, so the subscriptions of a crashed replica's
// clients free themselves. Store is the contract; Memory is the in-process
// single-replica implementation, Redis the shared one; one contract suite
// runs against Memory, a Redis server and a Redis Cluster.
//
// # Redis layout
//
// Sorted sets scored by expiry, in µs since the Unix epoch on the clock
// of the Redis server holding the key (TIME inside the scripts, as
// quota.RedisSessionCounter does), and a string:
//
//	<prefix>u:{<uri>}         the URI's subscribers: member = subscriber
//	<prefix>s:{<subscriber>}  the subscriber's URIs: member = uri
//	<prefix>uris              every subscribed URI: member = uri, score = the latest
//	                          expiry any of its subscriptions was given, and a second more
//	<prefix>st:{<uri>}        the URI's change-detection state (PX = its ttl)
//
// Braces hold a Redis Cluster hash tag: <uri> and <subscriber> with '%'
// and '}' escaped as %25 and %7D (as quota.RedisGate escapes its tags), so
// that a tag cannot end early and distinct strings stay apart. Every
// script that adds sets its key to expire with its last member (PEXPIRE to
// the highest score; a ZREM leaves that as it was), so no key outlives
// the latest expiry it was given; every script and reader first drops the
// expired members of the key it touches, and a member counts only while
// its score is after now.
//
// A subscription is its member in u:{uri}: Subscribers reads only that.
// The other sets are indexes, which may hold more than the subscriptions
// (a stale entry, left by a step that failed or raced) but not less:
//
//   - uris holds every URI whose set has a live member, with a score at
//     least that member's expiry. URIs confirms each candidate against
//     u:{uri}, so an entry that outlives its subscriptions (Remove does not
//     lower uris) is never reported; it lapses by its score.
//   - s:{subscriber} holds every URI whose set holds the subscriber, with
//     an expiry at least as late. Refresh, RemoveAll and the cap read it;
//     Of confirms each candidate against u:{uri}, and Refresh extends only
//     the entries u:{uri} still holds, so a stale entry lapses too.
//
// Keys in different Cluster slots cannot share a script, so each write is
// a small script (or command) on one key, or a pipeline of such, which
// go-redis sends to each node holding a key in parallel. Round trips per
// method, a pipeline counting as one:
//
//	Add          4: s:{sub} (drop expired, check the cap, add); uris; u:{uri};
//	             s:{sub} again. 1 when refused at the cap.
//	Refresh      4: s:{sub}'s live URIs; uris; a pipeline extending the
//	             subscriber in each u:{uri} that still holds it; s:{sub} for
//	             those. 1 when the subscriber holds nothing.
//	Remove       2: ZREM from s:{sub}, then from u:{uri}
//	RemoveAll    2: s:{sub} read and deleted in one script; a pipeline of
//	             ZREMs from each u:{uri}
//	Subscribers  1
//	Of, URIs     2: the index; a pipeline confirming each candidate in u:{uri}
//	State        1 (GET); SetState 1 (SET PX)
//
// The order of the steps keeps the indexes whole. Add and Refresh write
// uris before u:{uri}, so a step that fails (an outage, a crashed replica)
// leaves at worst a stale index entry, never a live subscription that
// URIs misses; they return the error and may be retried. The second
// added to scores in uris covers the time between the uris step and the
// u:{uri} step; when the two took longer, the last step writes uris
// again. Add's second s:{sub} step, after u:{uri}, makes the expiry there
// at least the subscription's (each step reads its own clock) and keeps
// s:{sub} whole when a Remove of the same subscription runs between the
// steps: whichever writes u:{uri} last wins, and s:{sub} follows, so the
// views agree whatever the interleaving. For the same reason Remove and
// RemoveAll clear s:{sub} before u:{uri}; one cut short between the two
// leaves the subscription in Subscribers and URIs, no longer refreshed,
// until it lapses at its expiry: as if the call had not run, except that
// Of no longer lists it. The cap counts stale s:{sub} entries until they
// lapse.
//
// A script that runs after SCRIPT FLUSH or a restart falls back to EVAL
// (one round trip more).
//
// The package imports only internal/redisx (which go-redis errors are
// outages); go-redis appears only in
// redis.go.
package subscriptions
