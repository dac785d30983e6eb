package sessions

// Redis keeps sessions where every replica sees them.
//
// Keys, all with the session id as the Redis Cluster hash tag so that the
// scripts below touch one slot:
//
//	<prefix>s:{<id>}  hash: d = the record as JSON (without LastSeen), ls = LastSeen in ms
//	<prefix>e:{<id>}  stream: the push-stream event log; entry ids are the SSE event ids
//
// The session's idle TTL is the keys' expiry: Touch extends both.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the Store shared by every replica.
type Redis struct {
	c      redis.UniversalClient
	prefix string
	limits Limits
}

var _ Store = (*Redis)(nil)

// NewRedis returns a store keeping its keys under prefix.
func NewRedis(c redis.UniversalClient, prefix string, limits Limits) *Redis {
	return &Redis{c: c, prefix: prefix, limits: limits.withDefaults()}
}

func (r *Redis) recKey(id string) string { return r.prefix + "s:{" + id + "}" }
func (r *Redis) logKey(id string) string { return r.prefix + "e:{" + id + "}" }

// translate maps go-redis errors onto the package's sentinels.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, redis.Nil):
		return ErrNotFound
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

var createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'd', ARGV[1], 'ls', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`)

func (r *Redis) Create(ctx context.Context, s *Session) error {
	cp := *s
	if cp.LastSeen.IsZero() {
		cp.LastSeen = time.Now()
	}
	d, err := encodeRecord(&cp)
	if err != nil {
		return err
	}
	n, err := createScript.Run(ctx, r.c, []string{r.recKey(s.ID)}, d, cp.LastSeen.UnixMilli(), r.limits.TTL.Milliseconds()).Int()
	if err != nil {
		return translate(err)
	}
	if n == 0 {
		return ErrExists
	}
	return nil
}

// encodeRecord stores everything but LastSeen, which lives in its own field
// so that Touch need not rewrite the record.
func encodeRecord(s *Session) (string, error) {
	cp := *s
	cp.LastSeen = time.Time{}
	b, err := json.Marshal(&cp)
	if err != nil {
		return "", fmt.Errorf("sessions: encoding record: %w", err)
	}
	return string(b), nil
}

func decodeRecord(id string, vals []any) (*Session, error) {
	d, ok := vals[0].(string)
	if !ok {
		return nil, ErrNotFound
	}
	var s Session
	if err := json.Unmarshal([]byte(d), &s); err != nil {
		return nil, fmt.Errorf("sessions: corrupt record for %q: %w", id, err)
	}
	s.ID = id
	if ls, ok := vals[1].(string); ok {
		if ms, err := strconv.ParseInt(ls, 10, 64); err == nil {
			s.LastSeen = time.UnixMilli(ms)
		}
	}
	return &s, nil
}

func (r *Redis) Get(ctx context.Context, id string) (*Session, error) {
	vals, err := r.c.HMGet(ctx, r.recKey(id), "d", "ls").Result()
	if err != nil {
		return nil, translate(err)
	}
	return decodeRecord(id, vals)
}

// Update is optimistic: it retries when another replica changed the record
// between the read and the write.
func (r *Redis) Update(ctx context.Context, id string, fn func(*Session) error) (*Session, error) {
	key := r.recKey(id)
	// Compare-and-set on the record's own field: touches and appends write
	// other fields of the same hash, so watching the whole key would make
	// every update race them. Only a concurrent update of the record
	// itself conflicts, and then the update is tried again, after a short
	// random pause, until ctx ends.
	for attempt := 0; ; attempt++ {
		vals, err := r.c.HMGet(ctx, key, "d", "ls").Result()
		if err != nil {
			return nil, translate(err)
		}
		old, _ := vals[0].(string)
		s, err := decodeRecord(id, vals)
		if err != nil {
			return nil, err
		}
		if err := fn(s); err != nil {
			return nil, err
		}
		s.ID = id
		d, err := encodeRecord(s)
		if err != nil {
			return nil, err
		}
		n, err := casScript.Run(ctx, r.c, []string{key}, old, d).Int()
		switch {
		case err != nil:
			return nil, translate(err)
		case n == 1:
			return s, nil
		case n < 0:
			return nil, ErrNotFound
		}
		pause := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 5)))
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: update of a session kept conflicting until %v", ErrUnavailable, ctx.Err())
		case <-time.After(pause):
		}
	}
}

// casScript sets the record to ARGV[2] if it still is ARGV[1]: 1 when it
// did, 0 when the record changed meanwhile, -1 when it is gone.
var casScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], 'd')
if not cur then return -1 end
if cur ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'd', ARGV[2])
return 1`)

var touchScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'ls', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`)

func (r *Redis) Touch(ctx context.Context, id string, now time.Time) error {
	n, err := touchScript.Run(ctx, r.c, []string{r.recKey(id), r.logKey(id)}, now.UnixMilli(), r.limits.TTL.Milliseconds()).Int()
	if err != nil {
		return translate(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

var deleteScript = redis.NewScript(`
local n = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2])
return n`)

func (r *Redis) Delete(ctx context.Context, id string) error {
	n, err := deleteScript.Run(ctx, r.c, []string{r.recKey(id), r.logKey(id)}).Int()
	if err != nil {
		return translate(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// appendScript adds an event and bounds the log by length, age and bytes
// (the age cut uses the server's clock, the same clock that made the entry
// ids; the newest event always stays). The record's field b counts the
// log's bytes. Redis trimming does not remember what it dropped, so the
// script records the newest dropped id in the record's field g: a cursor
// older than that has lost events. The log's expiry follows the session's.
var appendScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local id = redis.call('XADD', KEYS[2], '*', 'd', ARGV[1])
local bytes = redis.call('HINCRBY', KEYS[1], 'b', #ARGV[1])
local maxlen = tonumber(ARGV[2])
local maxbytes = tonumber(ARGV[4])
local gone = nil
local function size(e)
  local f = e[2]
  for i = 1, #f, 2 do
    if f[i] == 'd' then return #f[i + 1] end
  end
  return 0
end
local function drop(entries, untilFits)
  for _, e in ipairs(entries) do
    if e[1] == id then return false end
    if untilFits and bytes <= maxbytes then return false end
    bytes = bytes - size(e)
    redis.call('XDEL', KEYS[2], e[1])
    gone = e[1]
  end
  return true
end
local len = redis.call('XLEN', KEYS[2])
if len > maxlen then
  drop(redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', len - maxlen))
end
local t = redis.call('TIME')
local oldest = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[3])
if oldest > 0 then
  drop(redis.call('XRANGE', KEYS[2], '-', '(' .. string.format('%d-0', oldest)))
end
while bytes > maxbytes do
  local r = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 16)
  if #r == 0 or not drop(r, true) then break end
end
if redis.call('XLEN', KEYS[2]) <= 1 or bytes < 0 then
  -- Only the newest is left (or the count drifted, e.g. a record from
  -- before byte counting): count what is there.
  bytes = #ARGV[1]
end
redis.call('HSET', KEYS[1], 'b', bytes)
if gone then redis.call('HSET', KEYS[1], 'g', gone) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return id`)

func (r *Redis) Append(ctx context.Context, id string, data []byte) (string, error) {
	res, err := appendScript.Run(ctx, r.c, []string{r.recKey(id), r.logKey(id)},
		data, r.limits.MaxEvents, r.limits.MaxEventAge.Milliseconds(), r.limits.MaxBytes).Text()
	if err != nil {
		return "", translate(err) // redis.Nil (the script's false) is ErrNotFound
	}
	return res, nil
}

func (r *Redis) ReadAfter(ctx context.Context, id string, after string, max int) ([]Event, error) {
	var afterID streamID
	if after != "" {
		var ok bool
		if afterID, ok = parseStreamID(after); !ok {
			return nil, fmt.Errorf("%w: %q", ErrBadEventID, after)
		}
	}
	// One transaction: an append on another connection cannot trim the log
	// between the gap check and the read.
	pipe := r.c.TxPipeline()
	gone := pipe.HMGet(ctx, r.recKey(id), "d", "g")
	info := pipe.XInfoStream(ctx, r.logKey(id))
	start := "-"
	if after != "" {
		start = "(" + after
	}
	var rng *redis.XMessageSliceCmd
	if max > 0 {
		rng = pipe.XRangeN(ctx, r.logKey(id), start, "+", int64(max))
	} else {
		rng = pipe.XRange(ctx, r.logKey(id), start, "+")
	}
	_, _ = pipe.Exec(ctx) // errors are read per command below
	rec, err := gone.Result()
	if err != nil {
		return nil, translate(err)
	}
	if rec[0] == nil {
		return nil, ErrNotFound
	}
	st, err := info.Result()
	if err != nil {
		if !strings.Contains(err.Error(), "no such key") {
			return nil, translate(err)
		}
		// No event was ever appended: only an empty cursor makes sense.
		if after != "" {
			return nil, fmt.Errorf("%w: %q is newer than the log", ErrBadEventID, after)
		}
		return nil, nil
	}
	if after != "" {
		last, _ := parseStreamID(st.LastGeneratedID)
		if last.less(afterID) {
			return nil, fmt.Errorf("%w: %q is newer than the log", ErrBadEventID, after)
		}
		// A cursor before the newest dropped event means events after
		// the cursor are gone.
		if g, _ := rec[1].(string); g != "" {
			if dropped, ok := parseStreamID(g); ok && afterID.less(dropped) {
				return nil, ErrEventGone
			}
		}
	}
	msgs, err := rng.Result()
	if err != nil {
		return nil, translate(err)
	}
	out := make([]Event, 0, len(msgs))
	for _, m := range msgs {
		d, _ := m.Values["d"].(string)
		out = append(out, Event{ID: m.ID, Data: []byte(d)})
	}
	return out, nil
}

func (r *Redis) LastEventID(ctx context.Context, id string) (string, error) {
	pipe := r.c.Pipeline()
	exists := pipe.Exists(ctx, r.recKey(id))
	last := pipe.XRevRangeN(ctx, r.logKey(id), "+", "-", 1)
	_, _ = pipe.Exec(ctx)
	if err := exists.Err(); err != nil {
		return "", translate(err)
	}
	if exists.Val() == 0 {
		return "", ErrNotFound
	}
	msgs, err := last.Result()
	if err != nil {
		return "", translate(err)
	}
	if len(msgs) == 0 {
		return "", nil
	}
	return msgs[0].ID, nil
}

func (r *Redis) Ping(ctx context.Context) error {
	return translate(r.c.Ping(ctx).Err())
}

// streamID is a parsed Redis stream entry id "ms-seq".
type streamID struct{ ms, seq uint64 }

func parseStreamID(s string) (streamID, bool) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return streamID{}, false
	}
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil || (ms == 0 && seq == 0) {
		return streamID{}, false
	}
	return streamID{ms, seq}, true
}

func (a streamID) less(b streamID) bool { return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq) }
