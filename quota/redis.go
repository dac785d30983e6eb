package quota

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/mcp-gateway/internal/redisx"
)

// Redis is the Limiter shared by all replicas. Each Allow is one EVALSHA of
// allowScript (EVAL when the server's script cache lacks it).
//
// Time comes from Redis (TIME inside the script), not from the replica:
// replicas whose clocks disagree would otherwise move one key's TAT back
// and forth, letting requests through early or holding them too long. A
// key lives on one server, so its clock is the only one that counts. Since
// Redis 5 a script that reads TIME may write (effects are replicated, not
// the script), so a replica promoted after a failover carries the stored
// TATs over; its clock differs from the old master's by the servers' skew,
// which shifts at most the refills in flight, once.
//
// Keys are prefix + "{" + key + "}". The hash tag puts each bucket in the
// slot of the caller's key alone, whatever the prefix, so the single-key
// script runs on Redis Cluster, and the buckets of many keys spread over
// the masters. Each key expires when its bucket would be full again: idle
// keys take no memory and their expiry changes no decision.
type Redis struct {
	client redis.UniversalClient
	prefix string
}

var _ Limiter = (*Redis)(nil)

// NewRedis returns a Limiter that keeps its buckets in Redis under prefix.
// client may be a single-node, Sentinel-failover or Cluster client.
func NewRedis(client redis.UniversalClient, prefix string) *Redis {
	return &Redis{client: client, prefix: prefix}
}

func (r *Redis) bucketKey(key string) string { return r.prefix + "{" + key + "}" }

// allowScript is gcra (memory.go) in Lua, in whole microseconds.
//
//	KEYS[1]  the bucket: its TAT in microseconds since the Unix epoch
//	ARGV[1]  emission interval T in microseconds, an integer
//	ARGV[2]  burst
//
// It returns {allowed (0|1), remaining, retry after in microseconds}.
// Every quantity is an integer below 2^53 (validate bounds the tolerance),
// so Lua's doubles compute them exactly. A denial writes nothing.
var allowScript = redis.NewScript(`
local interval = tonumber(ARGV[1])
local tolerance = interval * tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '')
if tat == nil or tat < now then tat = now end
local nxt = tat + interval
local allow_at = nxt - tolerance
if now < allow_at then
  return {0, 0, allow_at - now}
end
redis.call('SET', KEYS[1], string.format('%.0f', nxt), 'PX', math.ceil((nxt - now) / 1000))
return {1, math.floor((tolerance - (nxt - now)) / interval), 0}
`)

func (r *Redis) Allow(ctx context.Context, key string, limit Limit) (Decision, error) {
	if limit.Unlimited() {
		return unlimited, nil
	}
	if err := limit.validate(); err != nil {
		return Decision{}, err
	}
	intervalMicros := limit.interval().Microseconds()
	res, err := allowScript.Run(ctx, r.client, []string{r.bucketKey(key)}, intervalMicros, limit.Burst).Int64Slice()
	if err != nil {
		return Decision{}, translate(err)
	}
	if len(res) != 3 {
		return Decision{}, fmt.Errorf("quota: allow script returned %d values, want 3", len(res))
	}
	return Decision{
		Allowed:    res[0] == 1,
		Remaining:  int(res[1]),
		RetryAfter: time.Duration(res[2]) * time.Microsecond,
	}, nil
}

// translate maps a go-redis error to this package's errors. No reply (a
// refused dial, a broken connection, a pool or deadline timeout, a closed
// client) and replies that mean the server cannot serve now become
// ErrUnavailable. The caller's own cancellation stays itself. Any other
// reply is a fault in this code or the server's setup, not an outage.
func translate(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("quota: %w", err)
	case !redisx.IsOutage(err):
		return fmt.Errorf("quota: %w", err)
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}
