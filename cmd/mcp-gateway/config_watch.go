package main

// The settings of resources that change: which GET operations are
// resources, how subscribed ones are watched, and the document reload.

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"os"
	"time"
)

// watchConfig holds the resource and reload settings.
type watchConfig struct {
	ResourceOperations       []string
	SubscriptionPollInterval time.Duration
	SubscriptionLeaseTTL     time.Duration
	WebhookSecretFile        string
	OpenAPIReloadInterval    time.Duration
}

var watchOptions = []option{
	{key: "resource_operations", tools: true, repeat: true, usage: "GET operations served as resources besides those with x-mcp-resource: globs over operationId, tag or path (comma-separated)",
		set: list(func(c *config) *[]string { return &c.ResourceOperations })},
	{key: "subscription_poll_interval", def: "30s", usage: "how often a subscribed resource that can change is polled (conditional GET), by one replica; x-mcp-resource.pollInterval wins",
		set: positiveDuration(func(c *config) *time.Duration { return &c.SubscriptionPollInterval })},
	{key: "subscription_lease_ttl", def: "15s", usage: "how long a replica's claim to poll a subscribed URI lasts unrenewed: a dead replica's polling moves to another within twice this",
		set: positiveDuration(func(c *config) *time.Duration { return &c.SubscriptionLeaseTTL })},
	{key: "webhook_secret_file", usage: "file holding the secret of resource change events (read at start); setting it serves POST /webhooks/resources, signed X-Signature-256: sha256=<hex HMAC-SHA256 of the body>",
		set: str(func(c *config) *string { return &c.WebhookSecretFile })},
	{key: "openapi_reload_interval", def: "0", usage: "how often the OpenAPI document is re-read (conditional GET for a URL, content hash for a file; SIGHUP re-reads at once); 0 means only on SIGHUP",
		set: duration(func(c *config) *time.Duration { return &c.OpenAPIReloadInterval })},
}

func init() { options = append(options, watchOptions...) }

// replicaName names this process among the replicas: the host name and a
// random suffix (two processes may share a host).
func replicaName() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return cmp.Or(host, "replica") + "-" + hex.EncodeToString(b[:])
}

// listTTL is the 2026-07-28 lists' ttlMs hint: 5 minutes, or less when
// the document may be reloaded sooner, so that caches follow the version.
func listTTL(cfg *config) time.Duration {
	ttl := 5 * time.Minute
	if cfg.OpenAPIReloadInterval > 0 {
		ttl = min(ttl, cfg.OpenAPIReloadInterval)
	}
	return ttl
}
