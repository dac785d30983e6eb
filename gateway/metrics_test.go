package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/mcp-gateway/mcp-gateway/gateway/auth"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/tools"
	"github.com/mcp-gateway/mcp-gateway/quota"
)

// gatewayFamilies are the metric families a gateway.Server registers
// (its own, the watcher's and the audit writer's): each must show on a
// scrape once traffic ran, and nothing else may. The README's Metrics
// table lists them with cmd's (cmd/mcp-gateway checks that).
var gatewayFamilies = []string{
	"mcpgw_requests_total",
	"mcpgw_request_duration_seconds",
	"mcpgw_sessions_created_total",
	"mcpgw_sessions_refused_total",
	"mcpgw_active_sessions",
	"mcpgw_open_streams",
	"mcpgw_events_replayed_total",
	"mcpgw_notifications_sent_total",
	"mcpgw_pending_client_requests",
	"mcpgw_auth_failures_total",
	"mcpgw_tool_calls_total",
	"mcpgw_tool_call_duration_seconds",
	"mcpgw_backend_request_duration_seconds",
	"mcpgw_backend_responses_total",
	"mcpgw_document_info",
	"mcpgw_resource_polls_total",
	"mcpgw_resource_updates_total",
	"mcpgw_resource_poll_leases_held",
	"mcpgw_audit_records_total",
	"mcpgw_audit_dropped_total",
	"mcpgw_audit_write_errors_total",
}

// reasonAuth is tokenAuth with the refusals of a real verifier: the
// tokens "expired" and "garbage" get the auth.Failure gateway/auth would
// answer them with.
type reasonAuth struct{ tokenAuth }

func (a reasonAuth) Authenticate(r *http.Request) (*mcp.Principal, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer expired":
		return nil, &auth.Failure{Status: http.StatusUnauthorized, Code: auth.CodeInvalidToken, Reason: auth.ReasonExpired, Description: "the token has expired"}
	case "Bearer garbage":
		return nil, &auth.Failure{Status: http.StatusUnauthorized, Code: auth.CodeInvalidToken, Reason: auth.ReasonMalformedToken, Description: "the token is malformed"}
	}
	return a.tokenAuth.Authenticate(r)
}

