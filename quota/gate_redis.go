package quota

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/mcp-gateway/internal/redisx"
)

// RedisGate is the Gate shared by all replicas. Each Admit that has
// anything to check is one EVALSHA of admitScript (EVAL when the server's
// script cache lacks it); each Release is one ZREM.
//
// Keys, all with the Admission's Tag as the Redis Cluster hash tag so that
// one script can touch them all:
//
//	<prefix>{<tag>}:rate:<key>   string: a bucket's TAT, µs since the Unix epoch
//	<prefix>{<tag>}:quota:<key>  hash: w = window number, n = calls counted in it
//	<prefix>{<tag>}:slot:<key>   sorted set: members holding the slot, scored by expiry (µs)
//
// <tag> is the Tag with '%' and '}' escaped as %25 and %7D, and the empty
// Tag written "%": so a Tag cannot end the hash tag early (which would let
// two Admissions' keys collide) nor leave it empty (which Redis ignores,
// putting the keys in different slots). Use a prefix no other store
// shares. Each key expires once it no longer matters: a bucket when it is
// full again, a count a moment after its window ends (quotaMargin), a slot
// when its last member expires.
//
// Time is Redis's (TIME in the script), for the reasons given on Redis.
type RedisGate struct {
	client redis.UniversalClient
	prefix string
}

var _ Gate = (*RedisGate)(nil)

// NewRedisGate returns a Gate that keeps its state in Redis under prefix.
// client may be a single-node, Sentinel-failover or Cluster client.
func NewRedisGate(client redis.UniversalClient, prefix string) *RedisGate {
	return &RedisGate{client: client, prefix: prefix}
}

// tagged is the start of every key under tag: prefix and hash tag.
func (g *RedisGate) tagged(tag string) string { return g.prefix + redisx.HashTag(tag) + ":" }

// admitScript decides a whole Admission. It is MemoryGate.Admit in Lua, in
// whole microseconds; the bucket step is allowScript's.
//
// It is not github.com/go-redis/redis_rate: that decides one bucket per
// call (AllowN on one key), so a call under several buckets would take a
// round trip each, or a pipeline that is not atomic, in which a denial by
// one bucket still spends the others' tokens. Here one script checks every
// part, then writes only if all admit.
//
//	KEYS     the slot's key if there is one, then each limited bucket's, then each quota's
//	ARGV[1]  1 if there is a slot, else 0
//	ARGV[2]  the number of buckets, ARGV[3] the number of quotas
//	then     for the slot: limit, TTL in µs, member
//	         for each bucket: emission interval T in µs, burst
//	         for each quota: limit, window in µs
//	         and last, quotaMargin in ms
//
// It returns {allowed (0|1), kind (1 slot, 2 bucket, 3 quota), index of the
// denying bucket or quota (from 0), retry after in µs, remaining (-1: not
// limited)}. Every quantity is an integer below 2^53, so Lua's doubles
// compute it exactly (the window number is corrected after its division),
// and numbers sent back to Redis are formatted with %.0f, since Lua's own
// conversion keeps 14 digits. A denial writes nothing but the removal of
// expired slot members, which were not held anyway.
var admitScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local has_slot, nb, nq = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local function fmt(n) return string.format('%.0f', n) end
local remaining = -1
local function least(n) if remaining < 0 or n < remaining then remaining = n end end
local k, a = 1, 4

local slot_key, slot_member, slot_ttl
if has_slot == 1 then
  slot_key, slot_ttl, slot_member = KEYS[1], tonumber(ARGV[5]), ARGV[6]
  local limit = tonumber(ARGV[4])
  k, a = 2, 7
  redis.call('ZREMRANGEBYSCORE', slot_key, '-inf', fmt(now))
  local held = redis.call('ZCARD', slot_key)
  if held >= limit then
    local first = redis.call('ZRANGE', slot_key, 0, 0, 'WITHSCORES')
    return {0, 1, 0, math.min(tonumber(first[2]) - now, 1000000), 0}
  end
  least(limit - held - 1)
end

local b0, tats = k, {}
for i = 1, nb do
  local interval = tonumber(ARGV[a])
  local tolerance = interval * tonumber(ARGV[a + 1])
  a = a + 2
  local tat = tonumber(redis.call('GET', KEYS[k]) or '')
  if tat == nil or tat < now then tat = now end
  local nxt = tat + interval
  local allow_at = nxt - tolerance
  if now < allow_at then
    return {0, 2, i - 1, allow_at - now, 0}
  end
  tats[i] = nxt
  least(math.floor((tolerance - (nxt - now)) / interval))
  k = k + 1
end

