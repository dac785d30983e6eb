// Package redisx holds what the Redis-backed stores share: which go-redis
// errors mean Redis cannot serve now (an outage the gateway answers with
// 503 and recovers from) rather than a fault in the caller's code or the
// server's setup, and how a string becomes a Cluster hash tag. It imports go-redis and no project
// package.
package redisx

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// IsOutage reports whether err, from a go-redis call, means Redis cannot
// serve now: no reply at all (a refused dial, a broken connection, a pool
// or socket timeout, a closed client) or a reply saying the server cannot
// serve yet (loading, cluster down, try again, master down, read-only
// replica, too many clients, out of memory). Any other reply (WRONGTYPE, a
// script error) is a fault, not an outage. The caller handles its own
// context's errors and redis.Nil first.
func IsOutage(err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return true
	}
	return redis.IsLoadingError(err) || redis.IsClusterDownError(err) || redis.IsTryAgainError(err) ||
		redis.IsMasterDownError(err) || redis.IsReadOnlyError(err) || redis.IsMaxClientsError(err) ||
		redis.IsOOMError(err)
}

// Translate maps an error of a go-redis call made with ctx onto a store's
// errors: nil as nil; ctx's own error, or a cancelled or timed-out call,
// as it is; a reply of a healthy server (a script fault, WRONGTYPE) as a
// plain error prefixed with pkg; anything else (IsOutage) as unavailable,
// wrapping both so errors.Is finds the store's sentinel.
func Translate(ctx context.Context, err error, pkg string, unavailable error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case !IsOutage(err):
		return fmt.Errorf("%s: %w", pkg, err)
	}
	return fmt.Errorf("%w: %w", unavailable, err)
}

var tagEscaper = strings.NewReplacer("%", "%25", "}", "%7D")

// HashTag is s as a Redis Cluster hash tag, braces included: '%' and '}'
// escaped as %25 and %7D (a '}' would end the tag early; the escape keeps
// distinct strings apart), and "" as "%" (Redis ignores an empty tag).
func HashTag(s string) string {
	switch {
	case s == "":
		s = "%"
	case strings.ContainsAny(s, "%}"):
		s = tagEscaper.Replace(s)
	}
	return "{" + s + "}"
}
