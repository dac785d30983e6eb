package main

// demo-cluster: a throwaway cluster on loopback — a private redis-server,
// one demo backend, N gateway replicas (this executable, run as it would be
// in production) and a round-robin proxy without affinity in front — so
// that the multi-replica behaviour can be tried with one command and no
// Docker. It owns every process it starts: they are in their own process
// group (a terminal's Ctrl-C reaches only this process, which stops them in
// order) and, on Linux, die with it if it is killed.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/internal/demo"
)

const demoClusterCommand = "mcp-gateway demo-cluster"

// Bounds of the demo cluster's start and stop. A replica gets longer than
// its default shutdown_grace (15s) before it is killed.
const (
	clusterStartTimeout = 60 * time.Second
	replicaStopTimeout  = 20 * time.Second
	redisStopTimeout    = 10 * time.Second
	redisPortAttempts   = 5
)

// replicaHeader names, on every answer through the demo proxy, the replica
// that served it: the round robin is visible to whoever looks.
const replicaHeader = "X-Demo-Cluster-Replica"

func runDemoCluster(parent context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(demoClusterCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "address of the round-robin proxy clients connect to")
	replicas := fs.Int("replicas", 3, "gateway replicas behind the proxy (1 to 16)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s [--listen ADDR] [--replicas N] [-- GATEWAY FLAGS...]\n\n"+
			"Starts a private redis-server, the demo backend, N gateway replicas sharing them and a\n"+
			"round-robin proxy in front; Ctrl-C stops everything. Flags after -- go to every replica,\n"+
			"except those the cluster sets itself (%s).\n\n", demoClusterCommand, strings.Join(clusterOwnedFlags(), ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitConfig
	}
	if *replicas < 1 || *replicas > 16 {
		fmt.Fprintf(stderr, "%s: --replicas must be 1 to 16, got %d\n", demoClusterCommand, *replicas)
		return exitConfig
	}
	if err := checkReplicaFlags(fs.Args()); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", demoClusterCommand, err)
		return exitConfig
	}
	redisBin, err := exec.LookPath("redis-server")
	if err != nil {
		fmt.Fprintf(stderr, "%s: redis-server is not on PATH: install redis-server (Debian/Ubuntu: apt install redis-server; macOS: brew install redis)\n", demoClusterCommand)
		return exitFailure
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "%s: cannot find this executable to run the replicas: %v\n", demoClusterCommand, err)
		return exitFailure
	}

	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	c := &cluster{stdout: stdout, stderr: stderr, self: self, redisBin: redisBin, extra: fs.Args(), fail: cancel}
	// Listening from here on, before anything can cancel ctx, so that no
	// signal falls between the one that stops the cluster and the one
	// that hurries the stop.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	hurry, done := make(chan struct{}), make(chan struct{})
	c.hurry = hurry
	var signals sync.WaitGroup
	signals.Go(func() { awaitSignals(ctx, cancel, sig, hurry, done) })
	defer signals.Wait()
	defer close(done)
	defer c.stop()

	if err := c.start(ctx, *listen, *replicas); err != nil {
		if errors.Is(context.Cause(ctx), errRedisExited) {
			return exitFailure // said by watchRedis
		}
		if ctx.Err() != nil {
			return exitOK // interrupted while starting
		}
		fmt.Fprintf(stderr, "%s: %v\n", demoClusterCommand, err)
		return exitFailure
	}
	<-ctx.Done()
	fmt.Fprintf(stdout, "stopping: replicas first (up to %s), then redis\n", replicaStopTimeout)
	if errors.Is(context.Cause(ctx), errRedisExited) {
		return exitFailure
	}
	return exitOK
}

// errRedisExited ends a cluster whose redis-server exited on its own:
// every replica answers 503 without it, so nothing is left to try.
var errRedisExited = errors.New("redis-server exited")

