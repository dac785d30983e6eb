package main

// Redis command metrics: a go-redis hook on the one client every endpoint
// shares, so its collectors are registered once (on the unwrapped
// registry: with the apis list, the client is no one API's).

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// redisCommands are the command labels: the commands the gateway's stores,
// scripts and go-redis itself (handshake, cluster topology) send. Anything
// else is "other", so the label set stays bounded; keys are never labels.
var redisCommands = []string{
	"eval", "evalsha", "eval_ro", "evalsha_ro", "script",
	"get", "set", "setnx", "del", "unlink", "exists", "expire", "pexpire", "ttl", "pttl", "incr", "incrby", "mget",
	"hget", "hmget", "hset", "hdel", "hgetall", "hexpire",
	"zadd", "zrem", "zcard", "zcount", "zrange", "zrangebyscore", "zremrangebyscore", "zscore",
	"xadd", "xrange", "xrevrange", "xtrim", "xlen", "xinfo", "xdel",
	"sadd", "srem", "smembers",
	"publish", "spublish", "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe",
	"ping", "scan", "time", "multi", "exec", "watch", "unwatch",
	"hello", "auth", "select", "client", "cluster", "info", "command", "readonly", "sentinel",
}

// redisPipeline is the command label of a pipeline's (or transaction's)
// round trip: its commands' errors are counted by their own names.
const redisPipeline = "pipeline"

// redisMetrics are the collectors of the hook, resolved per command once.
type redisMetrics struct {
	duration map[string]prometheus.Observer
	errs     map[string]prometheus.Counter
}

// instrumentRedis adds the command metrics to c, registered on reg.
func instrumentRedis(c redis.UniversalClient, reg prometheus.Registerer) {
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mcpgw_redis_command_duration_seconds",
		Help: "Time of one Redis command (or one pipeline: command=\"pipeline\") as the gateway waited for it, retries included, by command name.",
		// Local round trips are sub-millisecond; a stalled Redis hits
		// redis_timeout (1s by default).
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"command"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcpgw_redis_errors_total",
		Help: "Redis commands that failed (unreachable, timed out, refused; a missing key is not a failure), by command name.",
	}, []string{"command"})
	reg.MustRegister(duration, errs)
	m := &redisMetrics{duration: map[string]prometheus.Observer{}, errs: map[string]prometheus.Counter{}}
	for _, name := range append(redisCommands, redisPipeline, "other") {
		m.duration[name] = duration.WithLabelValues(name)
		m.errs[name] = errs.WithLabelValues(name)
	}
	c.AddHook(m)
}

var _ redis.Hook = (*redisMetrics)(nil)

// label is the command's label: its name if listed, else "other".
func (m *redisMetrics) label(cmd redis.Cmder) string {
	if name := cmd.Name(); m.duration[name] != nil {
		return name
	}
	return "other"
}

func (m *redisMetrics) DialHook(next redis.DialHook) redis.DialHook { return next }

func (m *redisMetrics) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		name := m.label(cmd)
		m.duration[name].Observe(time.Since(start).Seconds())
		if failed(name, err) {
			m.errs[name].Inc()
		}
		return err
	}
}

func (m *redisMetrics) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		m.duration[redisPipeline].Observe(time.Since(start).Seconds())
		for _, cmd := range cmds {
			if name := m.label(cmd); failed(name, cmd.Err()) {
				m.errs[name].Inc()
			}
		}
		return err
	}
}

// failed reports whether err is Redis failing: not a missing key, not a
// transaction that lost its race (it is retried), not a script to load
// first (go-redis sends it), not the caller giving up (its client went
// away), not a newer handshake an older server refuses (go-redis falls
// back).
func failed(command string, err error) bool {
	var reply redis.Error
	switch {
	case err == nil, errors.Is(err, redis.Nil), errors.Is(err, redis.TxFailedErr), errors.Is(err, context.Canceled):
		return false
	case redis.HasErrorPrefix(err, "NOSCRIPT"):
		return false
	case (command == "hello" || command == "client") && errors.As(err, &reply):
		return false
	}
	return true // a timeout is a failure like any other
}
