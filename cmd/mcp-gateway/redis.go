package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/pubsub/lease"
	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/sessions/documents"
	"github.com/mcp-gateway/mcp-gateway/sessions/pending"
	"github.com/mcp-gateway/mcp-gateway/sessions/subscriptions"
)

// redisClient builds the client redis_url names. The form decides the kind
// unless redis_mode says it: a master_name query parameter means Sentinel,
// addr parameters mean Cluster, anything else a single server. redis:// and
// rediss:// (TLS) both work in every mode.
func redisClient(cfg *config) (redis.UniversalClient, error) {
	u, err := url.Parse(cfg.RedisURL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, &configError{key: "redis_url", source: "combined", reason: "must be redis://host:port[/db] or rediss://..."}
	}
	mode := cfg.RedisMode
	if mode == "auto" {
		q := u.Query()
		switch {
		case q.Has("master_name"):
			mode = "sentinel"
		case q.Has("addr"):
			mode = "cluster"
		default:
			mode = "standalone"
		}
	}
	password := cfg.RedisPassword
	if cfg.RedisPasswordFile != "" {
		b, err := os.ReadFile(cfg.RedisPasswordFile)
		if err != nil {
			return nil, &configError{key: "redis_password_file", source: "combined", reason: "cannot read the file"}
		}
		password = strings.TrimRight(string(b), "\r\n")
	}
	bad := func(err error) error {
		return &configError{key: "redis_url", source: "combined", reason: fmt.Sprintf("not a valid %s URL: %v", mode, err)}
	}
	switch mode {
	case "cluster":
		o, err := redis.ParseClusterURL(cfg.RedisURL)
		if err != nil {
			return nil, bad(err)
		}
		setAuth(&o.Username, &o.Password, cfg.RedisUsername, password)
		failFast(u.Query(), &o.DialTimeout, &o.DialerRetries, &o.MaxRetries)
		// Every command is bounded by the caller's context (redis_timeout).
		o.ContextTimeoutEnabled = true
		return redis.NewClusterClient(o), nil
	case "sentinel":
		o, err := redis.ParseFailoverURL(cfg.RedisURL)
		if err != nil {
			return nil, bad(err)
		}
		setAuth(&o.Username, &o.Password, cfg.RedisUsername, password)
		failFast(u.Query(), &o.DialTimeout, &o.DialerRetries, &o.MaxRetries)
		// Every command is bounded by the caller's context (redis_timeout).
		o.ContextTimeoutEnabled = true
		return redis.NewFailoverClient(o), nil
	default:
		o, err := redis.ParseURL(cfg.RedisURL)
		if err != nil {
			return nil, bad(err)
		}
		setAuth(&o.Username, &o.Password, cfg.RedisUsername, password)
		failFast(u.Query(), &o.DialTimeout, &o.DialerRetries, &o.MaxRetries)
		// Every command is bounded by the caller's context (redis_timeout).
		o.ContextTimeoutEnabled = true
		return redis.NewClient(o), nil
	}
}

// failFast shortens go-redis's defaults (5 dial attempts, each command
// retried 3 times: seconds per failing request) so that a dead Redis turns
// into a prompt 503. URL query parameters still win.
func failFast(q url.Values, dialTimeout *time.Duration, dialerRetries, maxRetries *int) {
	if !q.Has("dial_timeout") {
		*dialTimeout = time.Second
	}
	if !q.Has("dialer_retries") {
		*dialerRetries = 1
	}
	if !q.Has("max_retries") {
		*maxRetries = 1
	}
}

// setAuth lets redis_username/redis_password(_file) override the URL's
// userinfo, so secrets need not sit in the URL.
func setAuth(user, pass *string, cfgUser, cfgPass string) {
	if cfgUser != "" {
		*user = cfgUser
	}
	if cfgPass != "" {
		*pass = cfgPass
	}
}

// sharedRedis is the Redis client the endpoints share (the type, for
// files that do not import go-redis).
type sharedRedis = redis.UniversalClient

// pingRedis reports whether Redis answers now. Not answering is not
// fatal: the gateway starts unready and recovers when Redis comes back.
func pingRedis(ctx context.Context, c redis.UniversalClient) error {
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		return fmt.Errorf("redis not reachable yet: %w", err)
	}
	return nil
}

// sharedLimits are the limits and session counts every endpoint shares,
// under redis_prefix.
func sharedLimits(c redis.UniversalClient, prefix string) (quota.Gate, quota.SessionCounter) {
	return quota.NewRedisGate(c, prefix+"q:"), quota.NewRedisSessionCounter(c, prefix+"sc:")
}

// sharedStateOn is the shared state of one endpoint on client c, its
// keys and channels under prefix.
func sharedStateOn(c redis.UniversalClient, prefix string, limits sessions.Limits) *sharedState {
	return &sharedState{
		store:   sessions.NewRedis(c, prefix, limits),
		bus:     pubsub.NewRedis(c, prefix),
		subs:    subscriptions.NewRedis(c, prefix+"sub:", subscriptions.Limits{}),
		lease:   lease.NewRedis(c, prefix+"lease:"),
		docs:    documents.NewRedis(c, prefix+"doc:"),
		pending: pending.NewRedis(c, prefix+"pend:"),
	}
}

// sharedState is what replicas share through Redis.
type sharedState struct {
	store   sessions.Store
	bus     pubsub.Bus
	subs    subscriptions.Store
	lease   lease.Lease
	docs    documents.Store
	pending pending.Store
}

// routeRedisLog sends go-redis's own log lines into the gateway's log, at
// most one a second (redisLog).
func routeRedisLog(log *slog.Logger) { redis.SetLogger(&redisLog{log: log}) }
