package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// The replicas get the cluster's settings and none of the user's MCPGW_
// ones; everything else (PATH, HOME, OTEL_*) passes.
func TestDemoClusterReplicaEnv(t *testing.T) {
	env := replicaEnv([]string{"PATH=/bin", "MCPGW_CONFIG=/etc/gw.yaml", "HOME=/root", "MCPGW_LISTEN=0.0.0.0:80", "OTEL_SERVICE_NAME=x"},
		map[string]string{"MCPGW_LISTEN": "127.0.0.1:0", "MCPGW_OPENAPI": "/tmp/d/openapi.yaml"})
	require.Equal(t, []string{"PATH=/bin", "HOME=/root", "OTEL_SERVICE_NAME=x", "MCPGW_LISTEN=127.0.0.1:0", "MCPGW_OPENAPI=/tmp/d/openapi.yaml"}, env)
}

func TestDemoClusterRefusesBadInvocations(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		path string // PATH while it runs; "" leaves it
		code int
		says string
	}{
		{"no replicas", []string{"--replicas", "0"}, "", exitConfig, "--replicas must be 1 to 16"},
		{"unknown flag", []string{"--nope"}, "", exitConfig, "flag provided but not defined"},
		{"no redis-server", nil, t.TempDir(), exitFailure, "apt install redis-server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path != "" {
				t.Setenv("PATH", tc.path)
			}
			var out, errOut bytes.Buffer
			code := run(t.Context(), append([]string{"demo-cluster"}, tc.args...), &out, &errOut, env(nil))
			require.Equal(t, tc.code, code, errOut.String())
			require.Contains(t, errOut.String(), tc.says)
		})
	}
}

// A taken proxy address fails before any process starts.
func TestDemoClusterTakenAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not on PATH")
	}
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"demo-cluster", "--listen", ln.Addr().String()}, &out, &errOut, env(nil))
	require.Equal(t, exitFailure, code)
	require.Contains(t, errOut.String(), "cannot listen on "+ln.Addr().String())
	require.Empty(t, out.String(), "nothing started")
}

// The proxy goes round the replicas in turn, names the one that answered,
// and skips one whose process has exited.
func TestDemoClusterProxyRoundRobin(t *testing.T) {
	c := &cluster{}
	for i := range 3 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "backend %d", i+1)
		}))
		t.Cleanup(srv.Close)
		c.replicas = append(c.replicas, &child{name: fmt.Sprint(i + 1), url: srv.URL + "/mcp", exited: make(chan struct{})})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c.serveProxy(ln)
	t.Cleanup(func() { _ = c.proxy.Close() })
	get := func() (header, body string) {
		resp, err := http.Get("http://" + ln.Addr().String() + "/mcp")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.Header.Get(replicaHeader), string(b)
	}
	var seen []string
	for range 6 {
		h, body := get()
		require.Equal(t, "backend "+h, body, "the header names the replica that answered")
		seen = append(seen, h)
	}
	require.Equal(t, []string{"1", "2", "3", "1", "2", "3"}, seen)
	close(c.replicas[1].exited) // replica 2's process is gone
	seen = nil
	for range 4 {
		h, _ := get()
		seen = append(seen, h)
	}
	require.NotContains(t, seen, "2")
}