// Real traffic through a real server: every family shows, with the label
// values it promises, and nothing undocumented does.
func TestMetricsCoverEveryFamily(t *testing.T) {
	reg := prometheus.NewRegistry()
	var buf syncBuffer
	w, err := audit.New(audit.Config{Output: &buf, Metrics: reg})
	require.NoError(t, err)
	cfg := Config{MaxSessions: 3, SessionSampleInterval: 10 * time.Millisecond, Policy: tools.Policy{
		Authorize:  true,
		ToolLimits: []tools.ToolLimit{{Tools: []string{"getMissing"}, Limit: quota.Limit{Rate: 0.001, Burst: 1}}},
		Quotas:     []tools.QuotaRule{{Name: "broken", Tools: []string{"getBroken"}, Limit: 1, Window: time.Hour, Per: tools.PerGlobal}},
	}}
	g, backend := newStockGateway(t, cfg, Deps{Metrics: reg, Audit: w, Auth: reasonAuth{tokenAuth{anonymous: true}}})
	const v = "2025-11-25"

	sid := g.initialize(t, v)
	call := func(id int, name string) reply {
		return g.sessionCall(t, sid, v, rpc(t, id, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}))
	}
	require.NotEqual(t, true, call(2, "getStock").result(t)["isError"])
	require.Equal(t, true, call(3, "getBroken").result(t)["isError"], "a 500")
	require.Equal(t, true, call(4, "getBroken").result(t)["isError"], "over its quota")
	require.Equal(t, true, call(5, "getMissing").result(t)["isError"], "a 404")
	require.Equal(t, true, call(6, "getMissing").result(t)["isError"], "rate limited")
	require.Equal(t, http.StatusUnauthorized, call(7, "getVault").status, "an anonymous caller needs a token")
	call(8, "no such tool")
	call(9, strings.Repeat("x", 300))
	g.sessionCall(t, sid, v, rpc(t, 10, "no/such/method", nil))
	g.sessionCall(t, sid, v, rpc(t, 11, "also/unknown", nil))

	// Authentication refusals by reason; another principal's session.
	for _, tok := range []string{"expired", "garbage", "bad"} {
		require.Equal(t, http.StatusUnauthorized, g.do(t, exchange{body: rpc(t, 1, "ping", nil), headers: bearer(tok)}).status)
	}
	require.Equal(t, http.StatusForbidden, g.callAs(t, "mallory", sid, rpc(t, 12, "ping", nil)).status)
	// Session caps: three open, the fourth refused.
	g.initialize(t, v)
	g.initialize(t, v)
	r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`})
	require.Equal(t, http.StatusTooManyRequests, r.status)

	// A push stream, resumed: the events it missed are replayed.
	s1 := g.openGET(t, sid, "")
	push(t, g, sid, "one")
	e1 := s1.next(t)
	require.Equal(t, 1.0, testutil.ToFloat64(g.srv.metrics.openStream))
	s1.close()
	push(t, g, sid, "two")
	push(t, g, sid, "three")
	s2 := g.openGET(t, sid, e1.id)
	require.Equal(t, "two", eventText(t, s2.next(t)))
	require.Equal(t, "three", eventText(t, s2.next(t)))

	// A subscription: polled under a lease, its change notified.
	require.Equal(t, map[string]any{}, g.sessionCall(t, sid, v, rpc(t, 13, "resources/subscribe", uriParams(stockURI))).result(t))
	require.Eventually(t, func() bool { return backend.stockGETs() >= 2 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return gaugeValue(t, reg, "mcpgw_resource_poll_leases_held") == 1 }, 10*time.Second, 10*time.Millisecond)
	backend.setLevel(2)
	require.Equal(t, "notifications/resources/updated", s2.nextMessage(t)["method"])

	// The document's version; a server→client request waiting.
	c := *g.srv.currentCatalog()
	c.Version = "sha256:0123456789abcdef0123@1700000000"
	g.srv.SetCatalog(c)
	g.srv.addWaiter(sid, `"mcpgw-x"`)
	require.Equal(t, 1.0, gaugeValue(t, reg, "mcpgw_pending_client_requests"))
	g.srv.dropWaiter(sid, `"mcpgw-x"`)
	require.Eventually(t, func() bool { return gaugeValue(t, reg, "mcpgw_active_sessions") == 3 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return gaugeValue(t, reg, "mcpgw_open_streams") == 1 }, 10*time.Second, 10*time.Millisecond,
		"the first stream closed")
	require.NoError(t, w.Close())

	families, err := reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	require.ElementsMatch(t, gatewayFamilies, names, "the families on a scrape")
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	require.Empty(t, problems, "Prometheus naming")

	value := func(family string, labels ...string) float64 {
		t.Helper()
		return sampleValue(t, families, family, labels...)
	}
	calls := []struct {
		tool, outcome string
		n             float64
	}{
		{"getStock", "ok", 1}, {"getBroken", "tool_error", 1}, {"getBroken", "quota_exceeded", 1},
		{"getMissing", "tool_error", 1}, {"getMissing", "rate_limited", 1}, {"getVault", "denied", 1},
		{"unknown", "error", 2}, {"getStock", "cancelled", 0},
	}
	for _, c := range calls {
		require.Equal(t, c.n, value("mcpgw_tool_calls_total", "tool", c.tool, "outcome", c.outcome), "%s %s", c.tool, c.outcome)
	}
	labelled := labelValues(families, "mcpgw_tool_calls_total", "tool")
	require.ElementsMatch(t, []string{"getStock", "getBroken", "getMissing", "getVault", "unknown"}, labelled,
		"tools are labelled as the document names them; any other name is unknown")
	require.Equal(t, 1.0, sampleValue(t, families, "mcpgw_tool_call_duration_seconds", "tool", "getStock"))
	// Three backend answers (the quota and the rate limit kept two calls
	// from it), and the subscription's reads.
	require.Equal(t, 1.0, sampleValue(t, families, "mcpgw_backend_request_duration_seconds", "tool", "getBroken"))
	require.Equal(t, 1.0, value("mcpgw_backend_responses_total", "tool", "getBroken", "class", "5xx"))
	require.Equal(t, 1.0, value("mcpgw_backend_responses_total", "tool", "getMissing", "class", "4xx"))
	require.Equal(t, 0.0, value("mcpgw_backend_responses_total", "tool", "getVault", "class", "2xx"))
	require.GreaterOrEqual(t, value("mcpgw_backend_responses_total", "tool", "getStock", "class", "2xx"), 2.0, "the call and the subscribe's read")

	require.Equal(t, 2.0, value("mcpgw_requests_total", "era", "session", "method", "other", "outcome", "error"), "unserved methods share one label")
	require.NotContains(t, labelValues(families, "mcpgw_requests_total", "method"), "no/such/method")
	require.Equal(t, 8.0, value("mcpgw_requests_total", "era", "session", "method", "tools/call", "outcome", "error")+
		value("mcpgw_requests_total", "era", "session", "method", "tools/call", "outcome", "ok"))
	require.Equal(t, 1.0, value("mcpgw_auth_failures_total", "reason", "expired"))
	require.Equal(t, 1.0, value("mcpgw_auth_failures_total", "reason", "malformed_token"))
	require.Equal(t, 1.0, value("mcpgw_auth_failures_total", "reason", "other"), "a refusal that names no reason")
	require.Equal(t, 1.0, value("mcpgw_auth_failures_total", "reason", "forbidden_session"))
	require.Equal(t, 1.0, value("mcpgw_auth_failures_total", "reason", "insufficient_scope"))
	require.Equal(t, 3.0, value("mcpgw_sessions_created_total"))
	require.Equal(t, 1.0, value("mcpgw_sessions_refused_total", "scope", "total"))
	require.Equal(t, 2.0, value("mcpgw_events_replayed_total"))
	require.Equal(t, 3.0, value("mcpgw_notifications_sent_total", "method", "notifications/message"))
	require.Equal(t, 1.0, value("mcpgw_notifications_sent_total", "method", "notifications/resources/updated"))
	require.Equal(t, 0.0, value("mcpgw_pending_client_requests"))
	require.Equal(t, 1.0, value("mcpgw_open_streams"))
	require.Equal(t, []string{"0123456789ab"}, labelValues(families, "mcpgw_document_info", "version"), "the active version only")
	require.GreaterOrEqual(t, value("mcpgw_resource_polls_total", "outcome", "changed"), 1.0)
	require.Equal(t, 1.0, value("mcpgw_resource_updates_total"))
	// One record per tools/call, and the subscription's read.
	for outcome, n := range map[string]float64{"ok": 2, "tool_error": 2, "denied": 3, "error": 2} {
		require.Equal(t, n, value("mcpgw_audit_records_total", "outcome", outcome), outcome)
	}
	require.Equal(t, 0.0, value("mcpgw_audit_dropped_total"))
	require.Equal(t, 0.0, value("mcpgw_audit_write_errors_total"))
}

// A tool that leaves the document takes its series with it, and a new
// version replaces the old one in mcpgw_document_info: reloads do not grow
// the label sets.
func TestMetricsFollowTheDocument(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := newTestGatewayWith(t, Config{}, Deps{Metrics: reg})
	sid := g.initialize(t, "2025-06-18")
	g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1}}}`)
	count := func() int { return testutil.CollectAndCount(reg, "mcpgw_tool_calls_total") }
	require.Equal(t, len(callOutcomeNames), count())

	c := *g.srv.currentCatalog()
	c.Version = "sha256:aaaaaaaaaaaaaaaa"
	g.srv.SetCatalog(c)
	require.Equal(t, len(callOutcomeNames), count(), "a tool that stays keeps its series")
	other := stockCatalog(t)
	other.Version = "sha256:bbbbbbbbbbbbbbbb"
	g.srv.SetCatalog(other)
	require.Zero(t, count(), "getNote left the document")
	families, err := reg.Gather()
	require.NoError(t, err)
	require.Equal(t, []string{"bbbbbbbbbbbb"}, labelValues(families, "mcpgw_document_info", "version"))
}

