package redistest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelSet is a master, one replica of it and three sentinels watching
// them (quorum 2), all on loopback, owned by one test. Sentinels run as
// redis-server --sentinel, which is all Debian's redis-sentinel is.
type SentinelSet struct {
	// MasterName is the name the sentinels monitor the master under.
	MasterName string
	// SentinelAddrs are the sentinels' host:port.
	SentinelAddrs []string
	// URL names every sentinel in the form go-redis ParseFailoverURL reads:
	// redis://127.0.0.1:s1?master_name=mymaster&addr=127.0.0.1:s2&addr=127.0.0.1:s3
	// (rediss:// for SentinelTLS).
	URL string
	// Certs are the files every process uses under SentinelTLS, else nil.
	Certs *Certs

	tls       *tls.Config // how the helper's own clients dial, nil for plain TCP
	mu        sync.Mutex
	data      []*server // the master and the replica, in start order
	sentinels []*server
}

// sentinelReadyTimeout bounds the wait for the sentinels to know each
// other and the replica (they greet each other every 2 s).
const sentinelReadyTimeout = 30 * time.Second

// SentinelDownAfter is how long the sentinels wait before calling a silent
// master down; a failover follows within a few seconds of it.
const SentinelDownAfter = time.Second

// Sentinel starts a SentinelSet whose sentinels agree on the master, know
// each other and the replica, and whose replica is in sync. Everything stops
// when t ends; a failing test gets every process's log tail. It skips t when
// redis-server is not on PATH.
func Sentinel(t testing.TB) *SentinelSet {
	t.Helper()
	return startSentinel(t, nil)
}

// SentinelTLS is Sentinel with every process on TLS only, client
// certificates required: the sentinels' links to the master, the replica
// and each other too (tls-replication). Its URL is rediss://.
func SentinelTLS(t testing.TB) *SentinelSet {
	t.Helper()
	return startSentinel(t, NewCerts(t))
}

func startSentinel(t testing.TB, certs *Certs) *SentinelSet {
	t.Helper()
	if err := lookBinaries("redis-server"); err != nil {
		fail(t, err)
	}
	var lastErr error
	for attempt := range portAttempts {
		s, err := trySentinel(filepath.Join(t.TempDir(), "attempt-"+strconv.Itoa(attempt)), certs)
		if err == nil {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("redistest: sentinel set logs:\n%s", s.Logs())
				}
				s.stop()
			})
			return s
		}
		lastErr = err
	}
	t.Fatal(lastErr)
	return nil
}