// awaitSignals cancels the run at the first SIGINT or SIGTERM and closes
// hurry at the next one. When ctx ends another way (Redis exited, a
// test's context), the stop has begun without a signal and the first
// signal hurries it. main's NotifyContext cancels ctx's parent on the
// very signal sig receives too: that cause is not "another way".
func awaitSignals(ctx context.Context, cancel context.CancelCauseFunc, sig <-chan os.Signal, hurry chan<- struct{}, done <-chan struct{}) {
	seen, ctxDone := 0, ctx.Done()
	endedWithoutSignal := func() bool {
		cause := context.Cause(ctx)
		return seen == 0 && ctx.Err() != nil &&
			(errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) || errors.Is(cause, errRedisExited))
	}
	for {
		select {
		case <-sig:
			if endedWithoutSignal() {
				seen = 1
			}
			seen++
			cancel(nil)
		case <-ctxDone:
			ctxDone = nil
			if endedWithoutSignal() {
				seen = 1
			}
		case <-done:
			return
		}
		if seen >= 2 {
			close(hurry)
			return
		}
	}
}

// clusterOwnedKeys are the gateway settings the cluster gives every
// replica itself; after -- they would break it: admin_listen moves
// /readyz off the address start polls, listen makes every replica bind
// one port, and another Redis, prefix or config file stops the replicas
// sharing one state (their MCPGW_ forms never reach a replica).
var clusterOwnedKeys = []string{"listen", "admin_listen", "redis_url", "redis_prefix", "config"}

func clusterOwnedFlags() []string {
	var names []string
	for _, o := range options {
		if slices.Contains(clusterOwnedKeys, o.key) {
			names = append(names, "--"+o.flagName())
		}
	}
	return names
}

// checkReplicaFlags parses the flags meant for the replicas as a gateway
// would (every option, bool ones without a value, -x and --x, =v or a
// separate v), so that a mistake is one message here rather than one per
// replica, and refuses those the cluster sets.
func checkReplicaFlags(extra []string) error {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for _, o := range options {
		fs.Func(o.flagName(), "", func(string) error { return nil })
		if o.isBool {
			setBoolFlag(fs, o.flagName())
		}
	}
	fs.Bool("version", false, "")
	if err := fs.Parse(extra); err != nil {
		return fmt.Errorf("the gateway flags after --: %v", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("the gateway flags after --: unexpected argument %q", fs.Arg(0))
	}
	owned := clusterOwnedFlags()
	var refused []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(owned, "--"+f.Name) {
			refused = append(refused, "--"+f.Name)
		}
	})
	if len(refused) > 0 {
		return fmt.Errorf("%s after -- would break the cluster, which sets %s of every replica itself (each replica listens on a port of its own, behind the proxy; --listen before -- is the proxy's address)",
			strings.Join(refused, ", "), strings.Join(owned, ", "))
	}
	return nil
}

// cluster is what one demo-cluster run started; stop undoes it.
type cluster struct {
	stdout, stderr io.Writer
	self, redisBin string
	extra          []string                // gateway flags for every replica
	fail           context.CancelCauseFunc // ends the run when Redis exits
	hurry          <-chan struct{}         // closed: stop kills at once; nil never

	dir           string
	redis         *child
	stopDemo      func(context.Context) error
	replicas      []*child
	proxy         *http.Server
	proxyLn       net.Listener
	out           sync.Mutex // one writer of prefixed child output at a time
	stopping      atomic.Bool
	watching      sync.WaitGroup // one per replica, reporting its unexpected exit
	watchingRedis sync.WaitGroup
}

// child is one process the cluster started.
type child struct {
	name   string
	cmd    *exec.Cmd
	url    string        // replicas: the MCP endpoint the replica printed
	exited chan struct{} // closed once cmd.Wait returned
	err    error         // cmd.Wait's result, valid after exited
}

func (ch *child) alive() bool {
	select {
	case <-ch.exited:
		return false
	default:
		return true
	}
}

