package tools

// Who may see and call which tool, and how much: scopes, rate limits,
// concurrency, quotas and the policy webhook. Everything a call is
// checked against is compiled once per catalog (compilePolicy), so a call
// looks its tool's rules up by name.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// Policy is who may call what, and how much. The zero Policy checks
// nothing (the CallLimit of Config still applies).
type Policy struct {
	// Authorize turns scope checks on: a tool whose operation needs OAuth
	// scopes (toolgen.Binding.Scopes) or that a ScopeRule names is listed
	// and callable only for a principal holding them. Set it when the
	// gateway authenticates callers.
	Authorize bool
	// ScopeRules add scope requirements, for documents that declare none.
	ScopeRules []ScopeRule
	// Challenge builds the WWW-Authenticate value of a refusal for missing
	// scopes: a 403 step-up, or for an anonymous caller a 401 asking for a
	// token. Nil means `Bearer error="insufficient_scope", scope="…"`
	// (anonymous: `Bearer scope="…"`).
	Challenge func(scopes []string, anonymous bool) string

	// PerTool limits calls of one tool per session (stateless: per client
	// identity). ToolLimits override it for the tools they name.
	PerTool    quota.Limit
	ToolLimits []ToolLimit
	// PerClient limits calls per client identity (mcp.Request.Identity):
	// it holds however many sessions the client cycles through.
	PerClient quota.Limit
	// SessionConcurrency bounds the calls of one session (stateless: one
	// client identity) running at once across all replicas. Zero: none.
	SessionConcurrency int
	// Quotas count calls in fixed windows; they fail closed.
	Quotas []QuotaRule
	// Webhook, when set, is asked before each call the limits admit.
	Webhook *Webhook
}

// ScopeRule requires Scopes (all of them) for the tools whose names match
// one of Tools (path.Match globs).
type ScopeRule struct {
	Tools  []string
	Scopes []string
}

// ToolLimit is a per-tool rate limit for the tools matching Tools.
type ToolLimit struct {
	Tools []string
	Limit quota.Limit
}

// QuotaRule counts the calls of matching tools in fixed windows (aligned
// to the Unix epoch in UTC: a 24h window resets at 00:00 UTC).
type QuotaRule struct {
	Name   string
	Tools  []string
	Limit  int64
	Window time.Duration
	// Per is "client" (the caller identity), "principal" (the
	// authenticated subject; anonymous callers share one count) or
	// "global" (one count for everyone).
	Per string
}

// Quota counting scopes.
const (
	PerClient    = "client"
	PerPrincipal = "principal"
	PerGlobal    = "global"
)

// Validate reports a policy no gateway can enforce, naming the rule.
func (p Policy) Validate() error {
	for i, r := range p.ScopeRules {
		if err := validGlobs(r.Tools); err != nil || len(r.Tools) == 0 || len(r.Scopes) == 0 {
			return fmt.Errorf("scope_rules[%d]: needs tools (globs) and scopes", i)
		}
	}
	for i, l := range p.ToolLimits {
		if err := validGlobs(l.Tools); err != nil || len(l.Tools) == 0 {
			return fmt.Errorf("tool_limits[%d]: needs tools (globs)", i)
		}
	}
	seen := map[string]bool{}
	for i, q := range p.Quotas {
		switch {
		case q.Name == "" || seen[q.Name]:
			return fmt.Errorf("quotas[%d]: needs a unique name", i)
		case len(q.Tools) == 0 || validGlobs(q.Tools) != nil:
			return fmt.Errorf("quotas[%d] (%s): needs tools (globs)", i, q.Name)
		case q.Limit <= 0 || q.Window <= 0:
			return fmt.Errorf("quotas[%d] (%s): limit and window must be positive", i, q.Name)
		case q.Per != PerClient && q.Per != PerPrincipal && q.Per != PerGlobal:
			return fmt.Errorf("quotas[%d] (%s): per must be client, principal or global", i, q.Name)
		}
		seen[q.Name] = true
	}
	return nil
}

func validGlobs(globs []string) error {
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("bad glob %q", g)
		}
	}
	return nil
}

func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// toolPolicy is one tool's compiled rules.
type toolPolicy struct {
	// scopes: one alternative must be granted; nil means none needed.
	scopes  [][]string
	perTool quota.Limit
	quotas  []*QuotaRule
}

