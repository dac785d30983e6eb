package subscriptions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/mcp-gateway/internal/redisx"
)

// Redis is the Store shared by every replica. The package comment gives
// its keys, the order of its writes and its round trips.
type Redis struct {
	c      redis.UniversalClient
	prefix string
	limits Limits
}

var _ Store = (*Redis)(nil)

// NewRedis returns a store keeping its keys under prefix (use a prefix no
// other store shares). c may be a single-node, Sentinel-failover or
// Cluster client.
func NewRedis(c redis.UniversalClient, prefix string, l Limits) *Redis {
	return &Redis{c: c, prefix: prefix, limits: l.withDefaults()}
}

// uriSlack is added to the expiries in the uris index, so that an entry
// there outlives the subscription written after it (see Add).
const uriSlack = time.Second

func (r *Redis) uriKey(uri string) string        { return r.prefix + "u:" + redisx.HashTag(uri) }
func (r *Redis) subKey(subscriber string) string { return r.prefix + "s:" + redisx.HashTag(subscriber) }
func (r *Redis) stateKey(uri string) string      { return r.prefix + "st:" + redisx.HashTag(uri) }
func (r *Redis) urisKey() string                 { return r.prefix + "uris" }

// translate maps go-redis errors onto the package's: an error of ctx as
// it is, a reply of a healthy server (a script fault, WRONGTYPE) as a
// plain error, anything else as an outage.
func translate(ctx context.Context, err error) error {
	return redisx.Translate(ctx, err, "subscriptions", ErrUnavailable)
}

// Every script touches the one key it is given, so that on a Cluster each
// runs on the node of that key. Scores are expiries in µs since the Unix
// epoch on the clock of the server holding the key (TIME): a score is
// written and compared on the same server, so servers whose clocks
// disagree still agree on how long an entry lives. A member is live while
// its score is after now.

// addScript adds members to a sorted set.
//
//	KEYS[1]  a sorted set
//	ARGV[1]  ttl in µs, ARGV[2] the cap (0: none), ARGV[3..] the members
//
// It drops expired members, then returns 0 if the members not yet held
// would take the set past the cap. Else it sets each member's expiry to
// now+ttl unless it is later already, the key's expiry to its last
// member's, and returns 1.
var addScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function fmt(n) return string.format('%.0f', n) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', fmt(now))
local cap = tonumber(ARGV[2])
if cap > 0 then
  local new = 0
  for i = 3, #ARGV do
    if not redis.call('ZSCORE', KEYS[1], ARGV[i]) then new = new + 1 end
  end
  if new > 0 and redis.call('ZCARD', KEYS[1]) + new > cap then return 0 end
end
local exp = fmt(now + tonumber(ARGV[1]))
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[1], 'GT', exp, ARGV[i])
end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], fmt(math.ceil((tonumber(last[2]) - now) / 1000)))
return 1
`)

// extendScript extends a live member's expiry; it adds none.
//
//	KEYS[1]  a sorted set
//	ARGV[1]  ttl in µs, ARGV[2] the member
//
// It drops expired members; if the member is left, it sets its expiry to
// now+ttl unless it is later already, the key's to its last member's, and
// returns 1; else 0.
var extendScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function fmt(n) return string.format('%.0f', n) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', fmt(now))
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', 'GT', fmt(now + tonumber(ARGV[1])), ARGV[2])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], fmt(math.ceil((tonumber(last[2]) - now) / 1000)))
return 1
`)

// liveScript drops a sorted set's expired members and returns the rest.
//
//	KEYS[1]  a sorted set
var liveScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now))
return redis.call('ZRANGE', KEYS[1], 0, -1)
`)

// probeScript drops a sorted set's expired members and returns how many
// are left, or, given a member, 1 if it is left and 0 if not.
//
//	KEYS[1]  a sorted set
//	ARGV[1]  the member (optional)
var probeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now))
if #ARGV == 0 then return redis.call('ZCARD', KEYS[1]) end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
return 0
`)

// takeScript deletes a sorted set and returns its members, expired or not.
//
//	KEYS[1]  a sorted set
var takeScript = redis.NewScript(`
local m = redis.call('ZRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
return m
`)

// call is one run of a script on one key.
type call struct {
	key  string
	args []any
}

