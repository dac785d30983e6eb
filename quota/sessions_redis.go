package quota

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/mcp-gateway/internal/redisx"
)

// RedisSessionCounter is the SessionCounter shared by all replicas.
//
// Keys, sorted sets whose members are scored by their expiry (µs since the
// Unix epoch, on Redis's clock):
//
//	<prefix>{<client>}:sessions  the client's sessions; member = session id
//	<prefix>sessions             the deployment's; member = len(client) ":" client id
//
// <client> is escaped as a RedisGate's <tag> is. Use a prefix no other
// store shares. The two keys live in different Cluster slots, so Open takes two round
// trips, each one script: the first checks the client's cap and adds the
// session to the client's set, the second checks the total and adds it to
// the deployment's; if the second refuses, Open removes what the first
// added. Between the two steps, another Open may see the client holding
// one session more than it will; it may then refuse a session that would
// have fit, never admit one too many. Open is not on the hot path (it
// runs once per initialize). Each step first drops expired members
// (ZREMRANGEBYSCORE), so a set holds about the live sessions, and each key
// expires with its last member.
type RedisSessionCounter struct {
	client redis.UniversalClient
	prefix string
}

var _ SessionCounter = (*RedisSessionCounter)(nil)

// NewRedisSessionCounter returns a SessionCounter that keeps its sets in
// Redis under prefix. client may be a single-node, Sentinel-failover or
// Cluster client.
func NewRedisSessionCounter(client redis.UniversalClient, prefix string) *RedisSessionCounter {
	return &RedisSessionCounter{client: client, prefix: prefix}
}

// clientKey is the client's set, its hash tag escaped as RedisGate's are.
func (r *RedisSessionCounter) clientKey(client string) string {
	return r.prefix + redisx.HashTag(client) + ":sessions"
}

func (r *RedisSessionCounter) totalKey() string { return r.prefix + "sessions" }

// totalMember names a session in the deployment's set: ids are unique per
// client, not across clients. The length makes the pair unambiguous.
func totalMember(client, id string) string {
	return strconv.Itoa(len(client)) + ":" + client + id
}

// openScript is one step of Open.
//
//	KEYS[1]  a set of sessions
//	ARGV[1]  the member, ARGV[2] the cap (0: none), ARGV[3] ttl in µs
//
// It returns 0 when refused, 1 when added, 2 when the member was already
// counted (its expiry is renewed).
var openScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function fmt(n) return string.format('%.0f', n) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', fmt(now))
local res = 2
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  local cap = tonumber(ARGV[2])
  if cap > 0 and redis.call('ZCARD', KEYS[1]) >= cap then return 0 end
  res = 1
end
redis.call('ZADD', KEYS[1], fmt(now + tonumber(ARGV[3])), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], fmt(math.ceil((tonumber(last[2]) - now) / 1000)))
return res
`)

// refreshScript renews a member's expiry if it is counted.
//
//	KEYS[1]  a set of sessions
//	ARGV[1]  the member, ARGV[2] ttl in µs
var refreshScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function fmt(n) return string.format('%.0f', n) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', fmt(now))
if redis.call('ZADD', KEYS[1], 'XX', 'CH', fmt(now + tonumber(ARGV[2])), ARGV[1]) == 0 then return 0 end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], fmt(math.ceil((tonumber(last[2]) - now) / 1000)))
return 1
`)

const (
	openRefused = 0
	openAdded   = 1
)

// Open implements SessionCounter.
func (r *RedisSessionCounter) Open(ctx context.Context, client, id string, perClient, total int, ttl time.Duration) (bool, string, error) {
	if err := validateSession(perClient, total, ttl); err != nil {
		return false, "", err
	}
	us := ttl.Microseconds()
	ck := r.clientKey(client)
	step1, err := openScript.Run(ctx, r.client, []string{ck}, id, perClient, us).Int()
	if err != nil {
		return false, "", translate(err)
	}
	if step1 == openRefused {
		return false, ScopePerClient, nil
	}
	step2, err := openScript.Run(ctx, r.client, []string{r.totalKey()}, totalMember(client, id), total, us).Int()
	if err == nil && step2 != openRefused {
		return true, "", nil
	}
	if step1 == openAdded {
		// Best effort: if this fails too, the entry expires after ttl, and
		// the client counts one session more until then.
		_ = r.client.ZRem(ctx, ck, id).Err()
	}
	if err != nil {
		return false, "", translate(err)
	}
	return false, ScopeTotal, nil
}

// Refresh implements SessionCounter. It takes two round trips, one per set.
func (r *RedisSessionCounter) Refresh(ctx context.Context, client, id string, ttl time.Duration) error {
	if err := validateTTL(ttl); err != nil {
		return err
	}
	us := ttl.Microseconds()
	if err := refreshScript.Run(ctx, r.client, []string{r.clientKey(client)}, id, us).Err(); err != nil {
		return translate(err)
	}
	if err := refreshScript.Run(ctx, r.client, []string{r.totalKey()}, totalMember(client, id), us).Err(); err != nil {
		return translate(err)
	}
	return nil
}

// Close implements SessionCounter: one pipeline of two ZREMs (on a Cluster,
// one round trip to each node holding a key).
func (r *RedisSessionCounter) Close(ctx context.Context, client, id string) error {
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, r.clientKey(client), id)
		p.ZRem(ctx, r.totalKey(), totalMember(client, id))
		return nil
	})
	if err != nil {
		return translate(err)
	}
	return nil
}

// countScript counts the deployment's live sessions on Redis's clock.
//
//	KEYS[1]  the deployment's set
var countScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
return redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%.0f', now), '+inf')
`)

// Count is the number of live sessions in the deployment: one script
// (ZCOUNT of one key) per call, cheap enough to sample every few seconds.
func (r *RedisSessionCounter) Count(ctx context.Context) (int, error) {
	n, err := countScript.Run(ctx, r.client, []string{r.totalKey()}).Int()
	if err != nil {
		return 0, translate(err)
	}
	return n, nil
}
