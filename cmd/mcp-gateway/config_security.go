package main

// The security settings: authentication, backend credentials from an
// authorization server, limits, quotas, audit and the admin listener.
// They join the options table (and the YAML-only lists) at init, so that
// config.go keeps the transport's and the document's settings together.

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	pathpkg "path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// securityConfig is the part of config this file's options set.
type securityConfig struct {
	PublicURL       string
	AuthIssuer      string
	AuthJWKSURL     string
	AuthAudience    []string
	AuthAlgorithms  []string
	AuthHS256File   string
	AuthClockSkew   time.Duration
	AuthAnonymous   bool
	AdminListen     string
	IdentityHeader  string
	OpenAPIRefAllow []string

	BackendOAuthTokenURL         string
	BackendOAuthClientID         string
	BackendOAuthSecretFile       string
	BackendOAuthScopes           []string
	BackendTokenExchangeURL      string
	BackendTokenExchangeAudience string

	RatePerTool          float64
	BurstPerTool         int // 0: from the rate
	RatePerClient        float64
	BurstPerClient       int // 0: from the rate
	SessionConcurrency   int
	MaxSessionsPerClient int
	MaxSessions          int
	QuotaWebhookURL      string
	QuotaWebhookTimeout  time.Duration

	AuditLog    string
	AuditRedact []string

	ScopeRules []scopeRuleSetting
	ToolLimits []toolLimitSetting
	Quotas     []quotaSetting
}

