package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
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
// rediss:// (TLS, configured by redisTLS) both work in every mode.
func redisClient(cfg *config) (redis.UniversalClient, error) {
	u, err := url.Parse(cfg.RedisURL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, &configError{key: "redis_url", source: "combined", reason: "must be redis://host:port[/db] or rediss://..."}
	}
	tlsConf, err := redisTLS(cfg, u)
	if err != nil {
		return nil, err
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
		o.TLSConfig = withURLVerify(tlsConf, o.TLSConfig)
		// go-redis re-reads the slot map on MOVED replies and otherwise
		// every minute; a master that died answers nothing, so its slots
		// would go to it for up to that minute after its replica took over.
		o.ClusterStateReloadInterval = clusterStateReload
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
		o.TLSConfig = withURLVerify(tlsConf, o.TLSConfig)
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
		o.TLSConfig = withURLVerify(tlsConf, o.TLSConfig)
		return redis.NewClient(o), nil
	}
}

// redisTLS is the TLS configuration of a rediss:// URL, nil for redis://.
// It asks for TLS 1.2 at least, trusts redis_tls_ca_file (else the system's
// roots) and presents redis_tls_cert_file/redis_tls_key_file when set; the
// files are read once, here. The files mean the operator wants TLS, so with
// a redis:// URL they are an error rather than silently unused, and rather
// than switching TLS on behind a URL that says plain TCP.
//
// When the URL's host is a DNS name, every node's certificate is checked
// against that name: Cluster nodes and a Sentinel's master are announced by
// IP address, which a managed service's certificate (signed for its
// endpoint's name or a wildcard) does not list. When the host is an IP
// address no name is set, so each connection checks the address it dialed
// against the certificate's IP SANs: the master a sentinel names is checked
// at its own address, not the sentinel's.
func redisTLS(cfg *config, u *url.URL) (*tls.Config, error) {
	files := []struct{ key, file string }{
		{"redis_tls_ca_file", cfg.RedisTLSCAFile},
		{"redis_tls_cert_file", cfg.RedisTLSCertFile},
		{"redis_tls_key_file", cfg.RedisTLSKeyFile},
	}
	if u.Scheme != "rediss" {
		for _, f := range files {
			if f.file != "" {
				return nil, &configError{key: f.key, source: "combined", reason: "needs a rediss:// redis_url: the TLS files ask for TLS, and redis:// is plain TCP"}
			}
		}
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if host := u.Hostname(); net.ParseIP(host) == nil {
		c.ServerName = host
	}
	read := func(key, file string) ([]byte, error) {
		b, err := os.ReadFile(file)
		if err != nil {
			// The *PathError's inner error says why without repeating
			// anything from the file.
			reason := "cannot read the file"
			if inner := errors.Unwrap(err); inner != nil {
				reason += ": " + inner.Error()
			}
			return nil, &configError{key: key, source: "file", reason: reason}
		}
		return b, nil
	}
	if cfg.RedisTLSCAFile != "" {
		pem, err := read("redis_tls_ca_file", cfg.RedisTLSCAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &configError{key: "redis_tls_ca_file", source: "file", reason: "holds no PEM certificate"}
		}
		c.RootCAs = pool
	}
	switch certFile, keyFile := cfg.RedisTLSCertFile, cfg.RedisTLSKeyFile; {
	case certFile != "" && keyFile == "":
		return nil, &configError{key: "redis_tls_key_file", source: "combined", reason: "required with redis_tls_cert_file"}
	case keyFile != "" && certFile == "":
		return nil, &configError{key: "redis_tls_cert_file", source: "combined", reason: "required with redis_tls_key_file"}
	case certFile != "":
		certPEM, err := read("redis_tls_cert_file", certFile)
		if err != nil {
			return nil, err
		}
		keyPEM, err := read("redis_tls_key_file", keyFile)
		if err != nil {
			return nil, err
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// crypto/tls's reasons name PEM block types and mismatches,
			// never the bytes.
			return nil, &configError{key: "redis_tls_cert_file", source: "file", reason: "not a certificate matching redis_tls_key_file: " + err.Error()}
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// withURLVerify is ours with the URL's skip_verify=true kept (go-redis
// read it into parsed); nil when the URL is not rediss://.
func withURLVerify(ours, parsed *tls.Config) *tls.Config {
	if ours == nil {
		return nil
	}
	c := ours.Clone()
	c.InsecureSkipVerify = parsed != nil && parsed.InsecureSkipVerify
	return c
}

// clusterStateReload is how often a Cluster client re-reads the slot map
// while it sends commands: one CLUSTER SLOTS a second per replica, and a
// failed-over master's slots are found at its successor within a second.
const clusterStateReload = time.Second

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