// stockCatalog is a catalog of stockDoc (its backend unreachable).
func stockCatalog(t *testing.T) Catalog {
	t.Helper()
	g := newGatewayFor(t, Config{}, []byte(stockDoc), "http://127.0.0.1:1")
	return *g.srv.currentCatalog()
}

func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	return sampleValue(t, families, name)
}

// sampleValue is the value of the sample of family whose labels include
// the name/value pairs given (a counter's or gauge's; a histogram's
// count).
func sampleValue(t *testing.T, families []*dto.MetricFamily, family string, labels ...string) float64 {
	t.Helper()
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
		t.Fatalf("%s has no sample with %v", family, labels)
	}
	t.Fatalf("no family %s", family)
	return 0
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] }) {
			return false
		}
	}
	return true
}

// labelValues are the distinct values of label in family.
func labelValues(families []*dto.MetricFamily, family, label string) []string {
	var out []string
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && !slices.Contains(out, l.GetValue()) {
					out = append(out, l.GetValue())
				}
			}
		}
	}
	return out
}

// A backend that cannot be reached is an answer of class "error"; a call
// whose arguments are refused sends nothing and is no backend answer.
func TestMetricsCountBackendFailures(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := newGatewayWith(t, Config{}, Deps{Metrics: reg}, []byte(stockDoc), "http://127.0.0.1:1")
	sid := g.initialize(t, "2025-11-25")
	call := func(id int, args map[string]any) {
		res := g.sessionCall(t, sid, "2025-11-25", rpc(t, id, "tools/call", map[string]any{"name": "getStock", "arguments": args})).result(t)
		require.Equal(t, true, res["isError"])
	}
	call(1, map[string]any{})
	call(2, map[string]any{"nope": 1})
	families, err := reg.Gather()
	require.NoError(t, err)
	require.Equal(t, 1.0, sampleValue(t, families, "mcpgw_backend_responses_total", "tool", "getStock", "class", "error"))
	require.Equal(t, 0.0, sampleValue(t, families, "mcpgw_backend_responses_total", "tool", "getStock", "class", "2xx"))
	require.Equal(t, 1.0, sampleValue(t, families, "mcpgw_backend_request_duration_seconds", "tool", "getStock"))
	require.Equal(t, 2.0, sampleValue(t, families, "mcpgw_tool_calls_total", "tool", "getStock", "outcome", "tool_error"))
}

