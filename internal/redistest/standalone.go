package redistest

import (
	"crypto/tls"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a standalone redis-server owned by one test.
type Server struct {
	// Addr is host:port on loopback.
	Addr string
	// URL is the redis:// form the gateway accepts, database 0.
	URL string

	t  testing.TB
	mu sync.Mutex
	s  *server
}

// portAttempts bounds retries when a chosen free port is taken before
// redis-server binds it.
const portAttempts = 5

// Standalone starts a redis-server on a free loopback port with no
// persistence, waits until it answers PING and stops it when t ends.
// It skips t when redis-server is not on PATH.
func Standalone(t testing.TB) *Server {
	t.Helper()
	if err := lookBinaries("redis-server"); err != nil {
		fail(t, err)
	}
	s := startOnFreePort(t, nil, nil)
	srv := &Server{Addr: s.addr(), URL: fmt.Sprintf("redis://%s/0", s.addr()), t: t, s: s}
	t.Cleanup(srv.Stop)
	return srv
}

// startOnFreePort starts one redis-server in a fresh t.TempDir() on a free
// loopback port (TLS only with tc, see server.tls; args after the common
// ones), choosing another port when the chosen one is taken before
// redis-server binds it. The caller stops it.
func startOnFreePort(t testing.TB, tc *tls.Config, args []string) *server {
	t.Helper()
	dir := t.TempDir()
	var lastErr error
	for range portAttempts {
		ports, err := freePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		s := &server{port: ports[0], dir: dir, log: dir + "/redis.log", tls: tc, args: args}
		if lastErr = s.start(); lastErr == nil {
			return s
		}
	}
	t.Fatal(lastErr)
	return nil
}

// Stop ends the server; clients get connection errors until Start. Stopping
// a stopped server does nothing.
func (srv *Server) Stop() {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	srv.s.stop()
}

// Start starts a stopped server again on the same port. Data written before
// Stop may be gone. Starting a running server does nothing. It fails the
// test if the port cannot be bound again; like t.Fatal, call it from the
// test's goroutine.
func (srv *Server) Start() {
	srv.t.Helper()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.s.cmd != nil && srv.s.exited() {
		srv.s.stop() // reap a server that died on its own
	}
	if err := srv.s.start(); err != nil {
		srv.t.Fatal(err)
	}
}

// Pause stops the server's process (SIGSTOP): connections stay open and
// commands hang, as with a Redis that stalls; Resume continues it. The
// test's end resumes a paused server before stopping it.
func (srv *Server) Pause() {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.s.cmd != nil && srv.s.cmd.Process != nil {
		_ = srv.s.cmd.Process.Signal(syscall.SIGSTOP)
		srv.t.Cleanup(srv.Resume)
	}
}

// Resume continues a paused server (SIGCONT).
func (srv *Server) Resume() {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.s.cmd != nil && srv.s.cmd.Process != nil {
		_ = srv.s.cmd.Process.Signal(syscall.SIGCONT)
	}
}

// Client returns a client of this server, closed when t ends. It keeps
// go-redis's retry defaults, as production does: against a stopped server a
// command fails only after its dial retries (over a second). Tests that
// want a quick failure build their own client from Addr.
func (srv *Server) Client(t testing.TB) redis.UniversalClient {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DialTimeout: 2 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