var securityOptions = []option{
	{key: "public_url", usage: "the gateway's external base URL (scheme://host[:port]); the resource identifier of the protected resource metadata and the default token audience",
		set: urlValue(func(c *config) *string { return &c.PublicURL })},
	{key: "auth_issuer", usage: "OAuth authorization server (issuer URL) whose access tokens the gateway accepts; setting it turns authentication on (needs public_url)",
		set: urlValue(func(c *config) *string { return &c.AuthIssuer })},
	{key: "auth_jwks_url", usage: "JWKS URL of the issuer's signing keys (default: jwks_uri of the issuer's /.well-known/oauth-authorization-server, then /.well-known/openid-configuration)",
		set: urlValue(func(c *config) *string { return &c.AuthJWKSURL })},
	{key: "auth_audience", repeat: true, usage: "accepted token audiences (comma-separated; default: public_url + mount_path, and public_url)",
		set: list(func(c *config) *[]string { return &c.AuthAudience })},
	{key: "auth_algorithms", repeat: true, def: "RS256,RS384,RS512,PS256,PS384,PS512,ES256,ES384,ES512,EdDSA", usage: "accepted token signature algorithms; HS256 only together with auth_hs256_secret_file; none never",
		set: list(func(c *config) *[]string { return &c.AuthAlgorithms })},
	{key: "auth_hs256_secret_file", usage: "file holding a shared HS256 secret (read at start); adds HS256 to auth_algorithms",
		set: str(func(c *config) *string { return &c.AuthHS256File })},
	{key: "auth_clock_skew", def: "30s", usage: "leeway for token exp, nbf and iat",
		set: duration(func(c *config) *time.Duration { return &c.AuthClockSkew })},
	{key: "auth_anonymous", def: "false", isBool: true, usage: "with authentication on, let requests without a token through as anonymous: they see and call only tools that need no scope (a bad token is still refused)",
		set: boolean(func(c *config) *bool { return &c.AuthAnonymous })},
	{key: "admin_listen", usage: "host:port of a second listener for /metrics, /healthz and /readyz; when set they are not served on listen",
		set: optionalHostPort(func(c *config) *string { return &c.AdminListen })},
	{key: "identity_header", usage: "header whose first value identifies an unauthenticated client for limits (e.g. X-Forwarded-For) instead of its address; only behind a proxy that strips it from untrusted traffic",
		set: str(func(c *config) *string { return &c.IdentityHeader })},
	{key: "openapi_ref_allow", tools: true, repeat: true, usage: "further origins (scheme://host[:port]) a document fetched by URL may load external $refs from; its own origin is always allowed",
		set: list(func(c *config) *[]string { return &c.OpenAPIRefAllow })},

	{key: "backend_oauth_token_url", usage: "token endpoint for backend tokens: the OAuth2 client-credentials grant for operations secured by oauth2/openIdConnect (and bearer without backend_bearer_token)",
		set: urlValue(func(c *config) *string { return &c.BackendOAuthTokenURL })},
	{key: "backend_oauth_client_id", usage: "client id at backend_oauth_token_url (and backend_token_exchange_url)",
		set: str(func(c *config) *string { return &c.BackendOAuthClientID })},
	{key: "backend_oauth_client_secret_file", usage: "file holding that client's secret (read at start)",
		set: str(func(c *config) *string { return &c.BackendOAuthSecretFile })},
	{key: "backend_oauth_scopes", repeat: true, usage: "scopes asked for backend tokens (comma-separated)",
		set: list(func(c *config) *[]string { return &c.BackendOAuthScopes })},
	{key: "backend_token_exchange_url", usage: "RFC 8693 token endpoint: each caller's verified token is exchanged for a backend token (cached per subject until it expires); wins over client credentials",
		set: urlValue(func(c *config) *string { return &c.BackendTokenExchangeURL })},
	{key: "backend_token_exchange_audience", usage: "audience asked for exchanged backend tokens",
		set: str(func(c *config) *string { return &c.BackendTokenExchangeAudience })},

	{key: "rate_per_tool", def: "0", usage: "calls per second of one tool per session (stateless: per client); 0 means unlimited",
		set: nonNegativeFloat(func(c *config) *float64 { return &c.RatePerTool })},
	{key: "burst_per_tool", def: "0", usage: "calls of one tool a session may make at once; 0 means rate_per_tool, at least 1",
		set: nonNegativeInt(func(c *config) *int { return &c.BurstPerTool })},
	{key: "rate_per_client", def: "0", usage: "calls per second per client identity (the token's subject, else the address), however many sessions it opens; 0 means unlimited",
		set: nonNegativeFloat(func(c *config) *float64 { return &c.RatePerClient })},
	{key: "burst_per_client", def: "0", usage: "calls a client may make at once; 0 means rate_per_client, at least 1 (so 0.1, 6 a minute, still admits a first call)",
		set: nonNegativeInt(func(c *config) *int { return &c.BurstPerClient })},
	{key: "session_concurrency", def: "0", usage: "tool calls of one session (stateless: one client) running at once across all replicas; 0 means unlimited",
		set: nonNegativeInt(func(c *config) *int { return &c.SessionConcurrency })},
	{key: "max_sessions_per_client", def: "100", usage: "open sessions per client identity; initialize beyond it gets 429 with Retry-After; 0 means no cap",
		set: nonNegativeInt(func(c *config) *int { return &c.MaxSessionsPerClient })},
	{key: "max_sessions", def: "100000", usage: "open sessions of the whole deployment (all replicas); 0 means no cap",
		set: nonNegativeInt(func(c *config) *int { return &c.MaxSessions })},
	{key: "quota_webhook_url", usage: "policy hook asked before each call the limits admit: POST {identity, principal, tool, session}, answer {allowed, message, retryAfterSeconds}; a timeout, error or malformed answer denies",
		set: urlValue(func(c *config) *string { return &c.QuotaWebhookURL })},
	{key: "quota_webhook_timeout", def: "2s", usage: "how long the gateway waits for the policy hook",
		set: positiveDuration(func(c *config) *time.Duration { return &c.QuotaWebhookTimeout })},

	{key: "audit_log", usage: "where the audit log goes, one JSON line per tools/call: stdout, stderr or a file path (appended; mode 0600); empty means off",
		set: str(func(c *config) *string { return &c.AuditLog })},
	{key: "audit_redact", repeat: true, usage: "argument keys whose values the audit log replaces with [REDACTED] (case, - and _ ignored; matched within the key); default: the audit package's list (password, token, secret, authorization, api_key, cookie, …)",
		set: list(func(c *config) *[]string { return &c.AuditRedact })},
}