func trySentinel(dir string, certs *Certs) (_ *SentinelSet, err error) {
	const name = "mymaster"
	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	s := &SentinelSet{MasterName: name, Certs: certs}
	// tlsArgs puts a process on TLS only, its outgoing links (a replica's
	// to its master, a sentinel's to everyone) as well.
	tlsArgs := func(n *server) {
		if certs == nil {
			return
		}
		s.tls = certs.ClientTLS(true)
		n.tls = s.tls
		n.args = append(n.args, certs.serverArgs()...)
		n.args = append(n.args, "--tls-auth-clients", "yes", "--tls-replication", "yes")
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, s.Logs())
			s.stop()
		}
	}()
	for i, port := range ports[:2] {
		nodeDir, err := newDir(dir, "data-"+strconv.Itoa(i))
		if err != nil {
			return nil, fmt.Errorf("redistest: %w", err)
		}
		n := &server{port: port, dir: nodeDir, log: filepath.Join(nodeDir, "redis.log")}
		if i > 0 {
			n.args = []string{"--replicaof", "127.0.0.1", strconv.Itoa(ports[0])}
		}
		tlsArgs(n)
		if err := n.start(); err != nil {
			return nil, err
		}
		s.data = append(s.data, n)
	}
	// The sentinels learn of the replica from the master's INFO, which
	// they ask at once and then every 10 s: start them once it is in sync.
	if err := awaitInfo(s.data[1], "replication", sentinelReadyTimeout, "master_link_status:up"); err != nil {
		return nil, err
	}
	for i, port := range ports[2:] {
		nodeDir, err := newDir(dir, "sentinel-"+strconv.Itoa(i))
		if err != nil {
			return nil, fmt.Errorf("redistest: %w", err)
		}
		// A sentinel rewrites its configuration file, so each has its own.
		conf := filepath.Join(nodeDir, "sentinel.conf")
		body := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 2\n"+
			"sentinel down-after-milliseconds %[1]s %[3]d\n"+
			"sentinel failover-timeout %[1]s 2000\n"+
			"sentinel parallel-syncs %[1]s 1\n", name, ports[0], SentinelDownAfter.Milliseconds())
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			return nil, fmt.Errorf("redistest: %w", err)
		}
		n := &server{port: port, dir: nodeDir, log: filepath.Join(nodeDir, "sentinel.log"), pre: []string{conf, "--sentinel"}}
		tlsArgs(n)
		if err := n.start(); err != nil {
			return nil, err
		}
		s.sentinels = append(s.sentinels, n)
		s.SentinelAddrs = append(s.SentinelAddrs, n.addr())
	}
	scheme := "redis://"
	if certs != nil {
		scheme = "rediss://"
	}
	s.URL = scheme + s.SentinelAddrs[0] + "?master_name=" + name
	for _, a := range s.SentinelAddrs[1:] {
		s.URL += "&addr=" + a
	}
	for _, n := range s.sentinels {
		if err := s.awaitSentinelSees(n, 2, 1); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// awaitSentinelSees polls SENTINEL MASTER on one sentinel until it knows
// the other sentinels and the replicas.
func (s *SentinelSet) awaitSentinelSees(n *server, others, replicas int) error {
	sc := redis.NewSentinelClient(probeOptions(n.addr(), n.tls))
	defer sc.Close()
	deadline := time.Now().Add(sentinelReadyTimeout)
	var got map[string]string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		got, _ = sc.Master(ctx, s.MasterName).Result()
		cancel()
		if got["num-other-sentinels"] == strconv.Itoa(others) && got["num-slaves"] == strconv.Itoa(replicas) {
			return nil
		}
		if n.exited() {
			return fmt.Errorf("redistest: sentinel %s exited%s", n.addr(), n.logTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: sentinel %s does not see %d sentinels and %d replicas within %v: %v", n.addr(), others, replicas, sentinelReadyTimeout, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Client returns a Sentinel-aware client of the master, closed when t ends.
func (s *SentinelSet) Client(t testing.TB) redis.UniversalClient {
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: s.MasterName, SentinelAddrs: s.SentinelAddrs, DialTimeout: 2 * time.Second, TLSConfig: s.tls})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// MasterAddr is the master's host:port as the first answering sentinel
// names it.
func (s *SentinelSet) MasterAddr(ctx context.Context) (string, error) {
	var errs []error
	for _, a := range s.SentinelAddrs {
		sc := redis.NewSentinelClient(probeOptions(a, s.tls))
		hp, err := sc.GetMasterAddrByName(ctx, s.MasterName).Result()
		sc.Close()
		if err == nil && len(hp) == 2 {
			return hp[0] + ":" + hp[1], nil
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("redistest: no sentinel names the master: %w", errors.Join(errs...))
}

// KillMaster sends SIGKILL to the process the sentinels name as master and
// returns its address: no shutdown, no last replication. It fails t if no
// running process serves that address.
func (s *SentinelSet) KillMaster(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addr, err := s.MasterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.data {
		if n.addr() == addr && !n.exited() {
			n.kill()
			return addr
		}
	}
	t.Fatalf("redistest: no running data node at the master address %s", addr)
	return ""
}

// AwaitNewMaster waits until every sentinel names a master other than old
// and that node says it is a master, and returns its address. It fails t
// after timeout, with the logs.
func (s *SentinelSet) AwaitNewMaster(t testing.TB, old string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		if addr, ok := s.agreedMaster(); ok && addr != old {
			s.mu.Lock()
			n := s.dataAt(addr)
			s.mu.Unlock()
			if n != nil {
				if err := awaitInfo(n, "replication", time.Second, "role:master"); err == nil {
					return addr
				}
			}
			last = addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: no failover from %s within %v (last named %q)\n%s", old, timeout, last, s.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// agreedMaster is the master address every sentinel names, if they agree.
func (s *SentinelSet) agreedMaster() (string, bool) {
	var agreed string
	for _, a := range s.SentinelAddrs {
		sc := redis.NewSentinelClient(probeOptions(a, s.tls))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		hp, err := sc.GetMasterAddrByName(ctx, s.MasterName).Result()
		cancel()
		sc.Close()
		if err != nil || len(hp) != 2 {
			return "", false
		}
		addr := hp[0] + ":" + hp[1]
		if agreed != "" && addr != agreed {
			return "", false
		}
		agreed = addr
	}
	return agreed, agreed != ""
}

func (s *SentinelSet) dataAt(addr string) *server {
	for _, n := range s.data {
		if n.addr() == addr {
			return n
		}
	}
	return nil
}

// AwaitReplicated returns once every write the master took so far has
// reached the replica. Replication is asynchronous: the writes of the last
// moment before a master dies can be lost by design, so a test that kills
// the master calls this first for the writes it means to keep. WAIT counts
// from this client's own last write, which is why it writes a key first.
func (s *SentinelSet) AwaitReplicated(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addr, err := s.MasterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := awaitReplicated(ctx, addr, s.tls, "redistest:replicated"); err != nil {
		t.Fatal(err)
	}
}

// awaitReplicated writes key on the master at addr and WAITs until one
// replica has acknowledged it (and so everything written before it).
func awaitReplicated(ctx context.Context, addr string, tc *tls.Config, key string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1, TLSConfig: tc})
	defer c.Close()
	if err := c.Set(ctx, key, time.Now().String(), time.Minute).Err(); err != nil {
		return fmt.Errorf("redistest: write on master %s: %w", addr, err)
	}
	n, err := c.Wait(ctx, 1, 5*time.Second).Result()
	if err != nil {
		return fmt.Errorf("redistest: WAIT on master %s: %w", addr, err)
	}
	if n < 1 {
		return fmt.Errorf("redistest: no replica of master %s acknowledged its writes", addr)
	}
	return nil
}

// Logs are the tails of every process's log, for failure messages.
func (s *SentinelSet) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, n := range append(append([]*server{}, s.data...), s.sentinels...) {
		fmt.Fprintf(&b, "--- %s (%s)%s\n", n.addr(), filepath.Base(n.dir), n.logTail())
	}
	return b.String()
}

func (s *SentinelSet) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range append(append([]*server{}, s.data...), s.sentinels...) {
		wg.Go(n.stop)
	}
	wg.Wait()
}

// awaitInfo polls INFO section on n until it has every want line.
func awaitInfo(n *server, section string, timeout time.Duration, want ...string) error {
	c := redis.NewClient(probeOptions(n.addr(), n.tls))
	defer c.Close()
	deadline := time.Now().Add(timeout)
	var info string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		info, _ = c.Info(ctx, section).Result()
		cancel()
		if hasLines(info, want) {
			return nil
		}
		if n.exited() {
			return fmt.Errorf("redistest: %s exited%s", n.addr(), n.logTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: %s lacks %v within %v; INFO %s:\n%s", n.addr(), want, timeout, section, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill ends the process with SIGKILL, as a crash would.
func (s *server) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
	s.cmd, s.done = nil, nil
}
