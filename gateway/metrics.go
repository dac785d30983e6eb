package gateway

// The gateway's Prometheus collectors. They are registered on the registry
// given in Deps (never a global one); with none they still count,
// unexported. Every label set is bounded: methods are the dispatch
// table's (anything else is "other"), tools the document's (anything else
// is "unknown"), outcomes, reasons and kinds closed lists. Label children
// are resolved once per method and per tool, so the request path pays no
// label hashing; a tool's children are resolved at its first call, so a
// large document whose tools are never called adds no series.

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// latencyBuckets suit answers that range from a cached list to a slow
// backend report.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// toolBuckets are the per-tool histograms' buckets: fewer, as every tool
// called has two such histograms (a document of a thousand operations is
// tens of thousands of series). A call is at least a backend round trip,
// and at most its timeout (30s by default).
var toolBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Request outcomes (mcpgw_requests_total).
const (
	reqOK = iota
	reqError
	reqCancelled
	reqOutcomes
)

var requestOutcomes = [reqOutcomes]string{"ok", "error", "cancelled"}

// otherMethod is the method label of requests for methods the gateway does
// not serve (in the request's era): clients cannot grow the label set.
const otherMethod = "other"

// unknownTool is the tool label of a call naming no tool of the document.
const unknownTool = "unknown"

// Tool call outcomes (mcpgw_tool_calls_total): the audit record's outcome
// (callOutcome), with its denials split by reason where an operator
// alerts on them separately.
const (
	callOK = iota
	callToolError
	callRateLimited
	callQuotaExceeded
	callQuotaUnavailable
	callBusy
	callDenied
	callCancelled
	callInputRequired
	callError
	callOutcomes
)

var callOutcomeNames = [callOutcomes]string{"ok", "tool_error", "rate_limited", "quota_exceeded", "quota_unavailable", "busy", "denied", "cancelled", "input_required", "error"}

// Backend status classes (mcpgw_backend_responses_total); "error" is no
// usable answer: a transport failure or the operation's timeout.
const (
	class2xx = iota
	class3xx
	class4xx
	class5xx
	classError
	classes
)

var classNames = [classes]string{"2xx", "3xx", "4xx", "5xx", "error"}

func statusClass(status int) int {
	switch {
	case status >= 200 && status < 300:
		return class2xx
	case status >= 300 && status < 400:
		return class3xx
	case status >= 400 && status < 500:
		return class4xx
	case status >= 500 && status < 600:
		return class5xx
	}
	return classError
}

// Authentication failure reasons (mcpgw_auth_failures_total): the
// verifier's (auth.Reason*), and the two the gateway itself decides.
var authReasons = []string{
	"missing_token", "malformed_request", "malformed_token", "invalid_signature", "wrong_issuer",
	"wrong_audience", "expired", "not_yet_valid", "missing_claim", "unverifiable", "invalid_token",
	reasonForbiddenSession, reasonInsufficientScope, "other",
}

const (
	reasonForbiddenSession  = audit.ReasonForbiddenSession
	reasonInsufficientScope = audit.ReasonInsufficientScope
)

// Notification kinds (mcpgw_notifications_sent_total): the methods the
// gateway sends; anything else is "other".
var notificationKinds = []string{
	"notifications/message", "notifications/progress", "notifications/cancelled",
	"notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed",
	"notifications/resources/updated", "notifications/subscriptions/acknowledged", "other",
}

// metrics are the gateway's collectors.
type metrics struct {
	requests   *prometheus.CounterVec   // era, method, outcome
	duration   *prometheus.HistogramVec // era, method
	sessions   prometheus.Counter
	openStream prometheus.Gauge
	// authFailures counts requests refused by authentication (401/400),
	// for another principal's session, or for missing scopes.
	authFailures    *prometheus.CounterVec // reason
	authByReason    labelCounters
	sessionsRefused *prometheus.CounterVec // scope

	toolCalls       *prometheus.CounterVec   // tool, outcome
	toolDuration    *prometheus.HistogramVec // tool
	backendDuration *prometheus.HistogramVec // tool
	backendStatus   *prometheus.CounterVec   // tool, class
	// tools are the series of the document's tools, by name; swapped with
	// the catalog (under toolsMu). unknown serves every other name.
	tools   atomic.Pointer[map[string]*toolSeries]
	toolsMu sync.Mutex
	unknown *toolSeries

	activeSessions prometheus.Gauge
	replayed       prometheus.Counter
	notified       labelCounters
	documentInfo   *prometheus.GaugeVec // version
	documentMu     sync.Mutex
	document       string // the version label set, "" for none

	// other is the series of methods not served.
	other *methodSeries
}

