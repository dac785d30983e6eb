package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/internal/demo"
	"github.com/mcp-gateway/mcp-gateway/quota"
)

func TestEveryConfigFieldHasItsKey(t *testing.T) {
	keys := map[string]bool{}
	for _, o := range options {
		keys[o.key] = true
	}
	for _, o := range listOptions {
		keys[o.key] = true
	}
	for _, f := range configFields() {
		require.True(t, keys[f.key], "field %v maps to %q, which no setting has: a reload could not name it", f.index, f.key)
	}
	for _, k := range runtimeKeys {
		require.True(t, keys[k], "runtime key %q is no setting", k)
	}
}

func TestReloadMergesRuntimeSettingsAndNamesTheOthers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "gw.yaml")
	write := func(s string) { require.NoError(t, os.WriteFile(file, []byte(s), 0o600)) }
	write("demo: true\nlisten: 127.0.0.1:8080\nrate_per_client: 5\nlog_level: info\n")
	args := []string{"--config", file}
	getenv := env(map[string]string{"MCPGW_TOOL_CALL_RATE": "3"})
	running, _, err := loadConfig("mcp-gateway", args, getenv, io.Discard)
	require.NoError(t, err)

	write("demo: true\nlisten: 127.0.0.1:9090\nrate_per_client: 1\nlog_level: debug\ntool_call_rate: 9\nexclude: [deleteNote]\nredis_prefix: \"other:\"\n")
	next, _, err := loadConfig("mcp-gateway", args, getenv, io.Discard)
	require.NoError(t, err)
	merged, changed, restart := mergeReload(running, next, "")
	require.ElementsMatch(t, []string{"rate_per_client", "log_level", "exclude"}, changed)
	require.ElementsMatch(t, []string{"listen", "redis_prefix"}, restart)
	require.Equal(t, "127.0.0.1:8080", merged.Listen, "restart-only settings keep their running values")
	require.Equal(t, "mcpgw:", merged.RedisPrefix)
	require.Equal(t, 1.0, merged.RatePerClient)
	require.Equal(t, 3.0, merged.ToolCallRate, "the environment still wins over the file")
	require.Equal(t, []string{"deleteNote"}, merged.Exclude)
}

func TestInvalidReloadKeepsTheRunningConfiguration(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gw.yaml")
	require.NoError(t, os.WriteFile(file, []byte("demo: true\nrate_per_client: 5\n"), 0o600))
	args := []string{"--config", file}
	running, _, err := loadConfig("mcp-gateway", args, env(nil), io.Discard)
	require.NoError(t, err)
	var logs strings.Builder
	level := &slog.LevelVar{}
	cr := &configReloader{args: args, getenv: env(nil), log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level})), level: level, cur: running}

	require.NoError(t, os.WriteFile(file, []byte("demo: true\nrate_per_client: lots\nlog_level: debug\n"), 0o600))
	require.False(t, cr.reload(context.Background()))
	require.Same(t, running, cr.cur, "the running configuration stays")
	require.Equal(t, slog.LevelInfo, level.Level())
	require.Contains(t, logs.String(), "level=ERROR")
	require.Contains(t, logs.String(), "rate_per_client", "the log says what is wrong, as startup would")

	require.NoError(t, os.WriteFile(file, []byte("demo: true\nrate_per_client: 5\nlog_level: debug\n"), 0o600))
	require.True(t, cr.reload(context.Background()))
	require.Equal(t, slog.LevelDebug, level.Level(), "the level changes in place")
}