// compilePolicy resolves every tool's rules once per catalog.
func compilePolicy(p *Policy, set *toolgen.Set) map[string]*toolPolicy {
	if set == nil {
		return nil
	}
	out := make(map[string]*toolPolicy, set.Len())
	all := set.Tools()
	for _, op := range set.Resources() {
		if !op.IsTool {
			all = append(all, op.Tool) // a resource operation is admitted as a tool is
		}
	}
	for _, t := range all {
		tp := &toolPolicy{perTool: p.PerTool}
		if p.Authorize {
			if t.Binding != nil {
				tp.scopes = t.Binding.Scopes
			}
			for _, r := range p.ScopeRules {
				if matchAny(r.Tools, t.Name) {
					tp.scopes = requireAll(tp.scopes, r.Scopes)
				}
			}
		}
		for _, l := range p.ToolLimits {
			if matchAny(l.Tools, t.Name) {
				tp.perTool = l.Limit
				break
			}
		}
		for i := range p.Quotas {
			if matchAny(p.Quotas[i].Tools, t.Name) {
				tp.quotas = append(tp.quotas, &p.Quotas[i])
			}
		}
		out[t.Name] = tp
	}
	return out
}

// requireAll adds scopes to every alternative (or makes them the one).
func requireAll(alts [][]string, scopes []string) [][]string {
	if len(alts) == 0 {
		return [][]string{append([]string(nil), scopes...)}
	}
	out := make([][]string, len(alts))
	for i, a := range alts {
		out[i] = append(append([]string(nil), a...), scopes...)
	}
	return out
}

// granted reports whether the principal holds one alternative.
func granted(p *mcp.Principal, alts [][]string) bool {
	if len(alts) == 0 {
		return true
	}
	if p == nil {
		// Every alternative names an OAuth scheme (even with no
		// scope): it needs a token.
		return false
	}
	return satisfies(p.Scopes, alts)
}

// insufficientScope is the 403 of a call without the scopes its tool
// needs: its WWW-Authenticate asks the client to step up.
func (f *Feature) insufficientScope(r *mcp.Request, tool string, alts [][]string) error {
	var have []string
	if r.Principal != nil {
		have = r.Principal.Scopes
	}
	scopes := stepUp(have, alts)
	status, anonymous := http.StatusForbidden, r.Principal == nil
	if anonymous {
		// An anonymous caller has no token to step up from: it needs one.
		status = http.StatusUnauthorized
	}
	var challenge string
	switch {
	case f.cfg.Policy.Challenge != nil:
		challenge = f.cfg.Policy.Challenge(scopes, anonymous)
	case anonymous:
		challenge = `Bearer scope="` + strings.Join(scopes, " ") + `"`
	default:
		challenge = `Bearer error="insufficient_scope", scope="` + strings.Join(scopes, " ") + `"`
	}
	return mcp.NewError(mcp.CodeInvalidRequest, "Forbidden: tool %q needs the scopes %s", tool, mcp.Verbatim(strings.Join(scopes, " "))).
		WithStatus(status).WithHeader("WWW-Authenticate", challenge).
		WithData(map[string]any{"kind": "insufficient_scope", "scopes": scopes})
}

// visible is the part of the catalog's tools the principal may see.
func (c *catalog) visible(p *mcp.Principal) []*toolgen.Tool {
	all := c.Tools.Tools()
	if !c.authorize {
		return all
	}
	key := mcp.ScopeKey(p)
	if v, ok := c.views.Load(key); ok {
		return v.([]*toolgen.Tool)
	}
	out := make([]*toolgen.Tool, 0, len(all))
	for _, t := range all {
		if tp := c.policy[t.Name]; tp == nil || granted(p, tp.scopes) {
			out = append(out, t)
		}
	}
	// Scope sets are few; a client inventing many does not grow this.
	if c.viewCount.Load() < maxViews && c.viewCount.Add(1) <= maxViews {
		c.views.Store(key, out)
	}
	return out
}

// maxViews bounds the cached per-scope-set tool lists of one catalog.
const maxViews = 256

