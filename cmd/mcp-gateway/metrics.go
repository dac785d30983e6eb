package main

import "github.com/prometheus/client_golang/prometheus"

// Reload outcomes (mcpgw_document_reloads_total).
const (
	reloadApplied       = "applied"        // a new version is served
	reloadReadFailed    = "read_failed"    // the source could not be read
	reloadInvalid       = "invalid"        // the new document does not load
	reloadPublishFailed = "publish_failed" // the store refused it
	reloadStoreError    = "store_error"    // the store's version could not be read
)

// reloadMetrics are the reloader's collectors; a nil *reloadMetrics
// counts nothing.
type reloadMetrics struct {
	reloads map[string]prometheus.Counter
	lease   prometheus.Gauge
}

func newReloadMetrics(reg prometheus.Registerer) *reloadMetrics {
	reloads := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcpgw_document_reloads_total",
		Help: "OpenAPI document reloads by outcome: applied (a new version is served), read_failed, invalid (it does not load, counted once per version; the running version stays), publish_failed, store_error (the published version could not be read from the store).",
	}, []string{"outcome"})
	m := &reloadMetrics{reloads: map[string]prometheus.Counter{}, lease: prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcpgw_reload_lease_held",
		Help: "1 while this replica holds the reload lease (it re-reads the document every openapi_reload_interval for the deployment), else 0.",
	})}
	for _, o := range []string{reloadApplied, reloadReadFailed, reloadInvalid, reloadPublishFailed, reloadStoreError} {
		m.reloads[o] = reloads.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(reloads, m.lease)
	}
	return m
}

func (m *reloadMetrics) reloaded(outcome string) {
	if m != nil {
		m.reloads[outcome].Inc()
	}
}

func (m *reloadMetrics) leaseHeld(held bool) {
	if m == nil {
		return
	}
	if held {
		m.lease.Set(1)
	} else {
		m.lease.Set(0)
	}
}