func TestReloadAppliesEachAPIEntry(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gw.yaml")
	write := func(s string) { require.NoError(t, os.WriteFile(file, []byte(s), 0o600)) }
	write("listen: 127.0.0.1:8080\napis:\n  - {name: a, openapi: a.yaml, mount_path: /a}\n  - {name: b, openapi: b.yaml, mount_path: /b}\n")
	args := []string{"--config", file}
	running, eps := loadWithEndpoints(t, args)

	write("listen: 127.0.0.1:9090\nrate_per_client: 2\napis:\n  - {name: a, openapi: a.yaml, mount_path: /a, exclude: [x]}\n  - {name: b, openapi: other.yaml, mount_path: /b}\n")
	next, _, err := loadConfig("mcp-gateway", args, env(nil), io.Discard)
	require.NoError(t, err)
	p := planReload(running, eps, next)
	require.ElementsMatch(t, []string{"apis[a].exclude", "apis[a].rate_per_client", "apis[b].rate_per_client"}, p.changed)
	require.ElementsMatch(t, []string{"listen", "apis[b].openapi"}, p.restart, "a top-level one is named once")
	require.Equal(t, []string{"x"}, p.groups[0][0].cfg.Exclude)
	require.Equal(t, "b.yaml", p.groups[1][0].cfg.OpenAPI, "the running document location stays")
	require.Equal(t, 2.0, p.groups[1][0].cfg.RatePerClient)

	write("listen: 127.0.0.1:8080\napis:\n  - {name: a, openapi: a.yaml, mount_path: /a}\n")
	next, _, err = loadConfig("mcp-gateway", args, env(nil), io.Discard)
	require.NoError(t, err)
	require.Contains(t, planReload(running, eps, next).restart, "apis", "the list's shape needs a restart")
}

// startTestEndpoints builds the endpoints of the configuration in file,
// as run does, and the reloader of its SIGHUPs.
func startTestEndpoints(t *testing.T, file string) (*configReloader, *strings.Builder) {
	t.Helper()
	args := []string{"--config", file}
	cfg, _, err := loadConfig("mcp-gateway", args, env(nil), io.Discard)
	require.NoError(t, err)
	groups, err := cfg.endpointGroups()
	require.NoError(t, err)
	sh := endpointShared{reg: prometheus.NewRegistry(), several: len(cfg.APIs) > 0, gate: quota.NewMemoryGate(),
		counter: quota.NewMemorySessionCounter(), status: &startStatus{}}
	logs := &strings.Builder{}
	level := &slog.LevelVar{}
	log := slog.New(slog.NewTextHandler(&lockedBuilder{b: logs}, &slog.HandlerOptions{Level: level}))
	var eps []*endpoint
	for i, g := range groups {
		ep, code, err := startEndpoint(context.Background(), g, i == 0, sh, log, io.Discard)
		require.NoError(t, err)
		require.Equal(t, exitOK, code)
		t.Cleanup(ep.close)
		eps = append(eps, ep)
	}
	return &configReloader{args: args, getenv: env(nil), log: log, level: level, cur: cfg, eps: eps}, logs
}

type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func writeDemoDoc(t *testing.T, dir, name string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), demo.OpenAPI(), 0o600))
}

// A configuration the loader takes but one API's gateway refuses (here a
// prompt whose template does not parse) changes nothing: not the other
// API, not the log level, not the running configuration.
func TestReloadRefusedByOneAPIChangesNothing(t *testing.T) {
	dir := t.TempDir()
	writeDemoDoc(t, dir, "a.yaml")
	writeDemoDoc(t, dir, "b.yaml")
	file := filepath.Join(dir, "gw.yaml")
	write := func(s string) { require.NoError(t, os.WriteFile(file, []byte(s), 0o600)) }
	apis := "apis:\n  - {name: a, openapi: " + filepath.Join(dir, "a.yaml") + ", upstream: http://127.0.0.1:1, mount_path: /a%s}\n" +
		"  - name: b\n    openapi: " + filepath.Join(dir, "b.yaml") + "\n    upstream: http://127.0.0.1:1\n    mount_path: /b\n"
	write("log_level: info\n" + fmt.Sprintf(apis, ""))
	cr, logs := startTestEndpoints(t, file)
	running := cr.cur
	type state struct {
		cat *gateway.Catalog
		cfg *config
	}
	before := []state{}
	for _, ep := range cr.eps {
		before = append(before, state{ep.catalog, ep.cfg})
	}

	write("log_level: debug\n" + fmt.Sprintf(apis, ", exclude: [deleteNote]") +
		"    prompts:\n      - name: p\n        messages:\n          - {role: user, text: \"{{\"}\n")
	require.False(t, cr.reload(context.Background()), logs.String())
	require.Equal(t, slog.LevelInfo, cr.level.Level(), "the level stays")
	require.Same(t, running, cr.cur, "the running configuration stays")
	for i, ep := range cr.eps {
		require.Same(t, before[i].cat, ep.catalog, "endpoint %s serves its catalog", ep.name)
		require.Same(t, before[i].cfg, ep.cfg)
		require.Same(t, before[i].cfg, ep.rl.cfg)
	}
	require.Contains(t, logs.String(), "level=ERROR")
	require.Contains(t, logs.String(), "prompt")
	require.NotContains(t, logs.String(), "configuration reloaded")
}

