package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// TestMain removes the binary gatewayBinary built, once every test ran.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// gatewayBinary builds cmd/mcp-gateway once per test run.
func gatewayBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpgw-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "mcp-gateway")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/mcp-gateway").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// process is a running gateway.
type process struct {
	cmd     *exec.Cmd
	url     string // MCP endpoint, from the line the binary prints
	stderr  *strings.Builder
	exited  chan struct{} // closed when the process has exited
	waitErr error         // valid after exited is closed
}

func startGateway(t *testing.T, args ...string) *process {
	t.Helper()
	cmd := exec.Command(gatewayBinary(t), args...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &process{cmd: cmd, stderr: &strings.Builder{}, exited: make(chan struct{})}
	cmd.Stderr = &lockedWriter{w: p.stderr}
	require.NoError(t, cmd.Start())
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			// stdout closed without the line: the process is ending.
			select {
			case <-p.exited:
				t.Fatalf("gateway exited before printing its URL: %v\n%s", p.waitErr, stderrOf(p))
			case <-time.After(5 * time.Second):
				t.Fatalf("gateway closed its stdout before printing its URL:\n%s", stderrOf(p))
			}
		}
		i := strings.Index(line, "http://")
		require.GreaterOrEqual(t, i, 0, "startup line names the MCP URL: %q", line)
		p.url = strings.TrimSpace(line[i:])
	case <-p.exited:
		t.Fatalf("gateway exited early: %v\n%s", p.waitErr, stderrOf(p))
	case <-time.After(30 * time.Second):
		t.Fatalf("gateway did not start:\n%s", stderrOf(p))
	}
	// stderr reaches the test through exec's copying goroutine, so the
	// startup line on stdout can overtake the startup log: wait for the
	// line logged after it, so callers see every startup warning.
	if mark := listeningMark(args); mark != "" {
		require.Eventually(t, func() bool { return strings.Contains(stderrOf(p), mark) }, 10*time.Second, 5*time.Millisecond,
			"the startup log ends with the listening line")
	}
	return p
}

// listeningMark is how the gateway's "listening" log line reads with
// args, or "" when the log level leaves it out.
func listeningMark(args []string) string {
	mark := "msg=listening"
	for i := 0; i+1 < len(args); i++ {
		switch {
		case args[i] == "--log-level" && (args[i+1] == "warn" || args[i+1] == "error"):
			return ""
		case args[i] == "--log-format" && args[i+1] == "json":
			mark = `"msg":"listening"`
		}
	}
	return mark
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func post(t *testing.T, url, sid, body string) (*http.Response, []byte) {
	t.Helper()
	return postAt(t, url, sid, "2025-06-18", body)
}

func initialize(t *testing.T, url string) string {
	t.Helper()
	resp, body := post(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	return sid
}

func TestDemoBinaryServesAndReportsHealth(t *testing.T) {
	p := startGateway(t, "--demo", "--listen", freeAddr(t))
	base := strings.TrimSuffix(p.url, "/mcp")
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, path)
	}
	sid := initialize(t, p.url)
	resp, body := post(t, p.url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"listNotes","arguments":{"limit":2}}}`)
	require.Equal(t, 200, resp.StatusCode)
	require.Contains(t, string(body), `"structuredContent"`)
	require.NotContains(t, string(body), `"isError":true`)
}

func TestInvalidConfigurationExitsWithStatus2(t *testing.T) {
	for _, args := range [][]string{
		{"--listen", "127.0.0.1:0"},            // no document
		{"--demo", "--session-ttl", "forever"}, // bad value
		{"--demo", "--no-such-flag"},           // unknown flag
	} {
		cmd := exec.Command(gatewayBinary(t), args...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "args %v: %v\n%s", args, err, out)
		require.Equal(t, 2, ee.ExitCode(), "args %v:\n%s", args, out)
	}
	// A config file with an unknown key names it.
	f := filepath.Join(t.TempDir(), "gw.yaml")
	require.NoError(t, os.WriteFile(f, []byte("demo: true\nlisten_adress: 127.0.0.1:1\n"), 0o600))
	out, err := exec.Command(gatewayBinary(t), "--config", f).CombinedOutput()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee))
	require.Equal(t, 2, ee.ExitCode())
	require.Contains(t, string(out), "listen_adress")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(string(out)), "\n")+1, "one line: %q", out)
}

func TestBrokenDocumentFailsClearly(t *testing.T) {
	f := filepath.Join(t.TempDir(), "broken.yaml")
	require.NoError(t, os.WriteFile(f, []byte("openapi: 3.0.3\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    get: [unclosed\n"), 0o600))
	out, err := exec.Command(gatewayBinary(t), "--openapi", f, "--listen", freeAddr(t)).CombinedOutput()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%s", out)
	require.Equal(t, 1, ee.ExitCode())
	require.Contains(t, string(out), "broken.yaml")
}

const slowDoc = `openapi: 3.0.3
info: {title: slow, version: "1"}
paths:
  /slow:
    get:
      operationId: slow
      summary: Answers after a while
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
`

func TestGracefulShutdownFinishesInFlightCallsAndEndsStreams(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"done":true}`))
	}))
	defer backend.Close()
	doc := filepath.Join(t.TempDir(), "slow.yaml")
	require.NoError(t, os.WriteFile(doc, []byte(slowDoc), 0o600))
	p := startGateway(t, "--openapi", doc, "--upstream", backend.URL, "--listen", freeAddr(t), "--shutdown-grace", "10s")
	sid := initialize(t, p.url)

	// An open push stream.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	greq, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	greq.Header.Set("Accept", "text/event-stream")
	greq.Header.Set("Mcp-Session-Id", sid)
	gresp, err := http.DefaultClient.Do(greq)
	require.NoError(t, err)
	require.Equal(t, 200, gresp.StatusCode)
	streamEnded := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, gresp.Body); close(streamEnded) }()

	// An in-flight call.
	result := make(chan string, 1)
	go func() {
		_, body := post(t, p.url, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
		result <- string(body)
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("backend call did not start")
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-streamEnded:
	case <-time.After(10 * time.Second):
		t.Fatal("push stream not closed on shutdown")
	}
	close(release)
	select {
	case body := <-result:
		require.Contains(t, body, `"done":true`, "the in-flight call finished")
	case <-time.After(10 * time.Second):
		t.Fatal("in-flight call did not finish")
	}
	select {
	case <-p.exited:
		require.NoError(t, p.waitErr, "clean exit after SIGTERM:\n%s", p.stderr)
	case <-time.After(15 * time.Second):
		t.Fatal("gateway did not exit")
	}
}