func newMetrics(reg prometheus.Registerer, pending func() float64) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_requests_total",
			Help: "JSON-RPC requests answered, by protocol era, method (\"other\": one the gateway does not serve) and outcome (ok, error, cancelled).",
		}, []string{"era", "method", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpgw_request_duration_seconds",
			Help:    "Time to answer a JSON-RPC request, by protocol era and method.",
			Buckets: latencyBuckets,
		}, []string{"era", "method"}),
		sessions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpgw_sessions_created_total",
			Help: "Session-era sessions created by initialize on this replica.",
		}),
		openStream: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpgw_open_streams",
			Help: "Long-lived SSE streams (GET push streams and subscriptions/listen) open on this replica.",
		}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_auth_failures_total",
			Help: "Requests refused for their credentials, by reason: the token verifier's (missing_token, malformed_request, malformed_token, invalid_signature, wrong_issuer, wrong_audience, expired, not_yet_valid, missing_claim, unverifiable, invalid_token, other), forbidden_session (another principal's session), insufficient_scope.",
		}, []string{"reason"}),
		sessionsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_sessions_refused_total",
			Help: "initialize requests refused because a session cap was reached, by cap (per_client, total).",
		}, []string{"scope"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_tool_calls_total",
			Help: "tools/call results by tool (\"unknown\": a name the document lacks) and outcome: ok, tool_error, rate_limited, quota_exceeded, quota_unavailable (the quota store is down: quotas fail closed), busy (no free slot on this replica), denied (scope, policy, declined), cancelled, input_required, error (a JSON-RPC error).",
		}, []string{"tool", "outcome"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpgw_tool_call_duration_seconds",
			Help:    "Time to answer a tools/call, by tool, refusals included.",
			Buckets: toolBuckets,
		}, []string{"tool"}),
		backendDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpgw_backend_request_duration_seconds",
			Help:    "Time the REST backend took for one call of an operation (from sending the request to reading its answer, every round of the call), by tool.",
			Buckets: toolBuckets,
		}, []string{"tool"}),
		backendStatus: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_backend_responses_total",
			Help: "Backend answers to calls of an operation, by tool and status class (2xx, 3xx, 4xx, 5xx; error: no answer, a transport failure or the timeout).",
		}, []string{"tool", "class"}),
		activeSessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpgw_active_sessions",
			Help: "Open session-era sessions in the whole deployment (every replica sharing the store), sampled every 15s.",
		}),
		replayed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpgw_events_replayed_total",
			Help: "SSE events sent again to a client that resumed a stream with Last-Event-ID.",
		}),
		documentInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcpgw_document_info",
			Help: "The OpenAPI document version this replica serves (1 for the active one only): the first 12 hex digits of its SHA-256.",
		}, []string{"version"}),
	}
	notified := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcpgw_notifications_sent_total",
		Help: "Notifications sent to clients by this replica, by method (\"other\" for any the gateway does not name).",
	}, []string{"method"})
	m.notified = newLabelCounters(notified, notificationKinds)
	m.authByReason = newLabelCounters(m.authFailures, authReasons)
	m.other = newMethodSeries(m, otherMethod)
	m.unknown = &toolSeries{m: m, name: unknownTool}
	empty := map[string]*toolSeries{}
	m.tools.Store(&empty)
	cs := []prometheus.Collector{m.requests, m.duration, m.sessions, m.openStream, m.authFailures, m.sessionsRefused,
		m.toolCalls, m.toolDuration, m.backendDuration, m.backendStatus, m.activeSessions, m.replayed, notified, m.documentInfo,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcpgw_pending_client_requests",
			Help: "Server→client requests (elicitation, sampling, roots) of calls on this replica waiting for the client's answer.",
		}, pending)}
	if reg != nil {
		reg.MustRegister(cs...)
	}
	return m
}

