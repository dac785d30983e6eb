package pending

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/mcp-gateway/internal/redisx"
)

// Redis is the Store shared by every replica. The package comment gives
// its keys and round trips.
type Redis struct {
	c      redis.UniversalClient
	prefix string
}

var _ Store = (*Redis)(nil)

// NewRedis returns a store keeping its keys under prefix (use a prefix
// without braces that no other store shares). c may be a single-node,
// Sentinel-failover or Cluster client.
func NewRedis(c redis.UniversalClient, prefix string) *Redis {
	return &Redis{c: c, prefix: prefix}
}

// hashSlack is how long a session's hash outlives its latest deadline,
// so that the key never expires before a record the replicas' clocks
// still call live.
const hashSlack = time.Minute

func (r *Redis) sessionKey(session string) string { return r.prefix + "r:" + redisx.HashTag(session) }
func (r *Redis) markKey(token string) string      { return r.prefix + "c:" + redisx.HashTag(token) }
func (r *Redis) sharedKey(name string) string     { return r.prefix + "k:" + redisx.HashTag(name) }

// translate maps go-redis errors onto the package's: an error of ctx as
// it is, a reply of a healthy server (a script fault, WRONGTYPE) as a
// plain error, anything else as an outage.
func translate(ctx context.Context, err error) error {
	return redisx.Translate(ctx, err, "pending", ErrUnavailable)
}

// A field of a session's hash is a record's id; its value is
// "<deadline in ms since the Unix epoch>:<replica>". Deadlines are the
// replicas' wall clocks: each call passes its own now, so Redis's clock
// decides only when the whole hash goes (hashSlack after the latest
// deadline).

// encode returns the hash value of rec.
func encode(rec Record) string {
	return strconv.FormatInt(rec.Deadline.UnixMilli(), 10) + ":" + rec.Replica
}

// decode parses a hash value into the record of (session, id).
func decode(session, id, v string) (Record, error) {
	ms, replica, ok := strings.Cut(v, ":")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil {
		return Record{}, fmt.Errorf("pending: malformed record %q of session %q", id, session)
	}
	return Record{Session: session, ID: id, Replica: replica, Deadline: time.UnixMilli(n)}, nil
}

// addScript adds a record to a session's hash.
//
//	KEYS[1]  the session's hash
//	ARGV[1]  now in ms, ARGV[2] the cap (0: none), ARGV[3] the id,
//	ARGV[4]  its value, ARGV[5] its deadline in ms, ARGV[6] hashSlack in ms
//
// It drops the fields whose deadline is not after now, counts the live
// others, and returns 0 when they are at the cap. Else it sets the field,
// makes the hash expire hashSlack after its latest deadline and returns 1.
var addScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local latest = tonumber(ARGV[5])
local others = 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if all[i] ~= ARGV[3] then
    local d = tonumber(string.match(all[i + 1], '^%d+'))
    if d == nil or d <= now then
      redis.call('HDEL', KEYS[1], all[i])
    else
      others = others + 1
      if d > latest then latest = d end
    end
  end
end
local cap = tonumber(ARGV[2])
if cap > 0 and others >= cap then return 0 end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], string.format('%.0f', latest - now + tonumber(ARGV[6])))
return 1
`)

// removeScript deletes a field and returns its value (nil when absent).
//
//	KEYS[1]  the session's hash
//	ARGV[1]  the id
var removeScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v then redis.call('HDEL', KEYS[1], ARGV[1]) end
return v
`)

// takeScript deletes a hash and returns its fields and values, flat.
//
//	KEYS[1]  the session's hash
var takeScript = redis.NewScript(`
local all = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1])
return all
`)

// sharedScript returns a string, first setting it (with no expiry) when
// absent. SET NX GET would do the same in one command from Redis 7.0.
//
//	KEYS[1]  the shared key
//	ARGV[1]  the candidate
var sharedScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
`)

// Add implements Store: one script.
func (r *Redis) Add(ctx context.Context, rec Record, max int) error {
	now := time.Now()
	rec, err := checkRecord(rec, now)
	if err != nil {
		return err
	}
	limit := 0 // the script's "no cap"
	if max > 0 {
		limit = max
	}
	n, err := addScript.Run(ctx, r.c, []string{r.sessionKey(rec.Session)},
		now.UnixMilli(), limit, rec.ID, encode(rec), rec.Deadline.UnixMilli(), hashSlack.Milliseconds()).Int()
	if err != nil {
		return translate(ctx, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %d per session", ErrFull, max)
	}
	return nil
}

// Get implements Store: one HGET.
func (r *Redis) Get(ctx context.Context, session, id string) (Record, error) {
	if err := checkKey(session, id); err != nil {
		return Record{}, err
	}
	v, err := r.c.HGet(ctx, r.sessionKey(session), id).Result()
	if errors.Is(err, redis.Nil) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, translate(ctx, err)
	}
	rec, err := decode(session, id, v)
	if err != nil {
		return Record{}, err
	}
	if !time.Now().Before(rec.Deadline) {
		return Record{}, ErrNotFound
	}
	return rec, nil
}

// Remove implements Store: one script (HGET and HDEL), so that it reports
// only a live record, as Get would.
func (r *Redis) Remove(ctx context.Context, session, id string) (bool, error) {
	if err := checkKey(session, id); err != nil {
		return false, err
	}
	v, err := removeScript.Run(ctx, r.c, []string{r.sessionKey(session)}, id).Text()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, translate(ctx, err)
	}
	rec, err := decode(session, id, v)
	if err != nil {
		return false, err
	}
	return time.Now().Before(rec.Deadline), nil
}

// RemoveSession implements Store: one script (HGETALL and DEL).
func (r *Redis) RemoveSession(ctx context.Context, session string) ([]Record, error) {
	if err := checkSession(session); err != nil {
		return nil, err
	}
	all, err := takeScript.Run(ctx, r.c, []string{r.sessionKey(session)}).StringSlice()
	if err != nil {
		return nil, translate(ctx, err)
	}
	now := time.Now()
	var out []Record
	for i := 0; i+1 < len(all); i += 2 {
		rec, err := decode(session, all[i], all[i+1])
		if err != nil {
			return nil, err
		}
		if now.Before(rec.Deadline) {
			out = append(out, rec)
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Consume implements Store: one SET NX PX.
func (r *Redis) Consume(ctx context.Context, token string, ttl time.Duration) (bool, error) {
	ttl, err := checkConsume(token, ttl)
	if err != nil {
		return false, err
	}
	first, err := r.c.SetNX(ctx, r.markKey(token), 1, ttl).Result()
	if err != nil {
		return false, translate(ctx, err)
	}
	return first, nil
}

// SharedKey implements Store: one script.
func (r *Redis) SharedKey(ctx context.Context, name string, candidate []byte) ([]byte, error) {
	if err := checkShared(name, candidate); err != nil {
		return nil, err
	}
	v, err := sharedScript.Run(ctx, r.c, []string{r.sharedKey(name)}, candidate).Text()
	if err != nil {
		return nil, translate(ctx, err)
	}
	return []byte(v), nil
}
