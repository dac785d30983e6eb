package main

// Wiring of the security settings: the token verifier and the protected
// resource metadata, the tools policy (scopes, limits, quotas, webhook),
// the audit log and the startup warnings about exposure.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/mcp-gateway/mcp-gateway/gateway/auth"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// resourceURL is the MCP endpoint's public URL: the resource tokens are
// for.
func resourceURL(cfg *config) string {
	return strings.TrimSuffix(cfg.PublicURL, "/") + cfg.MountPath
}

// metadataURL is the public URL of the protected resource metadata.
func metadataURL(cfg *config) string {
	return strings.TrimSuffix(cfg.PublicURL, "/") + gateway.ResourceMetadataPath + cfg.MountPath
}

// newVerifier builds the token verifier when auth_issuer is set (nil
// otherwise); it fetches the issuer's metadata and keys once now.
func newVerifier(ctx context.Context, cfg *config, log *slog.Logger) (*auth.Verifier, error) {
	if cfg.AuthIssuer == "" {
		return nil, nil
	}
	audiences := cfg.AuthAudience
	if len(audiences) == 0 {
		audiences = []string{resourceURL(cfg), strings.TrimSuffix(cfg.PublicURL, "/")}
	}
	acfg := auth.Config{
		Issuer:              cfg.AuthIssuer,
		JWKSURL:             cfg.AuthJWKSURL,
		Audiences:           audiences,
		Algorithms:          cfg.AuthAlgorithms,
		ClockSkew:           cfg.AuthClockSkew,
		Anonymous:           cfg.AuthAnonymous,
		ResourceMetadataURL: metadataURL(cfg),
		Logger:              log,
	}
	if cfg.AuthHS256File != "" {
		secret, err := readSecretFile(cfg.AuthHS256File)
		if err != nil {
			return nil, &configError{key: "auth_hs256_secret_file", source: "file", reason: err.Error()}
		}
		acfg.HS256Secret = []byte(secret)
		if !containsFold(acfg.Algorithms, "HS256") {
			acfg.Algorithms = append(acfg.Algorithms, "HS256")
		}
	}
	v, err := auth.New(ctx, acfg)
	if err != nil {
		return nil, fmt.Errorf("authentication: %w", err)
	}
	return v, nil
}

// readSecretFile reads a secret from a file, without surrounding space.
func readSecretFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("cannot read: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty", name)
	}
	return s, nil
}

// resourceMetadata serves RFC 9728 metadata: the scopes are those the
// document's OAuth flows declare and those scope_rules require.
func resourceMetadata(cfg *config, docs ...*openapi.Document) http.Handler {
	var scopes []string
	for _, doc := range docs {
		scopes = append(scopes, toolgen.DocumentScopes(doc.T)...)
	}
	for _, r := range cfg.ScopeRules {
		scopes = append(scopes, r.Scopes...)
	}
	slices.Sort(scopes)
	return auth.MetadataHandler(resourceURL(cfg), []string{cfg.AuthIssuer}, slices.Compact(scopes))
}

// policyOf turns the settings into the tools feature's policy; tr gives the
// webhook a client that makes its asks spans of the calls they are for.
func policyOf(cfg *config, tr *tracing) gateway.Policy {
	p := gateway.Policy{
		Authorize:          cfg.AuthIssuer != "",
		SessionConcurrency: cfg.SessionConcurrency,
	}
	if p.Authorize {
		meta := metadataURL(cfg)
		p.Challenge = func(scopes []string, anonymous bool) string {
			if anonymous {
				// No token to step up from: the plain challenge.
				return auth.Challenge(meta)
			}
			return auth.InsufficientScope(scopes, meta)
		}
	}
	if cfg.RatePerTool > 0 {
		p.PerTool = quota.Limit{Rate: cfg.RatePerTool, Burst: burstFor(cfg.RatePerTool, cfg.BurstPerTool)}
	}
	if cfg.RatePerClient > 0 {
		p.PerClient = quota.Limit{Rate: cfg.RatePerClient, Burst: burstFor(cfg.RatePerClient, cfg.BurstPerClient)}
	}
	for _, r := range cfg.ScopeRules {
		p.ScopeRules = append(p.ScopeRules, gateway.ScopeRule{Tools: r.Tools, Scopes: r.Scopes})
	}
	for _, l := range cfg.ToolLimits {
		lim := quota.Limit{}
		if l.Rate > 0 {
			lim = quota.Limit{Rate: l.Rate, Burst: burstFor(l.Rate, l.Burst)}
		}
		p.ToolLimits = append(p.ToolLimits, gateway.ToolLimit{Tools: l.Tools, Limit: lim})
	}
	for _, q := range cfg.Quotas {
		p.Quotas = append(p.Quotas, gateway.QuotaRule{Name: q.Name, Tools: q.Tools, Limit: int64(q.Limit), Window: q.Window, Per: q.Per})
	}
	if cfg.QuotaWebhookURL != "" {
		p.Webhook = &gateway.Webhook{URL: cfg.QuotaWebhookURL, Timeout: cfg.QuotaWebhookTimeout, HashSession: audit.HashSession,
			Client: tr.webhookClient()}
	}
	return p
}

// openAudit opens the audit log (nil when audit_log is empty).
func openAudit(cfg *config, reg prometheus.Registerer, log *slog.Logger) (*audit.Writer, error) {
	if cfg.AuditLog == "" {
		return nil, nil
	}
	replica, _ := os.Hostname()
	w, err := audit.New(audit.Config{Destination: cfg.AuditLog, Redact: cfg.AuditRedact, Replica: replica, Logger: log, Metrics: reg})
	if err != nil {
		return nil, &configError{key: "audit_log", source: "combined", reason: err.Error()}
	}
	return w, nil
}

// warnExposure says loudly what an unauthenticated gateway on a
// non-loopback address lets anyone do, and what identity_header trusts.
func warnExposure(cfg *config, log *slog.Logger) {
	if cfg.AuthIssuer == "" && !gateway.IsLoopbackListen(cfg.Listen) {
		log.Warn("AUTHENTICATION IS OFF on a non-loopback address: anyone who reaches " + cfg.Listen +
			" can call the backend with the gateway's backend credentials; set auth_issuer and public_url (see README, Security)")
	}
	if cfg.AuthAnonymous {
		log.Warn("auth_anonymous is on: requests without a token are served as anonymous (they see only tools that need no scope)")
	}
	if cfg.IdentityHeader != "" {
		log.Warn("identity_header is set: limits trust the first value of " + cfg.IdentityHeader +
			" from unauthenticated callers; the proxy in front must strip it from untrusted traffic, or a client can pick any identity")
	}
}
