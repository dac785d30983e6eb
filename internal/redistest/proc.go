package redistest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startTimeout bounds how long a redis-server may take to answer PING.
const startTimeout = 15 * time.Second

// server is one redis-server process on a fixed loopback port.
type server struct {
	port int
	dir  string
	pre  []string // arguments before the common ones (a sentinel's config file)
	args []string // extra arguments after the common ones
	log  string   // log file, appended to across restarts
	// tls, when set, moves the server to TLS only: port is its tls-port,
	// the plain port is off, and PING is sent over TLS with this config.
	tls *tls.Config

	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

func (s *server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// start runs redis-server and waits until it answers PING. An error means
// the process is not running (it exited or was killed).
func (s *server) start() error {
	if s.cmd != nil {
		return nil
	}
	ports := []string{"--port", strconv.Itoa(s.port)}
	if s.tls != nil {
		ports = []string{"--port", "0", "--tls-port", strconv.Itoa(s.port)}
	}
	args := slices.Concat(s.pre, ports, []string{
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		// A replica's first sync starts at once, not after the default 5 s
		// wait for more replicas to share it.
		"--repl-diskless-sync-delay", "0",
		"--daemonize", "no",
		"--dir", s.dir,
		"--logfile", s.log,
	}, s.args)
	cmd := exec.Command("redis-server", args...)
	cmd.Dir = s.dir
	if err := startCmd(cmd); err != nil {
		return fmt.Errorf("redistest: start redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	if err := s.awaitPing(); err != nil {
		s.stop()
		return err
	}
	return nil
}

// awaitPing polls PING until it answers PONG, the process exits, or
// startTimeout passes. It speaks RESP over a bare connection rather than
// through go-redis, whose pool logs every refused dial.
func (s *server) awaitPing() error {
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := ping(s.addr(), s.tls)
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("redistest: redis-server on port %d exited during start%s", s.port, s.logTail())
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: redis-server on port %d did not answer PING within %v: %v%s", s.port, startTimeout, err, s.logTail())
		}
	}
}

// ping sends one inline PING and expects +PONG, over TLS with tc.
func ping(addr string, tc *tls.Config) error {
	var conn net.Conn
	var err error
	if tc != nil {
		conn, err = tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, tc)
	} else {
		conn, err = net.DialTimeout("tcp", addr, time.Second)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// probeOptions are those of a client that asks one server something while
// it starts or fails over: one dial of at most a second and no retry, so
// that a dead node answers at once and the caller's poll decides.
func probeOptions(addr string, tc *tls.Config) *redis.Options {
	return &redis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1, DialerRetries: 1, TLSConfig: tc}
}

// stop ends the process: SIGTERM, then SIGKILL if it lingers.
func (s *server) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd, s.done = nil, nil
}

// exited reports whether the process has exited on its own.
func (s *server) exited() bool {
	if s.cmd == nil {
		return true
	}
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *server) logTail() string {
	b, err := os.ReadFile(s.log)
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	return "; log tail:\n" + string(bytes.TrimSpace(b))
}

// freePorts returns n distinct loopback ports that were free a moment ago.
// Another process may take one before redis-server binds it; callers that
// can choose again retry with fresh ports.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("redistest: find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// errNoBinary marks a missing redis-server or redis-cli: tests skip.
var errNoBinary = errors.New("redistest: not on PATH")

func lookBinaries(names ...string) error {
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			return fmt.Errorf("%w: %s is needed for this test (install Redis 7, e.g. apt-get install redis-server)", errNoBinary, name)
		}
	}
	return nil
}

// fail skips on a missing binary and fails on anything else.
func fail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, errNoBinary) {
		t.Skip(err.Error())
	}
	t.Fatal(err)
}

// newDir makes a private directory for one server's files.
func newDir(parent, name string) (string, error) {
	dir := filepath.Join(parent, name)
	return dir, os.MkdirAll(dir, 0o700)
}
