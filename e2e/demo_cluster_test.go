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

// One command starts Redis, the demo backend, three replicas and a
// round-robin proxy; an SDK client works through the proxy on every
// replica against the one backend; SIGINT stops every process it started
// and removes its directory.
func TestDemoCluster(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not on PATH")
	}
	cmd := exec.Command(gatewayBinary(t), "demo-cluster", "--listen", freeAddr(t), "--replicas", "3")
	// A user's gateway settings must not reach the replicas: this file
	// does not exist, and a replica reading it would exit.
	cmd.Env = append(os.Environ(), "MCPGW_CONFIG=/nonexistent/gateway.yaml", "MCPGW_DEMO=true")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	lw := &lockedWriter{w: &stderr}
	cmd.Stderr = lw
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	logOf := func() string {
		lw.mu.Lock()
		defer lw.mu.Unlock()
		return stderr.String()
	}

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var printed []string
	pidRE := regexp.MustCompile(`\bpid (\d+)\b`)
	var pids []int
	var proxyURL, dir string
	for ready := false; !ready; {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "demo-cluster closed stdout before ready: %q\n%s", printed, logOf())
			printed = append(printed, line)
			if m := pidRE.FindStringSubmatch(line); m != nil {
				pid, _ := strconv.Atoi(m[1])
				pids = append(pids, pid)
			}
			f := strings.Fields(line)
			switch {
			case strings.HasPrefix(line, "proxy "):
				proxyURL = f[1]
			case strings.HasPrefix(line, "redis "):
				_, after, _ := strings.Cut(line, "data and logs in ")
				dir = strings.TrimSuffix(after, ")")
			case strings.HasPrefix(line, "ready"):
				ready = true
			}
		case <-exited:
			t.Fatalf("demo-cluster exited before ready: %v\n%q\n%s", waitErr, printed, logOf())
		case <-time.After(90 * time.Second):
			t.Fatalf("demo-cluster not ready:\n%q\n%s", printed, logOf())
		}
	}
	go func() {
		for range lines { // the stopping line, later
		}
	}()
	require.Len(t, pids, 4, "redis and three replicas, each with its pid: %q", printed)
	require.NotEmpty(t, proxyURL, "%q", printed)
	require.DirExists(t, dir)
	t.Logf("demo-cluster printed:\n%s", strings.Join(printed, "\n"))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rec := &replicaRecorder{next: &http.Transport{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-demo-cluster", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: proxyURL, HTTPClient: &http.Client{Transport: rec}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	require.NoError(t, err, "%s", logOf())
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

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("demo-cluster did not stop after SIGINT:\n%s", logOf())
	}
	require.NoError(t, waitErr, "exit status 0 after SIGINT:\n%s", logOf())
	for _, pid := range pids {
		// Its own children are reaped by demo-cluster, so a pid that
		// still answers signal 0 is a process left running.
		err := syscall.Kill(pid, 0)
		require.True(t, errors.Is(err, syscall.ESRCH), "process %d is gone (signal 0: %v)", pid, err)
	}
	require.NoDirExists(t, dir, "the temporary directory is removed")
}