func (c *cluster) start(ctx context.Context, listen string, n int) error {
	// The proxy's address first: a taken port fails before anything runs.
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", listen, err)
	}
	c.proxyLn = ln
	if !gateway.IsLoopbackListen(listen) {
		fmt.Fprintf(c.stderr, "%s: WARNING: the proxy listens on %s with authentication off: anyone who reaches it can call the demo backend\n", demoClusterCommand, listen)
	}
	if c.dir, err = os.MkdirTemp("", "mcpgw-demo-cluster-"); err != nil {
		return err
	}
	if err := c.startRedis(ctx); err != nil {
		return err
	}
	base, stopDemo, err := demo.Start(ctx, "127.0.0.1:0")
	if err != nil {
		return err
	}
	c.stopDemo = stopDemo
	doc := filepath.Join(c.dir, "openapi.yaml")
	if err := os.WriteFile(doc, demo.OpenAPI(), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "backend    %s (the demo notes API, in this process; document %s)\n", base, doc)

	prefix := "mcpgw-demo-" + randomHex(4) + ":"
	env := replicaEnv(os.Environ(), map[string]string{
		"MCPGW_OPENAPI":      doc,
		"MCPGW_UPSTREAM":     base,
		"MCPGW_REDIS_URL":    "redis://" + c.redis.url + "/0",
		"MCPGW_REDIS_PREFIX": prefix,
		"MCPGW_LISTEN":       "127.0.0.1:0",
	})
	// Started together, each loads the document on its own; printed in order.
	c.replicas = make([]*child, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { c.replicas[i], errs[i] = c.startReplica(ctx, i+1, env) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, r := range c.replicas {
		fmt.Fprintf(c.stdout, "%-10s pid %d  %s\n", r.name, r.cmd.Process.Pid, r.url)
	}
	for _, r := range c.replicas {
		if err := awaitReady(ctx, r); err != nil {
			return err
		}
	}
	for _, r := range c.replicas {
		c.watching.Go(func() {
			<-r.exited
			if !c.stopping.Load() {
				c.out.Lock()
				fmt.Fprintf(c.stderr, "%-10s | exited (%v); the proxy skips it from now on\n", r.name, r.err)
				c.out.Unlock()
			}
		})
	}
	c.serveProxy(ln)
	u := "http://" + ln.Addr().String() + "/mcp"
	fmt.Fprintf(c.stdout, "proxy      %s (round robin over %d replicas, no affinity; header %s names the replica)\n", u, n, replicaHeader)
	fmt.Fprintf(c.stdout, "ready: point an MCP client at %s; Ctrl-C stops everything\n", u)
	return nil
}

// replicaEnv is the environment of a replica: this process's, without any
// MCPGW_ setting (a user's MCPGW_CONFIG or MCPGW_LISTEN would turn the
// replicas into something else), plus the cluster's own.
func replicaEnv(environ []string, set map[string]string) []string {
	env := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool { return strings.HasPrefix(kv, "MCPGW_") })
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+set[k])
	}
	return env
}