// evalEach runs s once per call: one call as Script.Run does, several in
// one pipeline (on a Cluster, one round trip to each node holding a key,
// in parallel). A call whose server lacks the script (after SCRIPT FLUSH
// or a restart) runs again with EVAL, one round trip more.
func (r *Redis) evalEach(ctx context.Context, s *redis.Script, calls []call) ([]*redis.Cmd, error) {
	if len(calls) == 1 {
		cmd := s.Run(ctx, r.c, []string{calls[0].key}, calls[0].args...)
		return []*redis.Cmd{cmd}, translate(ctx, cmd.Err())
	}
	cmds := make([]*redis.Cmd, len(calls))
	run := func(which []int, eval bool) {
		// Errors are read per command below.
		_, _ = r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range which {
				keys := []string{calls[i].key}
				if eval {
					cmds[i] = s.Eval(ctx, p, keys, calls[i].args...)
				} else {
					cmds[i] = s.EvalSha(ctx, p, keys, calls[i].args...)
				}
			}
			return nil
		})
	}
	all := make([]int, len(calls))
	for i := range all {
		all[i] = i
	}
	run(all, false)
	var missing []int
	for i, cmd := range cmds {
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		run(missing, true)
	}
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			return nil, translate(ctx, err)
		}
	}
	return cmds, nil
}

// indexCall puts uris in the uris index for ttl (µs) and uriSlack more.
func (r *Redis) indexCall(ttl int64, uris []string) call {
	args := make([]any, 0, 2+len(uris))
	args = append(args, ttl+uriSlack.Microseconds(), 0)
	for _, u := range uris {
		args = append(args, u)
	}
	return call{key: r.urisKey(), args: args}
}

// Add implements Store. See the package comment for its four steps.
func (r *Redis) Add(ctx context.Context, subscriber, uri string, ttl time.Duration) error {
	if err := checkPair(subscriber, uri); err != nil {
		return err
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	us := ttl.Microseconds()
	held := call{key: r.subKey(subscriber), args: []any{us, r.limits.MaxPerSubscriber, uri}}
	cmds, err := r.evalEach(ctx, addScript, []call{held})
	if err != nil {
		return err
	}
	if n, _ := cmds[0].Int(); n == 0 {
		return fmt.Errorf("%w: %d per subscriber", ErrTooMany, r.limits.MaxPerSubscriber)
	}
	start := time.Now()
	if _, err := r.evalEach(ctx, addScript, []call{r.indexCall(us, []string{uri})}); err != nil {
		return err
	}
	if _, err := r.evalEach(ctx, addScript, []call{{key: r.uriKey(uri), args: []any{us, 0, subscriber}}}); err != nil {
		return err
	}
	held.args[1] = 0 // the cap was checked in step 1
	last := []call{held}
	if time.Since(start) >= uriSlack {
		last = append(last, r.indexCall(us, []string{uri}))
	}
	_, err = r.evalEach(ctx, addScript, last)
	return err
}

// Remove implements Store: a ZREM from the subscriber's set, then one from
// the URI's.
func (r *Redis) Remove(ctx context.Context, subscriber, uri string) error {
	if err := checkPair(subscriber, uri); err != nil {
		return err
	}
	if err := r.c.ZRem(ctx, r.subKey(subscriber), uri).Err(); err != nil {
		return translate(ctx, err)
	}
	return translate(ctx, r.c.ZRem(ctx, r.uriKey(uri), subscriber).Err())
}

// RemoveAll implements Store: the subscriber's set is taken (read and
// deleted in one script), then its URIs' sets lose the subscriber in one
// pipeline.
func (r *Redis) RemoveAll(ctx context.Context, subscriber string) error {
	if err := checkSubscriber(subscriber); err != nil {
		return err
	}
	cmds, err := r.evalEach(ctx, takeScript, []call{{key: r.subKey(subscriber)}})
	if err != nil {
		return err
	}
	uris, err := cmds[0].StringSlice()
	if err != nil {
		return translate(ctx, err)
	}
	if len(uris) == 0 {
		return nil
	}
	zrems := make([]*redis.IntCmd, len(uris))
	_, _ = r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, u := range uris {
			zrems[i] = p.ZRem(ctx, r.uriKey(u), subscriber)
		}
		return nil
	})
	for _, cmd := range zrems {
		if err := cmd.Err(); err != nil {
			return translate(ctx, err)
		}
	}
	return nil
}

