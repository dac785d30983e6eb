package main

// Redis command metrics: a go-redis hook on the one client every endpoint
// shares, so its collectors are registered once (on the unwrapped
// registry: with the apis list, the client is no one API's).

import (
	"context"
	"errors"
	"sync"
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

// redisMetrics are the collectors of the hook. A command's series are
// made at its first use, so a replica exports those of the commands it
// sends (a dozen or so), not a histogram for every command it might.
type redisMetrics struct {
	commands map[string]*redisSeries // read-only once made
	duration *prometheus.HistogramVec
	errs     *prometheus.CounterVec
}

// redisSeries are one command label's series, each made at the first
// use that needs it: its error counter at the command's first use (so it
// shows 0 before the first failure), its histogram at the first time it
// is sent on its own (a pipeline's round trip is "pipeline"'s).
type redisSeries struct {
	name              string
	durOnce, errsOnce sync.Once
	duration          prometheus.Observer
	errs              prometheus.Counter
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
	m := &redisMetrics{commands: map[string]*redisSeries{}, duration: duration, errs: errs}
	for _, name := range append(redisCommands, redisPipeline, "other") {
		m.commands[name] = &redisSeries{name: name}
	}
	c.AddHook(m)
}

var _ redis.Hook = (*redisMetrics)(nil)

// series are the series of the command label name ("other" for a name
// not listed); timed: its histogram too.
func (m *redisMetrics) series(name string, timed bool) *redisSeries {
	s := m.commands[name]
	if s == nil {
		s = m.commands["other"]
	}
	s.errsOnce.Do(func() { s.errs = m.errs.WithLabelValues(s.name) })
	if timed {
		s.durOnce.Do(func() { s.duration = m.duration.WithLabelValues(s.name) })
	}
	return s
}

func (m *redisMetrics) DialHook(next redis.DialHook) redis.DialHook { return next }

func (m *redisMetrics) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		s := m.series(cmd.Name(), true)
		s.duration.Observe(time.Since(start).Seconds())
		if failed(s.name, err) {
			s.errs.Inc()
		}
		return err
	}
}

func (m *redisMetrics) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		m.series(redisPipeline, true).duration.Observe(time.Since(start).Seconds())
		for _, cmd := range cmds {
			if s := m.series(cmd.Name(), false); failed(s.name, cmd.Err()) {
				s.errs.Inc()
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