// methodSeries are one method's request series, per era, resolved at its
// first request in that era.
type methodSeries struct {
	m    *metrics
	name string
	eras [2]struct {
		once     sync.Once
		outcomes [reqOutcomes]prometheus.Counter
		duration prometheus.Observer
	}
}

func newMethodSeries(m *metrics, name string) *methodSeries { return &methodSeries{m: m, name: name} }

func eraIndex(e mcp.Era) int {
	if e == mcp.EraStateless {
		return 1
	}
	return 0
}

func (ms *methodSeries) observe(era mcp.Era, outcome int, elapsed time.Duration) {
	e := &ms.eras[eraIndex(era)]
	e.once.Do(func() {
		label := era.Label()
		for i, o := range requestOutcomes {
			e.outcomes[i] = ms.m.requests.WithLabelValues(label, ms.name, o)
		}
		e.duration = ms.m.duration.WithLabelValues(label, ms.name)
	})
	e.outcomes[outcome].Inc()
	e.duration.Observe(elapsed.Seconds())
}

// observe records one answered request.
func (m *metrics) observe(s *Server, r *mcp.Request, outcome int, start time.Time) {
	ms := m.other
	if e, ok := s.methods[r.Method]; ok && e.eras&r.Era != 0 {
		ms = e.series
	}
	ms.observe(r.Era, outcome, time.Since(start))
}

// authFailed counts a refusal for reason (anything not listed is "other").
func (m *metrics) authFailed(reason string) { m.authByReason.inc(reason) }

// notify counts one notification sent.
func (m *metrics) notify(method string) { m.notified.inc(method) }

// labelCounters are the children of a one-label counter for a closed set
// of values, resolved once; a value outside the set counts as "other"
// (which the set must hold), so that callers cannot grow the label set.
type labelCounters struct {
	by    map[string]prometheus.Counter
	other prometheus.Counter
}

func newLabelCounters(vec *prometheus.CounterVec, values []string) labelCounters {
	lc := labelCounters{by: make(map[string]prometheus.Counter, len(values))}
	for _, v := range values {
		lc.by[v] = vec.WithLabelValues(v)
	}
	lc.other = lc.by["other"]
	return lc
}

func (lc labelCounters) inc(value string) {
	if c, ok := lc.by[value]; ok {
		c.Inc()
		return
	}
	lc.other.Inc()
}

// toolSeries are one tool's series, resolved at its first call.
type toolSeries struct {
	m    *metrics
	name string
	once sync.Once
	// resolved is set once the children exist (their series are then
	// exported, and deleted when the tool leaves the document).
	resolved atomic.Bool
	// retired is set when the tool left the document: a call that found
	// it in the map before the swap and resolves it after the deletion
	// deletes its series again.
	retired  atomic.Bool
	calls    [callOutcomes]prometheus.Counter
	duration prometheus.Observer
	backend  prometheus.Observer
	status   [classes]prometheus.Counter
}

func (t *toolSeries) resolve() *toolSeries {
	t.once.Do(func() {
		for i, o := range callOutcomeNames {
			t.calls[i] = t.m.toolCalls.WithLabelValues(t.name, o)
		}
		t.duration = t.m.toolDuration.WithLabelValues(t.name)
		t.backend = t.m.backendDuration.WithLabelValues(t.name)
		for i, c := range classNames {
			t.status[i] = t.m.backendStatus.WithLabelValues(t.name, c)
		}
		t.resolved.Store(true)
		if t.retired.Load() {
			t.m.toolsMu.Lock()
			if _, back := (*t.m.tools.Load())[t.name]; !back { // back: the series are the document's again
				t.m.deleteTool(t.name)
			}
			t.m.toolsMu.Unlock()
		}
	})
	return t
}