// Refresh implements Store. See the package comment for its four steps.
func (r *Redis) Refresh(ctx context.Context, subscriber string, ttl time.Duration) error {
	if err := checkSubscriber(subscriber); err != nil {
		return err
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	sk := r.subKey(subscriber)
	uris, err := r.live(ctx, sk)
	if err != nil || len(uris) == 0 {
		return err
	}
	us := ttl.Microseconds()
	start := time.Now()
	if _, err := r.evalEach(ctx, addScript, []call{r.indexCall(us, uris)}); err != nil {
		return err
	}
	calls := make([]call, len(uris))
	for i, u := range uris {
		calls[i] = call{key: r.uriKey(u), args: []any{us, subscriber}}
	}
	cmds, err := r.evalEach(ctx, extendScript, calls)
	if err != nil {
		return err
	}
	// Only what the URIs' sets still hold is extended in the subscriber's:
	// an entry they lack (a Remove or an Add cut short) lapses.
	args := []any{us, 0}
	var kept []string
	for i, cmd := range cmds {
		if n, _ := cmd.Int(); n == 1 {
			args = append(args, uris[i])
			kept = append(kept, uris[i])
		}
	}
	if len(kept) == 0 {
		return nil
	}
	last := []call{{key: sk, args: args}}
	if time.Since(start) >= uriSlack {
		last = append(last, r.indexCall(us, kept))
	}
	_, err = r.evalEach(ctx, addScript, last)
	return err
}

// live returns the live members of the sorted set key, sorted; nil for
// none.
func (r *Redis) live(ctx context.Context, key string) ([]string, error) {
	cmds, err := r.evalEach(ctx, liveScript, []call{{key: key}})
	if err != nil {
		return nil, err
	}
	members, err := cmds[0].StringSlice()
	if err != nil {
		return nil, translate(ctx, err)
	}
	if len(members) == 0 {
		return nil, nil
	}
	slices.Sort(members)
	return members, nil
}

// Subscribers implements Store: one script on the URI's set.
func (r *Redis) Subscribers(ctx context.Context, uri string) ([]string, error) {
	if err := checkURI(uri); err != nil {
		return nil, err
	}
	return r.live(ctx, r.uriKey(uri))
}

// Of implements Store: the subscriber's set gives the candidates, and one
// pipeline asks each URI's set whether it holds the subscriber.
func (r *Redis) Of(ctx context.Context, subscriber string) ([]string, error) {
	if err := checkSubscriber(subscriber); err != nil {
		return nil, err
	}
	uris, err := r.live(ctx, r.subKey(subscriber))
	if err != nil || len(uris) == 0 {
		return nil, err
	}
	calls := make([]call, len(uris))
	for i, u := range uris {
		calls[i] = call{key: r.uriKey(u), args: []any{subscriber}}
	}
	return r.confirm(ctx, uris, calls)
}

// URIs implements Store: the uris index gives the candidates, and one
// pipeline asks each URI's set whether it holds a live subscriber.
func (r *Redis) URIs(ctx context.Context) ([]string, error) {
	uris, err := r.live(ctx, r.urisKey())
	if err != nil || len(uris) == 0 {
		return nil, err
	}
	calls := make([]call, len(uris))
	for i, u := range uris {
		calls[i] = call{key: r.uriKey(u)}
	}
	return r.confirm(ctx, uris, calls)
}

// confirm runs probeScript for each candidate and keeps those it finds.
func (r *Redis) confirm(ctx context.Context, candidates []string, calls []call) ([]string, error) {
	cmds, err := r.evalEach(ctx, probeScript, calls)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, cmd := range cmds {
		if n, _ := cmd.Int(); n > 0 {
			out = append(out, candidates[i])
		}
	}
	return out, nil
}

// State implements Store: a GET.
func (r *Redis) State(ctx context.Context, uri string) ([]byte, error) {
	if err := checkURI(uri); err != nil {
		return nil, err
	}
	b, err := r.c.Get(ctx, r.stateKey(uri)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, translate(ctx, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// SetState implements Store: a SET with PX.
func (r *Redis) SetState(ctx context.Context, uri string, state []byte, ttl time.Duration) error {
	if err := checkURI(uri); err != nil {
		return err
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	if state == nil {
		state = []byte{}
	}
	return translate(ctx, r.c.Set(ctx, r.stateKey(uri), state, ttl).Err())
}