// Every reason the verifier gives has its own label value.
func TestAuthReasonsAreLabels(t *testing.T) {
	for _, r := range []string{auth.ReasonMissingToken, auth.ReasonMalformedRequest, auth.ReasonMalformedToken, auth.ReasonInvalidSignature,
		auth.ReasonWrongIssuer, auth.ReasonWrongAudience, auth.ReasonExpired, auth.ReasonNotYetValid, auth.ReasonMissingClaim,
		auth.ReasonUnverifiable, auth.ReasonInvalidToken} {
		require.Contains(t, authReasons, r)
	}
}

// Calls that wait for the client: the request waiting shows in
// mcpgw_pending_client_requests; a cancelled call and a 2026-07-28
// input_required answer have their own outcomes.
func TestMetricsOfCallsThatNeedInput(t *testing.T) {
	_, base := newInputBackend(t)
	reg := prometheus.NewRegistry()
	g := newGatewayWith(t, Config{}, Deps{Metrics: reg}, []byte(inputDoc), base)
	sid := elicitingSession(t, g)
	c := openCall(t, g.url, sid, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"adopt","arguments":{"pet":"Tom"}}}`)
	require.Equal(t, "elicitation/create", c.next(t)["method"])
	require.Equal(t, 1.0, gaugeValue(t, reg, "mcpgw_pending_client_requests"))
	r := g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`)
	require.Equal(t, http.StatusAccepted, r.status)
	for range c.events {
	}
	require.Eventually(t, func() bool { return gaugeValue(t, reg, "mcpgw_pending_client_requests") == 0 }, 10*time.Second, 10*time.Millisecond)

	require.Equal(t, "input_required", statelessCall(t, g, 1, "deletePet", `{"id":21}`, "", nil).result(t)["resultType"])
	families, err := reg.Gather()
	require.NoError(t, err)
	require.Equal(t, 1.0, sampleValue(t, families, "mcpgw_tool_calls_total", "tool", "adopt", "outcome", "cancelled"))
	require.Equal(t, 1.0, sampleValue(t, families, "mcpgw_tool_calls_total", "tool", "deletePet", "outcome", "input_required"))
}

// Every stream a client resumes with Last-Event-ID counts what it sends
// again: a 2024-11-05 stream and a POST stream, as the GET push stream
// (TestMetricsCoverEveryFamily).
func TestMetricsCountReplaysOnEveryStream(t *testing.T) {
	t.Run("2024-11-05", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		g := newTestGatewayWith(t, Config{LegacySSEGrace: time.Hour}, Deps{Metrics: reg})
		s := g.openLegacy(t, "")
		legacyInit(t, g, s, "2024-11-05")
		require.Equal(t, http.StatusAccepted, g.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":2,"method":"ping"}`).status)
		_, seen := s.response(t, 2)
		require.Zero(t, gaugeValue(t, reg, "mcpgw_events_replayed_total"), "a live stream replays nothing")
		s.close()
		// Answered into the log whether or not the old stream saw it:
		// the resumed one sends it again.
		require.Equal(t, http.StatusAccepted, g.postLegacy(t, s.endpoint, `{"jsonrpc":"2.0","id":3,"method":"ping"}`).status)
		s2 := g.openLegacy(t, seen.id)
		s2.response(t, 3)
		require.Equal(t, 1.0, gaugeValue(t, reg, "mcpgw_events_replayed_total"))
		// What comes after the replay is new.
		require.Equal(t, http.StatusAccepted, g.postLegacy(t, s2.endpoint, `{"jsonrpc":"2.0","id":4,"method":"ping"}`).status)
		s2.response(t, 4)
		require.Equal(t, 1.0, gaugeValue(t, reg, "mcpgw_events_replayed_total"))
	})
	t.Run("POST stream", func(t *testing.T) {
		backend := newGateBackend(t)
		defer backend.open() // before the gateway stops: Run waits for the calls
		backend.open()
		reg := prometheus.NewRegistry()
		g := newGatewayWith(t, Config{}, Deps{Metrics: reg}, []byte(waitDoc), backend.url)
		const v = "2025-06-18"
		sid := g.debugSession(t, v)
		post := g.postStream(t, sid, v, callWait)
		first := post.next(t)
		rest, final := untilResult(t, post)
		post.ended(t)
		require.Zero(t, gaugeValue(t, reg, "mcpgw_events_replayed_total"))
		resumed := g.getStream(t, sid, v, first.id)
		for _, want := range append(rest, final) {
			require.Equal(t, want, resumed.next(t))
		}
		resumed.ended(t)
		require.Equal(t, float64(len(rest)+1), gaugeValue(t, reg, "mcpgw_events_replayed_total"))
	})
}

