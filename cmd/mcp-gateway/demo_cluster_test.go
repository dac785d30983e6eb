package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
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
		// The replicas' own addresses, Redis and config are the cluster's:
		// refused in every spelling the gateway's parser takes, before
		// anything starts (an empty PATH has no redis-server to start).
		{"listen after --", []string{"--", "--listen", "127.0.0.1:9000"}, t.TempDir(), exitConfig, "--listen after -- would break the cluster"},
		{"admin listen after --", []string{"--", "--log-level", "debug", "--admin-listen=127.0.0.1:9001"}, t.TempDir(), exitConfig, "--admin-listen after --"},
		{"single dash", []string{"--", "-redis-url=redis://127.0.0.1:1/0"}, t.TempDir(), exitConfig, "--redis-url after --"},
		{"after a bool flag", []string{"--", "--read-only", "--redis-prefix", "x:"}, t.TempDir(), exitConfig, "--redis-prefix after --"},
		{"config after --", []string{"--", "--config", "/etc/gw.yaml"}, t.TempDir(), exitConfig, "--config after --"},
		{"underscore spelling", []string{"--", "--admin_listen", "127.0.0.1:9001"}, t.TempDir(), exitConfig, "flag provided but not defined: -admin_listen"},
		{"unknown gateway flag", []string{"--", "--nope"}, t.TempDir(), exitConfig, "the gateway flags after --: flag provided but not defined: -nope"},
		{"stray argument", []string{"--", "--log-level", "debug", "extra"}, t.TempDir(), exitConfig, `unexpected argument "extra"`},
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

// Flags the cluster does not set pass, whatever their values look like.
func TestDemoClusterPassesOtherReplicaFlags(t *testing.T) {
	for _, extra := range [][]string{
		nil,
		{"--log-level", "debug", "--session-ttl=2m"},
		{"--read-only", "--tool-prefix", "listen"},
		{"--read-only=false", "-max-batch", "5", "--openapi", "api.yaml", "--upstream", "http://127.0.0.1:1"},
	} {
		require.NoError(t, checkReplicaFlags(extra), "%q", extra)
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

// A redis-server that exits while the cluster runs is said on stderr with
// the end of its log, and ends the run with errRedisExited; one that stop
// ends is not reported.
func TestDemoClusterReportsRedisExit(t *testing.T) {
	redisBin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not on PATH")
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	var out bytes.Buffer
	errOut := &syncBuffer{}
	c := &cluster{stdout: &out, stderr: errOut, redisBin: redisBin, fail: cancel, dir: t.TempDir()}
	require.NoError(t, c.startRedis(ctx))
	pid := c.redis.cmd.Process.Pid
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end after redis-server was killed")
	}
	require.ErrorIs(t, context.Cause(ctx), errRedisExited)
	c.stop()
	said := errOut.String()
	require.Contains(t, said, fmt.Sprintf("redis-server (pid %d) exited (signal: killed)", pid))
	require.Contains(t, said, "redis.log ends:\n")
	require.Contains(t, said, "Ready to accept connections", "the log's tail")

	// Stopped by stop: silent, and the run goes on.
	ctx2, cancel2 := context.WithCancelCause(t.Context())
	defer cancel2(nil)
	errOut2 := &syncBuffer{}
	c2 := &cluster{stdout: &out, stderr: errOut2, redisBin: redisBin, fail: cancel2, dir: t.TempDir()}
	require.NoError(t, c2.startRedis(ctx2))
	c2.stop()
	require.NoError(t, ctx2.Err())
	require.Empty(t, errOut2.String())
}

// A server that took the chosen port before our redis-server bound it
// answers PING too; its process_id tells it apart.
func TestDemoClusterRedisPortTakenByAnother(t *testing.T) {
	redisBin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not on PATH")
	}
	other := redistest.Standalone(t)
	_, port, err := net.SplitHostPort(other.Addr)
	require.NoError(t, err)
	p, err := strconv.Atoi(port)
	require.NoError(t, err)
	c := &cluster{stdout: io.Discard, stderr: io.Discard, redisBin: redisBin, dir: t.TempDir()}
	ch, err := c.runRedis(t.Context(), p)
	require.Nil(t, ch)
	require.ErrorContains(t, err, "another redis-server (process_id ")
	require.ErrorContains(t, err, "answers on "+other.Addr)
}

// The first signal cancels the run and the next hurries the stop; when
// the run ended without a signal, the first one hurries.
func TestDemoClusterSignals(t *testing.T) {
	hurried := func(t *testing.T, parentCause error, signals int) bool {
		parent, cancelParent := context.WithCancelCause(t.Context())
		defer cancelParent(nil)
		ctx, cancel := context.WithCancelCause(parent)
		defer cancel(nil)
		sig, hurry, done := make(chan os.Signal, 2), make(chan struct{}), make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { awaitSignals(ctx, cancel, sig, hurry, done) })
		if parentCause != nil {
			cancelParent(parentCause)
		}
		for range signals {
			sig <- os.Interrupt
		}
		// Once sig is empty, awaitSignals has taken the last signal and
		// acts on it before it looks at done.
		require.Eventually(t, func() bool { return len(sig) == 0 }, 10*time.Second, time.Millisecond)
		close(done)
		wg.Wait()
		require.Error(t, ctx.Err(), "a signal cancels the run")
		select {
		case <-hurry:
			return true
		default:
			return false
		}
	}
	signalCause := errors.New("interrupt signal received") // what main's NotifyContext gives
	t.Run("one signal stops", func(t *testing.T) { require.False(t, hurried(t, nil, 1)) })
	t.Run("two signals hurry", func(t *testing.T) { require.True(t, hurried(t, nil, 2)) })
	t.Run("main saw the same signal", func(t *testing.T) { require.False(t, hurried(t, signalCause, 1)) })
	t.Run("main saw it, then a second", func(t *testing.T) { require.True(t, hurried(t, signalCause, 2)) })
	t.Run("ended by redis, one signal hurries", func(t *testing.T) { require.True(t, hurried(t, errRedisExited, 1)) })
	t.Run("ended by a cancel, one signal hurries", func(t *testing.T) { require.True(t, hurried(t, context.Canceled, 1)) })
}
