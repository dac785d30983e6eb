package audit

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the writer's collectors, registered on Config.Metrics (never
// a global registry); with none they still count, unexported.
type metrics struct {
	records     *prometheus.CounterVec // outcome
	dropped     prometheus.Counter
	writeErrors prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_audit_records_total",
			Help: "Audit records written to the destination, by call outcome (ok, tool_error, denied, error, cancelled, input_required, other).",
		}, []string{"outcome"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpgw_audit_dropped_total",
			Help: "Audit records lost: the queue was full, the writer was closed, or a write to the destination failed.",
		}),
		writeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpgw_audit_write_errors_total",
			Help: "Failed writes to the audit destination (disk full, closed pipe); the records they held count as dropped.",
		}),
	}
	if reg != nil {
		cs := []prometheus.Collector{m.records, m.dropped, m.writeErrors}
		for i, c := range cs {
			if err := reg.Register(c); err != nil {
				for _, done := range cs[:i] {
					reg.Unregister(done)
				}
				return nil, fmt.Errorf("audit: metrics: %w", err)
			}
		}
	}
	return m, nil
}

// outcomes are the record counter's label values; anything else is
// counted as "other", so that callers cannot grow the label set.
var outcomes = [...]string{OutcomeOK, OutcomeToolError, OutcomeDenied, OutcomeError, OutcomeCancelled, OutcomeInputRequired, "other"}

// outcomeIndex is the index of o in outcomes.
func outcomeIndex(o string) int {
	for i, v := range outcomes[:len(outcomes)-1] {
		if v == o {
			return i
		}
	}
	return len(outcomes) - 1
}