// tool is the series of the tool named name, "unknown" for a name the
// document lacks.
func (m *metrics) tool(name string) *toolSeries {
	if t, ok := (*m.tools.Load())[name]; ok {
		return t.resolve()
	}
	return m.unknown.resolve()
}

// observeBackend records a backend exchange of the tool: status 0 with an
// elapsed time is an exchange that got no answer.
func (t *toolSeries) observeBackend(status int, elapsed time.Duration) {
	t.backend.Observe(elapsed.Seconds())
	t.status[statusClass(status)].Inc()
}

// metaTools are the gateway's own tools (toolsets and search modes): fixed
// names, labelled as themselves.
var metaTools = []string{toolgen.ToolListToolsets, toolgen.ToolToolsetTools, toolgen.ToolEnableToolset,
	toolgen.ToolSearch, toolgen.ToolDescribe, toolgen.ToolCallOperation}

// setTools makes the tool label set the tools (and resource operations)
// of set: a tool that stays keeps its series; one that left the document
// has its series deleted, so reloads do not grow the label set.
func (m *metrics) setTools(set *toolgen.Set) {
	m.toolsMu.Lock()
	defer m.toolsMu.Unlock()
	old := *m.tools.Load()
	next := make(map[string]*toolSeries, len(old))
	keep := func(name string) {
		if _, ok := next[name]; ok {
			return
		}
		if t, ok := old[name]; ok {
			next[name] = t
			return
		}
		next[name] = &toolSeries{m: m, name: name}
	}
	for _, name := range metaTools {
		keep(name)
	}
	if set != nil {
		for _, t := range set.Tools() {
			keep(t.Name)
		}
		for _, op := range set.Resources() {
			keep(op.Tool.Name)
		}
	}
	m.tools.Store(&next)
	for name, t := range old {
		if _, ok := next[name]; ok {
			continue
		}
		// retired before resolved is read: a resolve racing this either
		// finds the series here or the mark there (toolSeries.resolve).
		t.retired.Store(true)
		if t.resolved.Load() {
			m.deleteTool(name)
		}
	}
}

// deleteTool deletes the series of the tool named name (under toolsMu).
func (m *metrics) deleteTool(name string) {
	labels := prometheus.Labels{"tool": name}
	m.toolCalls.DeletePartialMatch(labels)
	m.toolDuration.DeletePartialMatch(labels)
	m.backendDuration.DeletePartialMatch(labels)
	m.backendStatus.DeletePartialMatch(labels)
}

// setDocument makes version the one mcpgw_document_info reports.
func (m *metrics) setDocument(version string) {
	v := shortVersion(version)
	m.documentMu.Lock()
	defer m.documentMu.Unlock()
	if v == m.document {
		return
	}
	if m.document != "" {
		m.documentInfo.DeleteLabelValues(m.document)
	}
	m.document = v
	if v != "" {
		m.documentInfo.WithLabelValues(v).Set(1)
	}
}

// shortVersion is a catalog version as the logs name it: the content
// hash's first 12 hex digits, without the publication a reload adds.
func shortVersion(version string) string {
	v, _, _ := strings.Cut(version, "@")
	v = strings.TrimPrefix(v, "sha256:")
	if len(v) > 12 {
		v = v[:12]
	}
	return v
}

// sessionCounter counts the deployment's open sessions: a
// quota.SessionCounter's or a memory store's own count.
type sessionCounter interface {
	Count(ctx context.Context) (int, error)
}

// sampleSessionsEvery is how often Run samples the open sessions.
const sampleSessionsEvery = 15 * time.Second

// sampleSessions keeps mcpgw_active_sessions current until ctx ends: one
// count (a ZCOUNT in Redis) per interval, never on scrape.
func (s *Server) sampleSessions(ctx context.Context, every time.Duration) {
	if s.sessionCount == nil {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
		n, err := s.sessionCount.Count(cctx)
		cancel()
		if err == nil {
			s.metrics.activeSessions.Set(float64(n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
