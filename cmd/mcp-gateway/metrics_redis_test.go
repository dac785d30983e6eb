package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

// familyRecorder is a Registerer that keeps the names of the families
// registered on it: what /metrics may ever serve, series or not.
type familyRecorder struct{ names []string }

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *familyRecorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil && !slices.Contains(r.names, m[1]) {
			r.names = append(r.names, m[1])
		}
	}
	return nil
}

func (r *familyRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *familyRecorder) Unregister(prometheus.Collector) bool { return true }

// readmeFamilies are the names the README's Metrics table lists.
func readmeFamilies(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Metrics\n")
	require.True(t, ok, "the README has a Metrics section")
	section, _, _ = strings.Cut(section, "\n## ")
	var names []string
	row := regexp.MustCompile("^\\| `(mcpgw_[a-z_]+)` \\|")
	sc := bufio.NewScanner(strings.NewReader(section))
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

// The README lists every family the parts the binary wires register,
// and nothing else: a family added, renamed or dropped without the
// documentation following fails here.
func TestMetricsREADMEListsEveryFamily(t *testing.T) {
	rec := &familyRecorder{}
	w, err := audit.New(audit.Config{Output: io.Discard, Metrics: rec})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	_, err = gateway.New(gateway.Config{}, gateway.Deps{Metrics: rec, Audit: w})
	require.NoError(t, err)
	newReloadMetrics(rec)
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = c.Close() })
	instrumentRedis(c, rec)
	require.ElementsMatch(t, readmeFamilies(t), rec.names)
}

// scrape reads url's /metrics.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

func sumOf(f *dto.MetricFamily) float64 {
	var n float64
	for _, m := range f.GetMetric() {
		switch {
		case m.Counter != nil:
			n += m.Counter.GetValue()
		case m.Gauge != nil:
			n += m.Gauge.GetValue()
		case m.Histogram != nil:
			n += float64(m.Histogram.GetSampleCount())
		}
	}
	return n
}

func valueWith(f *dto.MetricFamily, name, value string) float64 {
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == name && l.GetValue() == value {
				return sumOf(&dto.MetricFamily{Metric: []*dto.Metric{m}})
			}
		}
	}
	return -1
}

// The binary with Redis: its scrape carries the Redis command metrics
// (labelled by command, bounded), the reload lease and reloads, the
// document version, and only families the README documents, named as
// Prometheus would have them.
func TestMetricsOfTheBinaryWithRedis(t *testing.T) {
	rs := redistest.Standalone(t)
	dir := t.TempDir()
	doc := filepath.Join(dir, "api.yaml")
	require.NoError(t, os.WriteFile(doc, []byte(strings.Replace(smallDoc, "%s", "m", 1)), 0o600))
	cfg := "listen: 127.0.0.1:0\nlog_level: error\nredis_url: " + rs.URL + "\nredis_prefix: \"" + redistest.Prefix(t) + "\"\n" +
		"openapi: " + doc + "\nupstream: " + apiBackend(t, "m") + "\nopenapi_reload_interval: 100ms\n" +
		"audit_log: " + filepath.Join(dir, "audit.log") + "\n"
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"--config", writeFile(t, cfg)}, &out, &errOut, env(nil)) }()
	t.Cleanup(func() { cancel(); <-done })
	urls := regexp.MustCompile(`serving \d+ tools at (http://\S+)`)
	var mcpURL string
	require.Eventually(t, func() bool {
		m := urls.FindStringSubmatch(out.String())
		if m != nil {
			mcpURL = m[1]
		}
		return m != nil
	}, 10*time.Second, 20*time.Millisecond, "stderr: %s", errOut.String())
	metricsURL := strings.TrimSuffix(mcpURL, "/mcp") + "/metrics"

	post := func(sid, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"listItems","arguments":{}}}`)

	// A new version of the document: reloaded, and the only one reported.
	first := scrape(t, metricsURL)["mcpgw_document_info"]
	require.Len(t, first.GetMetric(), 1)
	require.NoError(t, os.WriteFile(doc, []byte(strings.Replace(smallDoc, "%s", "m2", 1)), 0o600))
	var families map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		families = scrape(t, metricsURL)
		return valueWith(families["mcpgw_document_reloads_total"], "outcome", "applied") >= 1
	}, 20*time.Second, 50*time.Millisecond, "stderr: %s", errOut.String())
	info := families["mcpgw_document_info"].GetMetric()
	require.Len(t, info, 1)
	require.NotEqual(t, first.GetMetric()[0].GetLabel()[0].GetValue(), info[0].GetLabel()[0].GetValue())
	require.Equal(t, 1.0, sumOf(families["mcpgw_reload_lease_held"]), "one replica: it holds the reload lease")

	redisCmds := families["mcpgw_redis_command_duration_seconds"]
	require.NotNil(t, redisCmds)
	require.Greater(t, sumOf(redisCmds), 0.0)
	for _, m := range redisCmds.GetMetric() {
		cmd := m.GetLabel()[0].GetValue()
		require.True(t, slices.Contains(redisCommands, cmd) || cmd == "other" || cmd == redisPipeline, "command label %q", cmd)
	}
	require.Greater(t, valueWith(redisCmds, "command", "evalsha"), 0.0, "the stores' scripts")
	require.Equal(t, 1.0, valueWith(families["mcpgw_tool_calls_total"], "outcome", "ok"))
	for _, m := range families["mcpgw_redis_errors_total"].GetMetric() {
		require.Zero(t, m.GetCounter().GetValue(), "%v", m)
	}

	documented := readmeFamilies(t)
	var problems []promlint.Problem
	var mine []*dto.MetricFamily
	for name, f := range families {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		require.Contains(t, documented, name, "an undocumented family on /metrics")
		mine = append(mine, f)
	}
	problems, err := promlint.NewWithMetricFamilies(mine).Lint()
	require.NoError(t, err)
	require.Empty(t, problems)

	// Redis goes away: its failures are counted.
	rs.Stop()
	require.Eventually(t, func() bool { return sumOf(scrape(t, metricsURL)["mcpgw_redis_errors_total"]) > 0 },
		20*time.Second, 50*time.Millisecond)
}

// A command's series appear at its first use, not for every command the
// gateway might send: a replica exports what it uses.
func TestRedisSeriesAppearAtFirstUse(t *testing.T) {
	rdb := redistest.Standalone(t).Client(t)
	prefix := redistest.Prefix(t)
	redistest.Cleanup(t, rdb, prefix)
	reg := prometheus.NewRegistry()
	instrumentRedis(rdb, reg)
	series := func() map[string][]string {
		families, err := reg.Gather()
		require.NoError(t, err)
		out := map[string][]string{}
		for _, f := range families {
			for _, m := range f.GetMetric() {
				out[f.GetName()] = append(out[f.GetName()], m.GetLabel()[0].GetValue())
			}
		}
		return out
	}
	require.Empty(t, series(), "nothing sent yet")

	ctx := context.Background()
	require.ErrorIs(t, rdb.Get(ctx, prefix+"missing").Err(), redis.Nil)
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, prefix+"k", "v", time.Minute)
		return nil
	})
	require.NoError(t, err)
	got := series()
	// And the connection's handshake (hello, client).
	timed := got["mcpgw_redis_command_duration_seconds"]
	require.Subset(t, timed, []string{"get", redisPipeline})
	require.NotContains(t, timed, "set", "a pipeline's commands are timed as the pipeline")
	require.Less(t, len(timed), 6, "%v", timed)
	require.Subset(t, got["mcpgw_redis_errors_total"], []string{"get", "set"}, "at 0 from the first use")
}
