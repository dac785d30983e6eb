package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/mcp-gateway/internal/redisx"
)

// Redis is the Lease shared by all replicas. Each lease is one string key,
// <prefix>l:{<name>}, whose value is the holder and whose expiry (PX) is
// the lease's: Redis's clock decides when a lease lapses, so replicas whose
// clocks disagree still agree on who holds it.
//
// Acquire and Release are one round trip each, an EVALSHA, so a check and
// its write are atomic; when the server's script cache lacks the script
// (a new server, SCRIPT FLUSH, a failover) its NOSCRIPT reply is followed
// by an EVAL that caches it again. Holder is one GET. Each touches one key, so on
// Redis Cluster every call goes to one master whatever the slot; the hash
// tag makes the slot the name's alone, so leases spread over the masters
// whatever the prefix. A name containing '}' hashes on its part before the
// first '}', which changes only where the key lives.
type Redis struct {
	client redis.UniversalClient
	prefix string
}

var _ Lease = (*Redis)(nil)

// NewRedis returns a Lease that keeps its keys in Redis under prefix. Use a
// prefix without braces that no other store shares. client may be a
// single-node, Sentinel-failover or Cluster client.
func NewRedis(c redis.UniversalClient, prefix string) *Redis {
	return &Redis{client: c, prefix: prefix}
}

func (r *Redis) key(name string) string { return r.prefix + "l:{" + name + "}" }

// acquireScript takes or renews a lease.
//
//	KEYS[1]  the lease
//	ARGV[1]  the holder, ARGV[2] ttl in whole milliseconds
//
// It returns 1 when the holder holds the lease afterwards, else 0. Within
// a script the key cannot expire between the GET and the SET.
var acquireScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
elseif redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0
`)

// releaseScript deletes a lease if the holder holds it.
//
//	KEYS[1]  the lease
//	ARGV[1]  the holder
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// Acquire implements Lease: one round trip.
func (r *Redis) Acquire(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if err := validate(name, holder); err != nil {
		return false, err
	}
	if err := validateTTL(ttl); err != nil {
		return false, err
	}
	// Rounded up: a lease never lapses before the ttl its holder asked for.
	ms := ttl.Milliseconds()
	if ttl%time.Millisecond != 0 {
		ms++
	}
	n, err := acquireScript.Run(ctx, r.client, []string{r.key(name)}, holder, ms).Int()
	if err != nil {
		return false, translate(ctx, err)
	}
	return n == 1, nil
}

// Release implements Lease: one round trip.
func (r *Redis) Release(ctx context.Context, name, holder string) error {
	if err := validate(name, holder); err != nil {
		return err
	}
	if err := releaseScript.Run(ctx, r.client, []string{r.key(name)}, holder).Err(); err != nil {
		return translate(ctx, err)
	}
	return nil
}

// Holder implements Lease.
func (r *Redis) Holder(ctx context.Context, name string) (string, error) {
	if err := validateName(name); err != nil {
		return "", err
	}
	h, err := r.client.Get(ctx, r.key(name)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", nil
	case err != nil:
		return "", translate(ctx, err)
	}
	return h, nil
}

// translate maps a go-redis error to this package's errors. The caller's
// own cancellation or deadline (ctx is done and err is ctx's) is returned
// as it is. No reply (a refused dial, a broken connection, a pool or
// socket timeout, a closed client) and replies that mean the server cannot
// serve now wrap ErrUnavailable. Any other reply is a fault in this code or
// the server's setup (WRONGTYPE: another store shares the prefix), not an
// outage.
func translate(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return err
	case !redisx.IsOutage(err):
		return fmt.Errorf("lease: %w", err)
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}
