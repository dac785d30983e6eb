package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// replicaRecorder remembers which replica answered each tools/call, from
// the header the demo cluster's proxy adds.
type replicaRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (r *replicaRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	isCall := false
	if req.Body != nil && req.Method == http.MethodPost {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		isCall = bytes.Contains(body, []byte(`"tools/call"`))
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := r.next.RoundTrip(req)
	if err == nil && isCall {
		r.mu.Lock()
		r.seen = append(r.seen, resp.Header.Get("X-Demo-Cluster-Replica"))
		r.mu.Unlock()
	}
	return resp, err
}

// demoCluster is a running `mcp-gateway demo-cluster`, once it printed
// ready.
type demoCluster struct {
	*process          // its stderr is demo-cluster's log
	printed  []string // its stdout up to ready
	pids     []int    // redis first, then the replicas
	proxyURL string
	dir      string
}

// log is what demo-cluster has written to stderr so far.
func (dc *demoCluster) log() string { return stderrOf(dc.process) }

// startDemoCluster runs demo-cluster with args and waits for its ready
// line. The proxy listens on a port of its own choosing (127.0.0.1:0):
// its URL is read from what demo-cluster prints.
func startDemoCluster(t *testing.T, env []string, args ...string) *demoCluster {
	t.Helper()
	cmd := exec.Command(gatewayBinary(t), append([]string{"demo-cluster", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	dc := &demoCluster{process: &process{cmd: cmd, stderr: &strings.Builder{}, exited: make(chan struct{})}}
	cmd.Stderr = &lockedWriter{w: dc.stderr}
	require.NoError(t, cmd.Start())
	go func() { dc.waitErr = cmd.Wait(); close(dc.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-dc.exited
	})

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	pidRE := regexp.MustCompile(`\bpid (\d+)\b`)
	for ready := false; !ready; {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "demo-cluster closed stdout before ready: %q\n%s", dc.printed, dc.log())
			dc.printed = append(dc.printed, line)
			if m := pidRE.FindStringSubmatch(line); m != nil {
				pid, _ := strconv.Atoi(m[1])
				dc.pids = append(dc.pids, pid)
			}
			f := strings.Fields(line)
			switch {
			case strings.HasPrefix(line, "proxy "):
				dc.proxyURL = f[1]
			case strings.HasPrefix(line, "redis "):
				_, after, _ := strings.Cut(line, "data and logs in ")
				dc.dir = strings.TrimSuffix(after, ")")
			case strings.HasPrefix(line, "ready"):
				ready = true
			}
		case <-dc.exited:
			t.Fatalf("demo-cluster exited before ready: %v\n%q\n%s", dc.waitErr, dc.printed, dc.log())
		case <-time.After(90 * time.Second):
			t.Fatalf("demo-cluster not ready:\n%q\n%s", dc.printed, dc.log())
		}
	}
	go func() {
		for range lines { // the stopping line, later
		}
	}()
	require.NotEmpty(t, dc.proxyURL, "%q", dc.printed)
	require.NotContains(t, dc.proxyURL, ":0/", "the proxy's real port is printed: %q", dc.printed)
	require.DirExists(t, dc.dir)
	t.Logf("demo-cluster printed:\n%s", strings.Join(dc.printed, "\n"))
	return dc
}

// awaitExit waits for demo-cluster to end and checks that every process
// it started went with it, and its directory.
func (dc *demoCluster) awaitExit(t *testing.T) {
	t.Helper()
	select {
	case <-dc.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("demo-cluster did not stop:\n%s", dc.log())
	}
	for _, pid := range dc.pids {
		// Its own children are reaped by demo-cluster, so a pid that
		// still answers signal 0 is a process left running.
		err := syscall.Kill(pid, 0)
		require.True(t, errors.Is(err, syscall.ESRCH), "process %d is gone (signal 0: %v)", pid, err)
	}
	require.NoDirExists(t, dc.dir, "the temporary directory is removed")
}

// One command starts Redis, the demo backend, three replicas and a
// round-robin proxy; an SDK client works through the proxy on every
// replica against the one backend; SIGINT stops every process it started
// and removes its directory.
func TestDemoCluster(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not on PATH")
	}
	// A user's gateway settings must not reach the replicas: this file
	// does not exist, and a replica reading it would exit.
	dc := startDemoCluster(t, []string{"MCPGW_CONFIG=/nonexistent/gateway.yaml", "MCPGW_DEMO=true"}, "--replicas", "3")
	require.Len(t, dc.pids, 4, "redis and three replicas, each with its pid: %q", dc.printed)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rec := &replicaRecorder{next: &http.Transport{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-demo-cluster", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: dc.proxyURL, HTTPClient: &http.Client{Transport: rec}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	require.NoError(t, err, "%s", dc.log())
	// A note created through one replica is read through the others: they
	// share one backend.
	created, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "createNote", Arguments: map[string]any{"title": "through the proxy", "body": "demo-cluster"}})
	require.NoError(t, err)
	require.False(t, created.IsError, "%+v", created.Content)
	id := created.StructuredContent.(map[string]any)["id"]
	for range 6 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getNote", Arguments: map[string]any{"id": id}})
		require.NoError(t, err)
		require.False(t, res.IsError, "%+v", res.Content)
		require.Equal(t, "through the proxy", res.StructuredContent.(map[string]any)["title"])
	}
	require.NoError(t, cs.Close())
	rec.mu.Lock()
	served := map[string]int{}
	for _, r := range rec.seen {
		served[r]++
	}
	rec.mu.Unlock()
	require.Len(t, served, 3, "the calls landed on every replica: %v", served)
	require.NotContains(t, served, "", "every answer names its replica")

	require.NoError(t, dc.cmd.Process.Signal(syscall.SIGINT))
	dc.awaitExit(t)
	require.NoError(t, dc.waitErr, "exit status 0 after SIGINT:\n%s", dc.log())
}

// A redis-server that dies is not silent: demo-cluster says so with the
// end of Redis's log and stops everything with exit status 1 (without
// Redis every call would get 503).
func TestDemoClusterRedisExit(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not on PATH")
	}
	dc := startDemoCluster(t, nil, "--replicas", "1")
	require.Len(t, dc.pids, 2, "redis and one replica: %q", dc.printed)
	redisPID := dc.pids[0]
	require.NoError(t, syscall.Kill(redisPID, syscall.SIGKILL))
	dc.awaitExit(t)
	var exitErr *exec.ExitError
	require.ErrorAs(t, dc.waitErr, &exitErr, "%s", dc.log())
	require.Equal(t, 1, exitErr.ExitCode(), "%s", dc.log())
	log := dc.log()
	require.Contains(t, log, "mcp-gateway demo-cluster: redis-server (pid "+strconv.Itoa(redisPID)+") exited (signal: killed)")
	require.Contains(t, log, "redis.log ends:\n")
	require.Contains(t, log, "Ready to accept connections", "the end of Redis's log")
}