local q0, wins, counts, ends = k, {}, {}, {}
for i = 1, nq do
  local limit, window = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  a = a + 2
  local w = math.floor(now / window)
  if w * window > now then w = w - 1 elseif (w + 1) * window <= now then w = w + 1 end
  local cur = redis.call('HMGET', KEYS[k], 'w', 'n')
  local n = 0
  if tonumber(cur[1]) == w then n = tonumber(cur[2]) or 0 end
  local ends_at = (w + 1) * window
  if n >= limit then
    return {0, 3, i - 1, ends_at - now, 0}
  end
  wins[i], counts[i], ends[i] = w, n + 1, ends_at
  least(limit - n - 1)
  k = k + 1
end
local margin = tonumber(ARGV[a])

if has_slot == 1 then
  redis.call('ZADD', slot_key, fmt(now + slot_ttl), slot_member)
  local last = redis.call('ZRANGE', slot_key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', slot_key, fmt(math.ceil((tonumber(last[2]) - now) / 1000)))
end
for i = 1, nb do
  redis.call('SET', KEYS[b0 + i - 1], fmt(tats[i]), 'PX', fmt(math.ceil((tats[i] - now) / 1000)))
end
for i = 1, nq do
  local key = KEYS[q0 + i - 1]
  redis.call('HSET', key, 'w', fmt(wins[i]), 'n', fmt(counts[i]))
  redis.call('PEXPIRE', key, fmt(math.ceil((ends[i] - now) / 1000) + margin))
end
return {1, 0, 0, 0, remaining}
`)

// The kinds of admitScript's denials.
const (
	deniedBySlot   = 1
	deniedByBucket = 2
	deniedByQuota  = 3
)

// Admit implements Gate.
//
// A quota's count and its window number share one key, rather than a key
// per window: the window number comes from Redis's clock, known only inside
// the script, and a script must name every key it touches in KEYS (Redis
// Cluster routes the script by them; Redis's scripting rules ask it of all
// scripts).
func (g *RedisGate) Admit(ctx context.Context, req Admission) (Verdict, error) {
	if err := req.validate(); err != nil {
		return Verdict{}, err
	}
	if req.empty() {
		return admitted, nil
	}
	tagged := g.tagged(req.Tag)
	n := len(req.Buckets) + len(req.Quotas) + 1
	keys := make([]string, 0, n)
	args := make([]any, 3, 3+2*n+2)
	args[0], args[2] = 0, len(req.Quotas)
	if s := req.Slot; s != nil {
		keys = append(keys, tagged+"slot:"+s.Key)
		args[0] = 1
		args = append(args, s.Limit, s.TTL.Microseconds(), s.Member)
	}
	// Unlimited buckets are left out of the script; limited ones keep
	// their order, and buckets maps the script's index back to req's.
	var bucketBuf [4]int
	buckets := bucketBuf[:0]
	for i, b := range req.Buckets {
		if b.Limit.Unlimited() {
			continue
		}
		buckets = append(buckets, i)
		keys = append(keys, tagged+"rate:"+b.Key)
		args = append(args, b.Limit.interval().Microseconds(), b.Limit.Burst)
	}
	args[1] = len(buckets)
	for _, q := range req.Quotas {
		keys = append(keys, tagged+"quota:"+q.Key)
		args = append(args, q.Limit, q.Window.Microseconds())
	}
	args = append(args, quotaMargin.Milliseconds())

	res, err := admitScript.Run(ctx, g.client, keys, args...).Int64Slice()
	if err != nil {
		return Verdict{}, translate(err)
	}
	if len(res) != 5 {
		return Verdict{}, fmt.Errorf("quota: admit script returned %d values, want 5", len(res))
	}
	retry := time.Duration(res[3]) * time.Microsecond
	if res[0] == 1 {
		v := Verdict{Allowed: true, Remaining: int(res[4])}
		if res[4] < 0 {
			v.Remaining = math.MaxInt
		}
		return v, nil
	}
	switch i := int(res[2]); {
	case res[1] == deniedBySlot:
		return Verdict{Kind: KindConcurrency, RetryAfter: retry}, nil
	case res[1] == deniedByBucket && i < len(buckets):
		return Verdict{Kind: KindRateLimited, Scope: req.Buckets[buckets[i]].Scope, RetryAfter: retry}, nil
	case res[1] == deniedByQuota && i < len(req.Quotas):
		return Verdict{Kind: KindQuotaExceeded, Quota: req.Quotas[i].Name, RetryAfter: retry}, nil
	}
	return Verdict{}, fmt.Errorf("quota: admit script returned an unknown denial %v", res)
}

// Release implements Gate.
func (g *RedisGate) Release(ctx context.Context, tag string, slot Slot) error {
	if err := g.client.ZRem(ctx, g.tagged(tag)+"slot:"+slot.Key, slot.Member).Err(); err != nil {
		return translate(err)
	}
	return nil
}