func (c *cluster) startRedis(ctx context.Context) error {
	var lastErr error
	for range redisPortAttempts {
		port, err := freeLoopbackPort()
		if err != nil {
			return err
		}
		ch, err := c.runRedis(ctx, port)
		if err == nil {
			c.redis = ch
			fmt.Fprintf(c.stdout, "%-10s pid %d  redis://%s/0 (no persistence; data and logs in %s)\n", "redis", ch.cmd.Process.Pid, ch.url, c.dir)
			c.watchingRedis.Go(c.watchRedis)
			return nil
		}
		lastErr = err
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if tail := logTail(filepath.Join(c.dir, "redis.log")); tail != "" {
		lastErr = fmt.Errorf("%w; redis.log ends:\n%s", lastErr, tail)
	}
	return lastErr
}

// runRedis starts redis-server on port and returns it once it answers
// there; when it does not, it has stopped it.
func (c *cluster) runRedis(ctx context.Context, port int) (*child, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(c.redisBin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--dir", c.dir, "--logfile", filepath.Join(c.dir, "redis.log"))
	cmd.Dir = c.dir
	ch, err := c.spawn("redis", cmd, nil)
	if err != nil {
		return nil, err
	}
	if err := awaitPing(ctx, ch, addr); err != nil {
		stopChild(ch, redisStopTimeout, nil)
		return nil, err
	}
	ch.url = addr
	return ch, nil
}

// watchRedis reports a redis-server that exits on its own — it writes to
// its log file, so nothing else would show on the terminal while every
// call gets 503 — and ends the run.
func (c *cluster) watchRedis() {
	<-c.redis.exited
	if c.stopping.Load() {
		return
	}
	msg := fmt.Sprintf("%s: redis-server (pid %d) exited (%v); the replicas cannot work without it, so the cluster stops", demoClusterCommand, c.redis.cmd.Process.Pid, c.redis.err)
	if tail := logTail(filepath.Join(c.dir, "redis.log")); tail != "" {
		msg += "; redis.log ends:\n" + tail
	}
	c.out.Lock()
	fmt.Fprintln(c.stderr, msg)
	c.out.Unlock()
	c.fail(errRedisExited)
}

func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// awaitPing waits until redis-server answers PING, speaking RESP on a bare
// connection (go-redis lives in redis.go files only). The port was free a
// moment before redis-server was started, not reserved: a server that
// took it meanwhile would answer too, so the answer must come from ch's
// process.
func awaitPing(ctx context.Context, ch *child, addr string) error {
	deadline := time.Now().Add(15 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		pid, err := redisProcessID(addr)
		if err == nil {
			if pid != ch.cmd.Process.Pid {
				return fmt.Errorf("another redis-server (process_id %d) answers on %s, not the one started (pid %d)", pid, addr, ch.cmd.Process.Pid)
			}
			if ch.alive() {
				return nil
			}
		}
		select {
		case <-ch.exited:
			return fmt.Errorf("redis-server on %s exited during start: %v", addr, ch.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s did not answer PING: %v", addr, err)
		}
	}
}

// redisProcessID sends PING, then INFO server, and returns the process_id
// the server reports.
func redisProcessID(addr string) (int, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	r := bufio.NewReader(conn)
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return 0, err
	}
	if line, err := r.ReadString('\n'); err != nil {
		return 0, err
	} else if line != "+PONG\r\n" {
		return 0, fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	if _, err := conn.Write([]byte("INFO server\r\n")); err != nil {
		return 0, err
	}
	head, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	if !strings.HasPrefix(head, "$") || err != nil || n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("INFO answered %q", strings.TrimSpace(head))
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO server has no process_id")
}

func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}

// startReplica runs one gateway and waits for the line naming its URL (it
// listens on a port of its own choosing, so no port can be taken from it
// between a probe and its bind).
func (c *cluster) startReplica(ctx context.Context, i int, env []string) (*child, error) {
	cmd := exec.Command(c.self, c.extra...)
	cmd.Env = env
	cmd.Dir = c.dir
	name := fmt.Sprintf("replica-%d", i)
	urls := make(chan string, 1)
	ch, err := c.spawn(name, cmd, urls)
	if err != nil {
		return nil, err
	}
	select {
	case ch.url = <-urls:
		return ch, nil
	case <-ch.exited:
		return nil, fmt.Errorf("%s exited during start (%v); its log is above", name, ch.err)
	case <-ctx.Done():
		return ch, ctx.Err()
	case <-time.After(clusterStartTimeout):
		return ch, fmt.Errorf("%s did not start within %s; its log is above", name, clusterStartTimeout)
	}
}

// spawn starts cmd with its output prefixed by name on stderr. With urls
// set, the first http:// URL the process prints on stdout is sent there.
// The child is recorded for stop before spawn returns, whatever happens
// next.
func (c *cluster) spawn(name string, cmd *exec.Cmd, urls chan<- string) (*child, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := startChild(cmd); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	ch := &child{name: name, cmd: cmd, exited: make(chan struct{})}
	var copying sync.WaitGroup
	copying.Go(func() { c.copyLines(name, stderr, nil) })
	copying.Go(func() { c.copyLines(name, stdout, urls) })
	go func() {
		// Wait closes the pipes: read them to the end first.
		copying.Wait()
		ch.err = cmd.Wait()
		close(ch.exited)
	}()
	return ch, nil
}

// copyLines writes r's lines to stderr, each after the child's name; the
// first one holding an http:// URL goes to urls instead (when set).
func (c *cluster) copyLines(name string, r io.Reader, urls chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if urls != nil {
			if i := strings.Index(line, "http://"); i >= 0 {
				urls <- strings.TrimSpace(line[i:])
				urls = nil
				continue
			}
		}
		c.out.Lock()
		fmt.Fprintf(c.stderr, "%-10s | %s\n", name, line)
		c.out.Unlock()
	}
	_, _ = io.Copy(io.Discard, r) // a line too long for the scanner
}

// awaitReady polls the replica's /readyz until it answers 200: it then
// has its document and hears the others.
func awaitReady(ctx context.Context, r *child) error {
	u, err := url.Parse(r.url)
	if err != nil {
		return fmt.Errorf("%s printed an odd URL %q", r.name, r.url)
	}
	probe := u.Scheme + "://" + u.Host + "/readyz"
	deadline := time.Now().Add(clusterStartTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, probe, nil)
		if resp, err := hc.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-r.exited:
			return fmt.Errorf("%s exited before it was ready (%v); its log is above", r.name, r.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s was not ready within %s (%s); its log is above", r.name, clusterStartTimeout, probe)
		}
	}
}