// With apis, a change of log_level alone is one: no catalog is rebuilt.
func TestReloadOfTheLogLevelAloneWithAPIs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gw.yaml")
	write := func(s string) { require.NoError(t, os.WriteFile(file, []byte(s), 0o600)) }
	apis := "apis:\n  - {name: a, openapi: a.yaml, mount_path: /a}\n  - {name: b, openapi: b.yaml, mount_path: /b}\n"
	write("log_level: info\n" + apis)
	args := []string{"--config", file}
	running, eps := loadWithEndpoints(t, args)
	write("log_level: debug\n" + apis)
	next, _, err := loadConfig("mcp-gateway", args, env(nil), io.Discard)
	require.NoError(t, err)
	require.Equal(t, []string{"log_level"}, planReload(running, eps, next).changed)
}

// A document re-read after a configuration reload is built under the
// new configuration: its filters stay.
func TestDocumentReloadAfterConfigReloadKeepsTheNewFilters(t *testing.T) {
	dir := t.TempDir()
	writeDemoDoc(t, dir, "doc.yaml")
	file := filepath.Join(dir, "gw.yaml")
	base := "openapi: " + filepath.Join(dir, "doc.yaml") + "\nupstream: http://127.0.0.1:1\n"
	require.NoError(t, os.WriteFile(file, []byte(base), 0o600))
	cr, logs := startTestEndpoints(t, file)
	ep := cr.eps[0]
	_, ok := ep.catalog.Tools.Lookup("deleteNote")
	require.True(t, ok)

	require.NoError(t, os.WriteFile(file, []byte(base+"exclude: [deleteNote]\n"), 0o600))
	require.True(t, cr.reload(context.Background()), logs.String())
	_, ok = ep.catalog.Tools.Lookup("deleteNote")
	require.False(t, ok, "the reload applied")
	ep.rl.mu.Lock()
	cat, err := ep.rl.build(context.Background(), append(demo.OpenAPI(), "\n# v2\n"...))
	ep.rl.mu.Unlock()
	require.NoError(t, err)
	_, ok = cat.Tools.Lookup("deleteNote")
	require.False(t, ok, "a new version of the document keeps the reloaded filter")
}

// The loader refuses a glob the gateway would: a reload never gets past
// it with one.
func TestBadToolGlobIsAConfigError(t *testing.T) {
	for _, key := range []string{"tool_limits: [{tools: [\"[\"], rate: 1}]", "quotas: [{name: q, tools: [\"[\"], limit: 1, window: 1h}]"} {
		_, _, err := loadConfig("mcp-gateway", []string{"--config", writeFile(t, "demo: true\n"+key+"\n")}, env(nil), io.Discard)
		require.ErrorContains(t, err, `bad glob "["`, key)
	}
}

// loadWithEndpoints loads the configuration of args and the endpoints
// (their API groups only) a start would serve it with.
func loadWithEndpoints(t *testing.T, args []string) (*config, []*endpoint) {
	t.Helper()
	cfg, _, err := loadConfig("mcp-gateway", args, env(nil), io.Discard)
	require.NoError(t, err)
	groups, err := cfg.endpointGroups()
	require.NoError(t, err)
	var eps []*endpoint
	for _, g := range groups {
		eps = append(eps, &endpoint{group: g})
	}
	return cfg, eps
}
