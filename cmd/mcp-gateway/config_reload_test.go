package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
	running, _, err := loadConfig("mcp-gateway", args, env(nil), io.Discard)
	require.NoError(t, err)
	groups, err := running.endpointGroups()
	require.NoError(t, err)
	var eps []*endpoint
	for _, g := range groups {
		eps = append(eps, &endpoint{group: g})
	}

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
