package gateway

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// metrics are the gateway's Prometheus collectors. They are registered on
// the registry given in Deps (never a global one); with none they still
// count, unexported.
type metrics struct {
	requests   *prometheus.CounterVec   // era, method, outcome
	duration   *prometheus.HistogramVec // era, method
	sessions   prometheus.Counter
	openStream prometheus.Gauge
	// authFailures counts requests refused by authentication (401/400).
	authFailures prometheus.Counter
	// sessionsRefused counts initialize requests over a session cap.
	sessionsRefused *prometheus.CounterVec // scope
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_requests_total",
			Help: "JSON-RPC requests answered, by protocol era, method and outcome (ok, error, cancelled).",
		}, []string{"era", "method", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpgw_request_duration_seconds",
			Help:    "Time to answer a JSON-RPC request, by protocol era and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"era", "method"}),
		sessions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpgw_sessions_created_total",
			Help: "Session-era sessions created by initialize on this replica.",
		}),
		openStream: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpgw_open_streams",
			Help: "Long-lived SSE streams (GET push streams and subscriptions/listen) open on this replica.",
		}),
		authFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpgw_auth_failures_total",
			Help: "Requests refused by authentication: no token, or an invalid one (401, 400).",
		}),
		sessionsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_sessions_refused_total",
			Help: "initialize requests refused because a session cap was reached, by cap (per_client, total).",
		}, []string{"scope"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.sessions, m.openStream, m.authFailures, m.sessionsRefused)
	}
	return m
}

// observe records one answered request of a method the gateway serves.
func (m *metrics) observe(s *Server, r *mcp.Request, outcome string, start time.Time) {
	method := r.Method
	if _, ok := s.lookup(method, r.Era); !ok {
		// Not served in this era: "method not found" is not counted, so
		// that clients cannot grow the label set.
		return
	}
	era := r.Era.Label()
	m.requests.WithLabelValues(era, method, outcome).Inc()
	m.duration.WithLabelValues(era, method).Observe(time.Since(start).Seconds())
}