// serveProxy sends each request to the next live replica in turn — a
// session's requests land on every replica — flushing as bytes arrive so
// SSE streams pass unbuffered. A replica whose process has exited (say,
// killed to watch a session survive it) is skipped.
func (c *cluster) serveProxy(ln net.Listener) {
	targets := make([]*url.URL, len(c.replicas))
	for i, r := range c.replicas {
		u, _ := url.Parse(r.url)
		targets[i] = &url.URL{Scheme: u.Scheme, Host: u.Host}
	}
	var next atomic.Uint64
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			i := int((next.Add(1) - 1) % uint64(len(targets)))
			for range len(targets) {
				if c.replicas[i].alive() {
					break
				}
				i = (i + 1) % len(targets)
			}
			pr.SetURL(targets[i]) // the replica's own loopback Host, which it accepts
			pr.Out.Header.Set(replicaHeader, strconv.Itoa(i+1))
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Set(replicaHeader, resp.Request.Header.Get(replicaHeader))
			return nil
		},
		FlushInterval: -1,
		Transport:     &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second},
		// A client dropping a push stream is routine, not worth a line.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	c.proxy = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The replica's answer may start before the request body is
			// read to EOF; without full duplex an HTTP/1 server would close
			// the body then and cut a large POST off.
			_ = http.NewResponseController(w).EnableFullDuplex()
			rp.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = c.proxy.Serve(ln) }()
}

// stop ends everything start began, children first: the replicas get
// SIGTERM together (they end their streams with a retry hint and finish
// running calls) and are killed after replicaStopTimeout; then the proxy,
// the backend and Redis, whose end the replicas must not see while they
// drain; the temporary directory last. A second Ctrl-C kills at once.
func (c *cluster) stop() {
	c.stopping.Store(true)
	var wg sync.WaitGroup
	for _, r := range c.replicas {
		if r != nil {
			wg.Go(func() { stopChild(r, replicaStopTimeout, c.hurry) })
		}
	}
	wg.Wait()
	c.watching.Wait()
	if c.proxy != nil {
		_ = c.proxy.Close()
	} else if c.proxyLn != nil {
		_ = c.proxyLn.Close()
	}
	if c.stopDemo != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.stopDemo(ctx)
		cancel()
	}
	if c.redis != nil {
		stopChild(c.redis, redisStopTimeout, c.hurry)
	}
	c.watchingRedis.Wait()
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

// stopChild sends SIGTERM and waits for the exit, killing the process
// after timeout or when hurry fires (nil: never).
func stopChild(ch *child, timeout time.Duration, hurry <-chan struct{}) {
	if err := ch.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		_ = ch.cmd.Process.Kill() // Windows has no SIGTERM to send
	}
	select {
	case <-ch.exited:
		return
	case <-time.After(timeout):
	case <-hurry:
	}
	_ = ch.cmd.Process.Kill()
	<-ch.exited
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
