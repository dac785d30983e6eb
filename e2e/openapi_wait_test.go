package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/demo"
)

// A sidecar whose backend is not up yet listens meanwhile (alive, not
// ready, MCP answering 503) and serves once the document can be fetched.
func TestOpenAPIWaitServesOnceTheBackendIsUp(t *testing.T) {
	backendAddr, addr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(gatewayBinary(t), "--openapi", "http://"+backendAddr+"/openapi.yaml", "--upstream", "http://"+backendAddr,
		"--listen", addr, "--openapi-wait", "2m")
	// A pipe of our own, not StdoutPipe: its reader may not be read
	// while Wait runs, and Wait runs in the background here.
	stdout, stdoutW, err := os.Pipe()
	require.NoError(t, err)
	defer stdout.Close()
	cmd.Stdout = stdoutW
	p := &process{cmd: cmd, stderr: &strings.Builder{}, exited: make(chan struct{})}
	cmd.Stderr = &lockedWriter{w: p.stderr}
	require.NoError(t, cmd.Start())
	stdoutW.Close() // the child's copy stays open
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-p.exited })
	serving := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case serving <- sc.Text():
			default:
			}
		}
	}()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	require.Eventually(t, func() bool {
		code, body := get("/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "loading the OpenAPI document (attempt")
	}, 20*time.Second, 20*time.Millisecond, "/readyz says what the gateway waits for")
	code, _ := get("/healthz")
	require.Equal(t, http.StatusOK, code, "alive while waiting")
	_, body := get("/readyz")
	require.NotContains(t, body, backendAddr, "no internal address in /readyz: %s", body)
	resp, err := http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
	require.Contains(t, string(b), `"jsonrpc":"2.0"`)
	require.NotContains(t, string(b), "attempt", "why is for /readyz, not for MCP clients: %s", b)
	code, metrics := get("/metrics")
	require.Equal(t, http.StatusOK, code, "metrics while waiting")
	require.Contains(t, metrics, "process_start_time_seconds")
	// A SIGHUP while waiting is applied once serving (and does not end the process).
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))

	ln, err := net.Listen("tcp", backendAddr)
	require.NoError(t, err)
	backend := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(demo.OpenAPI())
	})}
	go func() { _ = backend.Serve(ln) }()
	defer backend.Close()
	select {
	case line := <-serving:
		require.Contains(t, line, "serving")
	case <-p.exited:
		t.Fatalf("exited:\n%s", stderrOf(p))
	case <-time.After(30 * time.Second):
		t.Fatalf("never served:\n%s", stderrOf(p))
	}
	require.Eventually(t, func() bool { code, _ := get("/readyz"); return code == http.StatusOK }, 10*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return strings.Contains(stderrOf(p), "SIGHUP: configuration reloaded") }, 10*time.Second, 20*time.Millisecond, "%s", stderrOf(p))
	sid := initialize(t, "http://"+addr+"/mcp")
	_, list := post(t, "http://"+addr+"/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Contains(t, string(list), `"listNotes"`)
}

func TestOpenAPIWaitGivesUpWithTheLastError(t *testing.T) {
	out, err := exec.Command(gatewayBinary(t), "--openapi", "http://"+freeAddr(t)+"/openapi.yaml", "--listen", freeAddr(t), "--openapi-wait", "1s").CombinedOutput()
	requireExitCode(t, err, 1, out)
	require.Contains(t, string(out), "connection refused")
	require.Contains(t, string(out), "openapi_wait")
}

func TestOpenAPIWaitEndsOnSIGTERM(t *testing.T) {
	addr := freeAddr(t)
	cmd := exec.Command(gatewayBinary(t), "--openapi", "http://"+freeAddr(t)+"/openapi.yaml", "--listen", addr, "--openapi-wait", "10m")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &lockedWriter{w: &out}, &lockedWriter{w: &out}
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	}, 20*time.Second, 20*time.Millisecond, "waiting, and listening")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "exit status 0")
	case <-time.After(20 * time.Second):
		t.Fatal("still waiting for the document after SIGTERM")
	}
}
