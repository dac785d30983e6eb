package documents

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/mcp-gateway/internal/redisx"
)

// Redis is the Store shared by every replica; doc.go describes its keys.
type Redis struct {
	c      redis.UniversalClient
	prefix string
}

var _ Store = (*Redis)(nil)

// NewRedis returns a store keeping its keys under prefix. c may be a
// single-node, Sentinel-failover or Cluster client. Use a prefix no other
// store shares.
func NewRedis(c redis.UniversalClient, prefix string) *Redis {
	return &Redis{c: c, prefix: prefix}
}

func (r *Redis) curKey() string          { return r.prefix + "{doc}:cur" }
func (r *Redis) docKey(id string) string { return r.prefix + "{doc}:d:" + id }
func (r *Redis) idsKey() string          { return r.prefix + "{replicas}:ids" }
func (r *Redis) expKey() string          { return r.prefix + "{replicas}:exp" }
func (r *Redis) reportKeys() []string    { return []string{r.idsKey(), r.expKey()} }

// translate maps a go-redis error onto the package's errors. When the
// caller's context has ended, that is the error, unwrapped: the caller gave
// up, the store may be fine. No reply (a refused dial, a broken connection,
// a timeout, a closed client) and replies that mean the server cannot serve
// now are ErrUnavailable. Any other reply is a fault in this code or the
// server's setup, not an outage. redis.Nil is the caller's to handle.
func translate(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if !redisx.IsOutage(err) {
		return fmt.Errorf("documents: %w", err)
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// publishScript makes a new version current if the pointer still is what
// the caller last read.
//
//	KEYS[1]  the pointer
//	KEYS[2]  the new version's bytes
//	KEYS[3]  the bytes to drop: the pointer's previous version's (absent
//	         when there is none, or when it is the new version itself)
//	ARGV[1]  the new id, ARGV[2] its bytes
//	ARGV[3]  the current id the caller read, ARGV[4] the previous id it read
//
// It returns {1, at} when it published; {0, at} when ARGV[1] already is
// current (nothing is written); {2, id, prev}, what the pointer holds now,
// when it changed since the caller read it (nothing is written). at is
// PublishedAt in µs on Redis's clock.
var publishScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'id', 'at', 'prev')
local id, prev = cur[1] or '', cur[3] or ''
if id == ARGV[1] then return {0, cur[2] or ''} end
if id ~= ARGV[3] or prev ~= ARGV[4] then return {2, id, prev} end
redis.call('SET', KEYS[2], ARGV[2])
if KEYS[3] then redis.call('DEL', KEYS[3]) end
local t = redis.call('TIME')
local at = t[1] .. string.format('%06d', tonumber(t[2]))
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'at', at, 'prev', id)
return {1, at}`)

const (
	publishCurrent  = 0
	publishDone     = 1
	publishConflict = 2
)

// Publish implements Store. It reads the pointer, then sends the bytes
// with the script above. Only a concurrent Publish (which the caller's
// lease should prevent) makes the script refuse; then Publish tries again
// with the pointer the script returned, after a short random pause, until
// ctx ends.
func (r *Redis) Publish(ctx context.Context, id string, doc []byte) (Version, bool, error) {
	if err := validatePublish(id, doc); err != nil {
		return Version{}, false, err
	}
	vals, err := r.c.HMGet(ctx, r.curKey(), "id", "at", "prev").Result()
	if err != nil {
		return Version{}, false, translate(ctx, err)
	}
	cur, _ := vals[0].(string)
	prev, _ := vals[2].(string)
	if cur == id {
		// Already current: no need to send the bytes.
		at, _ := vals[1].(string)
		v, err := version(id, at)
		return v, false, err
	}
	for attempt := 0; ; attempt++ {
		keys := []string{r.curKey(), r.docKey(id)}
		if prev != "" && prev != id {
			keys = append(keys, r.docKey(prev))
		}
		res, err := publishScript.Run(ctx, r.c, keys, id, doc, cur, prev).Slice()
		if err != nil {
			return Version{}, false, translate(ctx, err)
		}
		if len(res) == 0 {
			return Version{}, false, errors.New("documents: publish script returned nothing")
		}
		code, _ := res[0].(int64)
		str := func(i int) string {
			if i < len(res) {
				s, _ := res[i].(string)
				return s
			}
			return ""
		}
		switch code {
		case publishDone, publishCurrent:
			v, err := version(id, str(1))
			return v, code == publishDone, err
		case publishConflict:
			cur, prev = str(1), str(2)
		default:
			return Version{}, false, fmt.Errorf("documents: publish script returned %v", res)
		}
		pause := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 5)))
		select {
		case <-ctx.Done():
			return Version{}, false, ctx.Err()
		case <-time.After(pause):
		}
	}
}

// version builds a Version from the pointer's fields.
func version(id, at string) (Version, error) {
	us, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return Version{}, fmt.Errorf("documents: corrupt publication time %q of version %q", at, id)
	}
	return Version{ID: id, PublishedAt: time.UnixMicro(us)}, nil
}

func (r *Redis) Current(ctx context.Context) (Version, bool, error) {
	vals, err := r.c.HMGet(ctx, r.curKey(), "id", "at").Result()
	if err != nil {
		return Version{}, false, translate(ctx, err)
	}
	id, _ := vals[0].(string)
	if id == "" {
		return Version{}, false, nil
	}
	at, _ := vals[1].(string)
	v, err := version(id, at)
	if err != nil {
		return Version{}, false, err
	}
	return v, true, nil
}

func (r *Redis) Document(ctx context.Context, id string) ([]byte, error) {
	if err := validateID(id); err != nil {
		return nil, err
	}
	b, err := r.c.Get(ctx, r.docKey(id)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, ErrNotFound
	case err != nil:
		return nil, translate(ctx, err)
	}
	return b, nil
}

// reportScript records one replica's report and drops lapsed ones; both
// keys expire with the latest report.
//
//	KEYS[1]  replica → id, KEYS[2] replica scored by expiry (µs)
//	ARGV[1]  the replica, ARGV[2] its id, ARGV[3] ttl in µs
var reportScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function fmt(n) return string.format('%.0f', n) end
for _, r in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', fmt(now))) do
  redis.call('HDEL', KEYS[1], r)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', fmt(now))
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], fmt(now + tonumber(ARGV[3])), ARGV[1])
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
local ms = fmt(math.max(1, math.ceil((tonumber(last[2]) - now) / 1000)))
redis.call('PEXPIRE', KEYS[1], ms)
redis.call('PEXPIRE', KEYS[2], ms)
return 1`)