// callID is a random id for a concurrency slot.
func callID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// callerKey names the per-session (stateless: per client) counters.
func callerKey(r *mcp.Request) string {
	if r.SessionID != "" {
		return "s:" + r.SessionID
	}
	return "c"
}

// denial is a tool result for a call the limits refused.
type denial struct {
	kind, scope, quota string
	retryAfter         time.Duration
	message            string
}

// reason names the check that refused, as the audit log says it:
// rate_limited, concurrency, quota_exceeded, quota_unavailable or policy.
func (d *denial) reason() string {
	switch {
	case d.scope == "concurrency":
		return "concurrency"
	case d.kind == "policy_denied":
		return "policy"
	case d.kind == "quota_exceeded" && d.scope == quotaStoreDown:
		// The client is told to wait as for a quota; the operator is
		// told the store is down (audit.ReasonQuotaUnavailable).
		return "quota_unavailable"
	}
	return d.kind
}

// retrySeconds is a wait in whole seconds, at least 1.
func retrySeconds(s float64) int { return max(1, int(math.Ceil(s))) }

// info is what a denial tells the client: its kind, when to retry, and
// the scope or quota that refused.
func (d *denial) info() (info map[string]any, secs int) {
	secs = retrySeconds(d.retryAfter.Seconds())
	info = map[string]any{"kind": d.kind, "retryAfterSeconds": secs}
	if d.scope != "" {
		info["scope"] = d.scope
	}
	if d.quota != "" {
		info["quota"] = d.quota
	}
	return info, secs
}

func (d *denial) result(r *mcp.Request) *mcp.CallToolResult {
	info, secs := d.info()
	res := mcp.ErrorResult(d.message)
	res.StructuredContent, _ = mcp.Marshal(info)
	res.ResultMeta = retryAfter(r, secs)
	res.ResultMeta.Meta["kind"] = d.kind
	if d.scope != "" {
		res.ResultMeta.Meta["scope"] = d.scope
	}
	if d.quota != "" {
		res.ResultMeta.Meta["quota"] = d.quota
	}
	return res
}

// quotaStoreDown is the scope of a denial whose quota could not be
// checked.
const quotaStoreDown = "unavailable"

// quotaUnavailable is the denial of a call whose quota cannot be checked:
// quotas fail closed.
func (f *Feature) quotaUnavailable(err error) *denial {
	f.warnLimited("quota store unavailable; refusing the call (quotas fail closed)", err)
	return &denial{kind: "quota_exceeded", scope: quotaStoreDown, retryAfter: 5 * time.Second,
		message: "the gateway cannot check this tool's quota right now (its store is unavailable); retry in 5s"}
}

