package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A SIGHUP reloads the YAML file: filters, limits, prompts and the log
// level change while the session and its open stream stay; an invalid
// file keeps the running configuration; a setting that needs a restart
// is named.
func TestConfigReloadOnSIGHUP(t *testing.T) {
	addr := freeAddr(t)
	file := filepath.Join(t.TempDir(), "gw.yaml")
	write := func(s string) { require.NoError(t, os.WriteFile(file, []byte(s), 0o600)) }
	write("demo: true\nlisten: " + addr + "\nlog_level: info\n")
	p := startGateway(t, "--config", file)
	sid := initialize(t, p.url)

	// The session's GET stream, read in the background.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	events := make(chan pushEvent, 64)
	go func() {
		defer resp.Body.Close()
		_ = readSSE(resp.Body, func(ev pushEvent) bool { events <- ev; return true })
		close(events)
	}()

	tools := func() string {
		resp, body := post(t, p.url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		require.Equal(t, 200, resp.StatusCode, "%s", body)
		return string(body)
	}
	require.Contains(t, tools(), `"deleteNote"`)
	callNotes := func(id string) string {
		_, body := post(t, p.url, sid, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"listNotes","arguments":{"limit":1}}}`)
		return string(body)
	}
	for i := range 3 {
		require.NotContains(t, callNotes(string(rune('3'+i))), `"isError":true`, "no limit yet")
	}

	require.NotContains(t, stderrOf(p), "level=DEBUG", "info: no debug lines")
	// 1. Exclude a tool, limit the session's calls, add a prompt, debug.
	write("demo: true\nlisten: " + addr + "\nlog_level: debug\nexclude: [deleteNote]\ntool_call_rate: 0.01\ntool_call_burst: 1\n" +
		"prompts:\n  - name: summarize\n    messages:\n      - role: user\n        text: Summarize the notes\n")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	require.Eventually(t, func() bool { return strings.Contains(stderrOf(p), "SIGHUP: configuration reloaded") }, 10*time.Second, 10*time.Millisecond, stderrOf(p))
	select {
	case ev, ok := <-events:
		require.True(t, ok, "the stream stays open")
		require.Contains(t, ev.data, "notifications/tools/list_changed")
	case <-time.After(10 * time.Second):
		t.Fatalf("no list_changed on the open stream:\n%s", stderrOf(p))
	}
	require.NotContains(t, tools(), `"deleteNote"`, "the excluded tool is gone, on the same session")
	require.NotContains(t, callNotes("10"), `"isError":true`, "the burst admits one call")
	require.Contains(t, callNotes("11"), "rate limit exceeded", "the lowered rate applies")
	_, body := post(t, p.url, sid, `{"jsonrpc":"2.0","id":12,"method":"prompts/list"}`)
	require.Contains(t, string(body), `"summarize"`)
	require.Eventually(t, func() bool { return strings.Contains(stderrOf(p), "level=DEBUG") }, 10*time.Second, 10*time.Millisecond, "debug lines appear")

	// 2. An invalid file: logged, and the running configuration serves.
	write("demo: true\nlisten: " + addr + "\ntool_call_rate: fast\n")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	require.Eventually(t, func() bool {
		return strings.Contains(stderrOf(p), "SIGHUP: the configuration is invalid; serving the running configuration")
	}, 10*time.Second, 10*time.Millisecond, stderrOf(p))
	require.Contains(t, stderrOf(p), "tool_call_rate")
	require.NotContains(t, tools(), `"deleteNote"`, "the running configuration still serves")

	// 3. A setting that needs a restart is named; the rest applies.
	write("demo: true\nlisten: 127.0.0.1:1\nlog_level: info\n")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	require.Eventually(t, func() bool { return strings.Contains(stderrOf(p), "restart to apply: listen") }, 10*time.Second, 10*time.Millisecond, stderrOf(p))
	require.Eventually(t, func() bool { return strings.Contains(tools(), `"deleteNote"`) }, 10*time.Second, 10*time.Millisecond, "the filter is lifted")
	resp2, _ := post(t, p.url, sid, `{"jsonrpc":"2.0","id":13,"method":"ping"}`)
	require.Equal(t, 200, resp2.StatusCode, "still on the old address, same session")
}