func (r *Redis) Report(ctx context.Context, replica, id string, ttl time.Duration) error {
	if err := validateReport(replica, id, ttl); err != nil {
		return err
	}
	if err := reportScript.Run(ctx, r.c, r.reportKeys(), replica, id, ttl.Microseconds()).Err(); err != nil {
		return translate(ctx, err)
	}
	return nil
}

// Leave implements Store: one MULTI of HDEL and ZREM (the keys share a slot).
func (r *Redis) Leave(ctx context.Context, replica string) error {
	if err := validateReplica(replica); err != nil {
		return err
	}
	_, err := r.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HDel(ctx, r.idsKey(), replica)
		p.ZRem(ctx, r.expKey(), replica)
		return nil
	})
	if err != nil {
		return translate(ctx, err)
	}
	return nil
}

// replicasScript returns the unexpired reports, flattened: replica, id, …
// It writes nothing: Report drops what lapsed.
//
//	KEYS[1]  replica → id, KEYS[2] replica scored by expiry (µs)
var replicasScript = redis.NewScript(`
local t = redis.call('TIME')
local now = string.format('%.0f', tonumber(t[1]) * 1000000 + tonumber(t[2]))
local out = {}
for _, r in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')) do
  local id = redis.call('HGET', KEYS[1], r)
  if id then
    out[#out + 1] = r
    out[#out + 1] = id
  end
end
return out`)

func (r *Redis) Replicas(ctx context.Context) (map[string]string, error) {
	flat, err := replicasScript.Run(ctx, r.c, r.reportKeys()).StringSlice()
	if err != nil {
		return nil, translate(ctx, err)
	}
	out := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		out[flat[i]] = flat[i+1]
	}
	return out, nil
}