// admit applies the rate limits, the concurrency bound and the quotas of
// one call: one Gate.Admit for everything keyed under the caller's
// identity (one round trip to Redis), and one more for global quotas. It
// returns the release of the concurrency slot (nil when none was taken),
// or the denial.
func (f *Feature) admit(r *mcp.Request, conf *settings, tool *toolgen.Tool, tp *toolPolicy, timeout time.Duration) (release func(), d *denial) {
	pol := &conf.Policy
	if tp.perTool.Unlimited() && conf.CallLimit.Unlimited() && pol.PerClient.Unlimited() && pol.SessionConcurrency <= 0 && len(tp.quotas) == 0 {
		return nil, nil // nothing to count: no allocation, no round trip
	}
	identity := r.LimitIdentity()
	caller := callerKey(r)
	var adm quota.Admission
	adm.Tag = identity
	if !tp.perTool.Unlimited() {
		adm.Buckets = append(adm.Buckets, quota.Bucket{Key: "t:" + caller + ":" + tool.Name, Limit: tp.perTool, Scope: "per_tool"})
	}
	if !conf.CallLimit.Unlimited() {
		adm.Buckets = append(adm.Buckets, quota.Bucket{Key: caller, Limit: conf.CallLimit, Scope: "per_session"})
	}
	if !pol.PerClient.Unlimited() {
		adm.Buckets = append(adm.Buckets, quota.Bucket{Key: "client", Limit: pol.PerClient, Scope: "per_client"})
	}
	// Quotas counted under another tag than the caller's identity (one
	// count for everyone, or for every anonymous caller) are a second
	// admission: in Redis Cluster their keys live in another slot.
	var other quota.Admission
	for _, q := range tp.quotas {
		// Keys end with the name, so no two kinds or names share one.
		qq := quota.Quota{Name: q.Name, Limit: q.Limit, Window: q.Window}
		switch {
		case q.Per == PerGlobal:
			qq.Key = "q:g:" + q.Name
			other.Quotas = append(other.Quotas, qq)
		case q.Per == PerPrincipal && r.Principal == nil:
			// Anonymous callers share one principal's count.
			qq.Key = "q:a:" + q.Name
			other.Quotas = append(other.Quotas, qq)
		case q.Per == PerPrincipal:
			qq.Key = "q:p:" + q.Name
			adm.Quotas = append(adm.Quotas, qq)
		default:
			qq.Key = "q:c:" + q.Name
			adm.Quotas = append(adm.Quotas, qq)
		}
	}
	// Counts shared by many callers live under one tag of their own.
	other.Tag = "shared"
	var slot *quota.Slot
	if pol.SessionConcurrency > 0 {
		slot = &quota.Slot{Key: "conc:" + caller, Member: callID(), Limit: pol.SessionConcurrency, TTL: timeout + 30*time.Second}
		adm.Slot = slot
	}
	failClosed := len(adm.Quotas) > 0 || len(other.Quotas) > 0
	if len(adm.Buckets) > 0 || len(adm.Quotas) > 0 || adm.Slot != nil {
		v, err := f.gate.Admit(r.Ctx, adm)
		if err != nil {
			// The script may have run before the error (a timeout): give
			// the slot back; releasing one not held does nothing.
			f.releaseSlot(identity, slot)
			if failClosed {
				return nil, f.quotaUnavailable(err)
			}
			f.warnLimited("rate limiter unavailable; letting the call through", err)
			slot = nil
		} else if !v.Allowed {
			return nil, f.deny(v, conf)
		}
	}
	if len(other.Quotas) > 0 {
		v, err := f.gate.Admit(r.Ctx, other)
		if err != nil || !v.Allowed {
			f.releaseSlot(identity, slot)
			if err != nil {
				return nil, f.quotaUnavailable(err)
			}
			return nil, f.deny(v, conf)
		}
	}
	if slot == nil {
		return nil, nil
	}
	return func() { f.releaseSlot(identity, slot) }, nil
}

// releaseSlot frees a concurrency slot before the call answers, so the
// client's next call finds it free; a store that cannot be reached
// within a second leaves it to expire (its TTL is the call's timeout
// plus 30s).
func (f *Feature) releaseSlot(identity string, slot *quota.Slot) {
	if slot == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := f.gate.Release(ctx, identity, *slot); err != nil {
		f.warnLimited("releasing a concurrency slot failed; it frees itself when it expires", err)
	}
}

// deny turns a Gate verdict into the sentence the model reads.
func (f *Feature) deny(v quota.Verdict, conf *settings) *denial {
	wait := max(v.RetryAfter.Round(100*time.Millisecond), 100*time.Millisecond)
	d := &denial{kind: v.Kind, scope: v.Scope, quota: v.Quota, retryAfter: wait}
	switch v.Kind {
	case "quota_exceeded":
		d.message = fmt.Sprintf("quota %q for this tool is used up; it resets in %s", v.Quota, roundWait(wait))
	case "concurrency":
		d.kind, d.scope = "rate_limited", "concurrency"
		d.message = fmt.Sprintf("too many calls of this session are running at once (at most %d); retry in %s when one has finished",
			conf.Policy.SessionConcurrency, roundWait(wait))
	default:
		d.kind = "rate_limited"
		what := map[string]string{"per_tool": "this tool's", "per_session": "this session's", "per_client": "this client's"}[v.Scope]
		if what == "" {
			what = "a"
		}
		d.message = fmt.Sprintf("rate limit exceeded: %s call rate limit is reached; retry in %s", what, roundWait(wait))
	}
	return d
}

func roundWait(d time.Duration) string {
	if d >= time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// warnLimited logs at most once a second per message.
func (f *Feature) warnLimited(msg string, err error) {
	if ok, held := f.logLimit.Allow(msg, time.Now()); ok {
		args := []any{"err", err}
		if held > 0 {
			args = append(args, "suppressed", held)
		}
		f.log.Warn(msg, args...)
	}
}
