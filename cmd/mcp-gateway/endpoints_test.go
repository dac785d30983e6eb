package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe to read while run writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// apiBackend answers every request with its own name and the path.
func apiBackend(t *testing.T, name string) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"api":"` + name + `","path":"` + r.URL.Path + `"}`))
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

const smallDoc = `openapi: 3.0.3
info: {title: %s, version: '1'}
tags: [{name: items}]
paths:
  /items:
    get: {operationId: listItems, tags: [items], responses: {'200': {description: ok}}}
  /items/{id}:
    delete:
      operationId: deleteItem
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {'200': {description: ok}}
`

// Several APIs on one listener: two sharing /mcp (tool_prefix keeps
// their names apart, each called on its own backend), one on /c.
func TestSeveralAPIsOnOneGateway(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n+".yaml"), []byte(strings.Replace(smallDoc, "%s", n, 1)), 0o600))
	}
	cfg := "listen: 127.0.0.1:0\nlog_level: error\napis:\n" +
		"  - {name: a, openapi: " + filepath.Join(dir, "a.yaml") + ", upstream: " + apiBackend(t, "a") + ", tool_prefix: a_}\n" +
		"  - {name: b, openapi: " + filepath.Join(dir, "b.yaml") + ", upstream: " + apiBackend(t, "b") + ", tool_prefix: b_, read_only: true}\n" +
		"  - {name: c, openapi: " + filepath.Join(dir, "c.yaml") + ", upstream: " + apiBackend(t, "c") + ", mount_path: /c}\n"
	file := writeFile(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"--config", file}, &out, &errOut, env(nil)) }()
	t.Cleanup(func() { cancel(); <-done })

	urls := regexp.MustCompile(`serving (\d+) tools at (http://\S+)`)
	var found [][]string
	require.Eventually(t, func() bool {
		found = urls.FindAllStringSubmatch(out.String(), -1)
		return len(found) == 2
	}, 10*time.Second, 20*time.Millisecond, "stdout: %s\nstderr: %s", out.String(), errOut.String())
	require.Equal(t, "3", found[0][1], "a's two tools and b's read-only one")
	shared, own := found[0][2], found[1][2]
	require.True(t, strings.HasSuffix(shared, "/mcp"), shared)
	require.True(t, strings.HasSuffix(own, "/c"), own)

	post := func(url, method, params string) map[string]any {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}` + params + `}}`
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		var m map[string]any
		if strings.Contains(params, `"name":"`) {
			name := regexp.MustCompile(`"name":"([^"]+)"`).FindStringSubmatch(params)[1]
			req.Header.Set("Mcp-Name", name)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		require.NoError(t, json.Unmarshal(raw, &m), "%s", raw)
		return m
	}
	names := func(url string) []string {
		var out []string
		for _, tl := range post(url, "tools/list", "")["result"].(map[string]any)["tools"].([]any) {
			out = append(out, tl.(map[string]any)["name"].(string))
		}
		return out
	}
	require.Equal(t, []string{"a_listItems", "a_deleteItem", "b_listItems"}, names(shared))
	require.Equal(t, []string{"listItems", "deleteItem"}, names(own))
	for tool, want := range map[string]string{"a_listItems": `\"api\":\"a\"`, "b_listItems": `\"api\":\"b\"`} {
		res := post(shared, "tools/call", `,"name":"`+tool+`","arguments":{}`)
		raw, _ := json.Marshal(res)
		require.Contains(t, string(raw), want, "%s runs on its own API's backend", tool)
	}
	res := post(own, "tools/call", `,"name":"a_listItems","arguments":{}`)
	require.Contains(t, res["error"].(map[string]any)["message"], "Unknown tool", "each endpoint serves its own tools")
}

func TestToolsPrintsOneAPI(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n+".yaml"), []byte(strings.Replace(smallDoc, "%s", n, 1)), 0o600))
	}
	file := writeFile(t, "log_level: error\napis:\n"+
		"  - {name: a, openapi: "+filepath.Join(dir, "a.yaml")+", upstream: http://127.0.0.1:9, tool_prefix: a_}\n"+
		"  - {name: b, openapi: "+filepath.Join(dir, "b.yaml")+", upstream: http://127.0.0.1:9, mount_path: /b, read_only: true}\n")
	var out, errOut strings.Builder
	require.Equal(t, exitOK, run(t.Context(), []string{"tools", "--config", file, "--api", "b", "--format", "table"}, &out, &errOut, env(nil)), errOut.String())
	require.Contains(t, out.String(), "listItems")
	require.NotContains(t, out.String(), "deleteItem", "b is read-only")
	require.NotContains(t, out.String(), "a_listItems")

	out.Reset()
	require.Equal(t, exitOK, run(t.Context(), []string{"tools", "--config", file, "--api=a", "--format=json"}, &out, &errOut, env(nil)), errOut.String())
	require.Contains(t, out.String(), `"name": "a_deleteItem"`)

	errOut.Reset()
	require.Equal(t, exitConfig, run(t.Context(), []string{"tools", "--config", file}, &out, &errOut, env(nil)))
	require.Contains(t, errOut.String(), "the configuration serves 2 APIs (a, b); print one with --api NAME")
	errOut.Reset()
	require.Equal(t, exitConfig, run(t.Context(), []string{"tools", "--config", file, "--api", "c"}, &out, &errOut, env(nil)))
	require.Contains(t, errOut.String(), `no API named "c" (the apis list has: a, b)`)
}