func init() {
	options = append(options, securityOptions...)
	listOptions = append(listOptions, securityListOptions...)
}

// nonNegativeInt is an integer of 0 or more.
func nonNegativeInt[C any](field func(*C) *int) func(*C, any) error {
	return func(c *C, raw any) error {
		s, err := scalar(raw)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return fmt.Errorf("must be 0 or a positive whole number, got %q", s)
		}
		*field(c) = n
		return nil
	}
}

// burstFor is a configured burst, or the default a rate implies: the
// rate, at least 1.
func burstFor(rate float64, burst int) int {
	if burst > 0 {
		return burst
	}
	return int(max(1, math.Ceil(rate)))
}

// scopeRuleSetting is one scope_rules entry.
type scopeRuleSetting struct {
	Tools  []string
	Scopes []string
}

var scopeRuleFields = []listField[scopeRuleSetting]{
	{key: "tools", required: true, usage: "globs over tool names",
		set: globList(func(o *scopeRuleSetting) *[]string { return &o.Tools })},
	{key: "scopes", required: true, usage: "scopes a caller must hold (all of them)",
		set: list(func(o *scopeRuleSetting) *[]string { return &o.Scopes })},
}

// toolLimitSetting is one tool_limits entry.
type toolLimitSetting struct {
	Tools []string
	Rate  float64
	Burst int
}

var toolLimitFields = []listField[toolLimitSetting]{
	{key: "tools", required: true, usage: "globs over tool names",
		set: globList(func(o *toolLimitSetting) *[]string { return &o.Tools })},
	{key: "rate", required: true, usage: "calls per second of each matching tool per session (stateless: per client)",
		set: nonNegativeFloat(func(o *toolLimitSetting) *float64 { return &o.Rate })},
	{key: "burst", usage: "calls at once (default: the rate, at least 1)",
		set: positiveInt(func(o *toolLimitSetting) *int { return &o.Burst })},
}

// quotaSetting is one quotas entry.
type quotaSetting struct {
	Name   string
	Tools  []string
	Limit  int
	Window time.Duration
	Per    string
}

var quotaFields = []listField[quotaSetting]{
	{key: "name", required: true, usage: "the quota's name (in denials and the audit log)",
		set: str(func(o *quotaSetting) *string { return &o.Name })},
	{key: "tools", required: true, usage: "globs over tool names",
		set: globList(func(o *quotaSetting) *[]string { return &o.Tools })},
	{key: "limit", required: true, usage: "calls allowed per window",
		set: positiveInt(func(o *quotaSetting) *int { return &o.Limit })},
	{key: "window", required: true, usage: "window length; windows are aligned to the Unix epoch in UTC (24h resets at 00:00 UTC)",
		set: positiveDuration(func(o *quotaSetting) *time.Duration { return &o.Window })},
	{key: "per", usage: "client (default), principal or global",
		set: oneOf([]string{"client", "principal", "global"}, func(o *quotaSetting) *string { return &o.Per })},
}

var securityListOptions = []listOption{
	{key: "scope_rules", usage: "scopes required for tools, for documents that declare none: [{tools: [globs], scopes: [..]}]",
		set: func(c *config, raw any) error {
			items, err := decodeList("scope_rules", raw, scopeRuleFields)
			c.ScopeRules = items
			return err
		}},
	{key: "tool_limits", usage: "per-tool rate limits overriding rate_per_tool: [{tools: [globs], rate: N, burst: N}]",
		set: func(c *config, raw any) error {
			items, err := decodeList("tool_limits", raw, toolLimitFields)
			c.ToolLimits = items
			return err
		}},
	{key: "quotas", usage: "durable call quotas counted in the store, fail-closed: [{name, tools: [globs], limit: N, window: 24h, per: client|principal|global}]",
		set: func(c *config, raw any) error {
			items, err := decodeList("quotas", raw, quotaFields)
			if err != nil {
				return err
			}
			seen := map[string]int{}
			for i, q := range items {
				if j, dup := seen[q.Name]; dup {
					return &pathError{path: fmt.Sprintf("quotas[%d].name", i), reason: fmt.Sprintf("%q is already used by quotas[%d]", q.Name, j)}
				}
				seen[q.Name] = i
				if items[i].Per == "" {
					items[i].Per = "client"
				}
			}
			c.Quotas = items
			return nil
		}},
}