// downGate is a quota store that cannot be reached.
type downGate struct{}

func (downGate) Admit(context.Context, quota.Admission) (quota.Verdict, error) {
	return quota.Verdict{}, errors.New("dial tcp: connection refused")
}
func (downGate) Release(context.Context, string, quota.Slot) error { return nil }

// A quota store that is down refuses the call (quotas fail closed), told
// to the client as a quota denial to wait out, but to the operator as the
// outage it is: its own outcome in the metrics and reason in the audit
// log, so quota alerts do not fire for it.
func TestQuotaStoreDownIsNotAQuotaExceeded(t *testing.T) {
	reg := prometheus.NewRegistry()
	var buf syncBuffer
	w, err := audit.New(audit.Config{Output: &buf})
	require.NoError(t, err)
	cfg := Config{Policy: tools.Policy{
		Quotas: []tools.QuotaRule{{Name: "daily", Tools: []string{"getStock"}, Limit: 10, Window: time.Hour, Per: tools.PerClient}},
	}}
	g, _ := newStockGateway(t, cfg, Deps{Metrics: reg, Audit: w, Gate: downGate{}})
	const v = "2025-11-25"
	sid := g.initialize(t, v)
	res := g.sessionCall(t, sid, v, rpc(t, 2, "tools/call", map[string]any{"name": "getStock", "arguments": map[string]any{}})).result(t)
	require.Equal(t, true, res["isError"])
	sc := res["structuredContent"].(map[string]any)
	require.Equal(t, "quota_exceeded", sc["kind"], "the client waits it out as a quota")
	require.Equal(t, "unavailable", sc["scope"])
	require.NoError(t, w.Close())

	families, err := reg.Gather()
	require.NoError(t, err)
	require.Equal(t, 1.0, sampleValue(t, families, "mcpgw_tool_calls_total", "tool", "getStock", "outcome", "quota_unavailable"))
	require.Equal(t, 0.0, sampleValue(t, families, "mcpgw_tool_calls_total", "tool", "getStock", "outcome", "quota_exceeded"))
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(buf.String())), &line), buf.String())
	require.Equal(t, "denied", line["outcome"])
	require.Equal(t, audit.ReasonQuotaUnavailable, line["reason"])

	// The same denial as a JSON-RPC error (a resource read, a prompt).
	e := mcp.NewError(mcp.CodeInvalidRequest, "x").WithData(map[string]any{"kind": "quota_exceeded", "scope": "unavailable"})
	outcome, reason := errorOutcome(e)
	require.Equal(t, audit.OutcomeDenied+"/"+audit.ReasonQuotaUnavailable, outcome+"/"+reason)
	outcome, reason = errorOutcome(mcp.NewError(mcp.CodeInvalidRequest, "x").WithData(map[string]any{"kind": "quota_exceeded", "quota": "daily"}))
	require.Equal(t, audit.OutcomeDenied+"/"+audit.ReasonQuotaExceeded, outcome+"/"+reason)
}

// A call that found its tool before a reload swapped it out, and counts
// after the reload deleted the tool's series, does not bring them back
// for good.
func TestMetricsOfARetiredToolDoNotLinger(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := newTestGatewayWith(t, Config{}, Deps{Metrics: reg})
	m := g.srv.metrics
	inFlight := (*m.tools.Load())["getNote"] // the call's lookup, before the swap
	require.NotNil(t, inFlight)
	g.srv.SetCatalog(stockCatalog(t))
	inFlight.resolve().calls[callOK].Inc() // after it
	require.Zero(t, testutil.CollectAndCount(reg, "mcpgw_tool_calls_total"))
	require.Zero(t, testutil.CollectAndCount(reg, "mcpgw_tool_call_duration_seconds"))
}