// validateSecurity checks what the security settings need of each other.
func (c *config) validateSecurity() error {
	bad := func(key, reason string) error { return &configError{key: key, source: "combined", reason: reason} }
	switch {
	case c.AuthIssuer != "" && c.PublicURL == "":
		return bad("public_url", "required with auth_issuer: it is the resource the tokens are for")
	case c.AuthIssuer == "" && (c.AuthJWKSURL != "" || c.AuthHS256File != "" || len(c.AuthAudience) > 0 || c.AuthAnonymous):
		return bad("auth_issuer", "required by the other auth_ settings (it turns authentication on)")
	case (c.BackendOAuthTokenURL != "" || c.BackendTokenExchangeURL != "") && (c.BackendOAuthClientID == "" || c.BackendOAuthSecretFile == ""):
		return bad("backend_oauth_client_id", "backend_oauth_token_url and backend_token_exchange_url need backend_oauth_client_id and backend_oauth_client_secret_file")
	case c.BackendTokenExchangeURL != "" && c.AuthIssuer == "":
		return bad("backend_token_exchange_url", "exchanges the caller's token, so it needs authentication on (auth_issuer)")
	case c.AuthIssuer != "" && c.AuthHS256File == "" && containsFold(c.AuthAlgorithms, "HS256"):
		return bad("auth_algorithms", "HS256 needs auth_hs256_secret_file")
	case containsFold(c.AuthAlgorithms, "none"):
		return bad("auth_algorithms", `"none" is never accepted`)
	case c.AuthIssuer == "" && len(c.ScopeRules) > 0:
		return bad("scope_rules", "need authentication on (auth_issuer): without tokens there are no scopes to check, and the tools would not be gated")
	case c.IdentityHeader != "" && !httpguts.ValidHeaderFieldName(c.IdentityHeader):
		return bad("identity_header", fmt.Sprintf("%q is not a header name", c.IdentityHeader))
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return bad("public_url", "must be http(s)://host[:port][/path], without a query, fragment or user information")
		}
	}
	for i, o := range c.OpenAPIRefAllow {
		norm, err := openapi.ParseOrigin(o)
		if err != nil {
			return bad("openapi_ref_allow", err.Error())
		}
		c.OpenAPIRefAllow[i] = norm
	}
	return nil
}

// globList is list for globs over tool names: one path.Match refuses, or
// none, is refused here as the gateway refuses it (Policy.Validate), so
// that a reload the loader accepts the gateway takes.
func globList[C any](field func(*C) *[]string) func(*C, any) error {
	parse := list(field)
	return func(c *C, raw any) error {
		if err := parse(c, raw); err != nil {
			return err
		}
		if len(*field(c)) == 0 {
			return errors.New("needs at least one glob")
		}
		for _, g := range *field(c) {
			if _, err := pathpkg.Match(g, ""); err != nil {
				return fmt.Errorf("bad glob %q", g)
			}
		}
		return nil
	}
}

func containsFold(list []string, want string) bool {
	for _, s := range list {
		if strings.EqualFold(s, want) {
			return true
		}
	}
	return false
}

// optionalHostPort is hostPort that also takes "" (not set).
func optionalHostPort[C any](field func(*C) *string) func(*C, any) error {
	parse := hostPort(field)
	return func(c *C, raw any) error {
		if s, err := scalar(raw); err == nil && s == "" {
			*field(c) = ""
			return nil
		}
		return parse(c, raw)
	}
}
