package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClusterServer is a Redis Cluster of three masters with no replicas,
// covering all 16384 slots.
type ClusterServer struct {
	// Addrs are the nodes' host:port, all on loopback: the masters (and
	// in a FailoverCluster their replicas).
	Addrs []string
	// URL names every node in the form go-redis ParseClusterURL reads:
	// redis://127.0.0.1:p1?addr=127.0.0.1:p2&addr=127.0.0.1:p3
	URL string
}

// Client returns a cluster client of the nodes, closed when t ends. It
// re-reads the slot map every second, as the gateway's does, so that it
// finds a failed-over master's successor.
func (c *ClusterServer) Client(t testing.TB) redis.UniversalClient {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs, DialTimeout: 2 * time.Second, ClusterStateReloadInterval: time.Second})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// clusterReadyTimeout bounds the wait for cluster_state:ok on every node.
const clusterReadyTimeout = 30 * time.Second

var (
	mainActive atomic.Bool // Main is running the tests: share one cluster

	sharedOnce    sync.Once
	sharedDir     string // holds the shared cluster's files; Main removes it
	sharedCluster *cluster
	sharedErr     error
)

// Main runs a package's tests and then stops the cluster they shared. Call
// it from TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
// With Main, every Cluster call in the binary returns one cluster, started on
// first use (about a second) and stopped after the last test; tests keep
// apart by key prefix. Without Main, each Cluster call starts a cluster of
// its own, stopped when its test ends.
func Main(m *testing.M) {
	mainActive.Store(true)
	code := m.Run()
	if sharedCluster != nil {
		sharedCluster.stop()
	}
	if sharedDir != "" {
		_ = os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// Cluster returns a running three-master Redis Cluster whose every node
// reports cluster_state:ok: the binary's shared one under Main, else one
// stopped when t ends. It skips t when redis-server or redis-cli is not on
// PATH. Tests must not reconfigure or stop a shared cluster's nodes.
func Cluster(t testing.TB) *ClusterServer {
	t.Helper()
	if err := lookBinaries("redis-server", "redis-cli"); err != nil {
		fail(t, err)
	}
	if mainActive.Load() {
		sharedOnce.Do(func() {
			dir, err := os.MkdirTemp("", "redistest-cluster-")
			if err != nil {
				sharedErr = fmt.Errorf("redistest: %w", err)
				return
			}
			sharedDir = dir
			sharedCluster, sharedErr = startCluster(dir)
		})
		if sharedErr != nil {
			t.Fatal(sharedErr)
		}
		return sharedCluster.public()
	}
	c, err := startCluster(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stop)
	return c.public()
}

// cluster is the set of processes behind a ClusterServer.
type cluster struct {
	nodes []*server
}

func (c *cluster) public() *ClusterServer {
	cs := &ClusterServer{}
	for _, n := range c.nodes {
		cs.Addrs = append(cs.Addrs, n.addr())
	}
	cs.URL = "redis://" + cs.Addrs[0]
	for i, a := range cs.Addrs[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		cs.URL += sep + "addr=" + a
	}
	return cs
}

func (c *cluster) stop() {
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		wg.Go(n.stop)
	}
	wg.Wait()
}

// startCluster starts three cluster-enabled masters, joins them with
// redis-cli --cluster create and waits until each reports the cluster ok.
// A port taken between choosing and binding it costs a retry on new ports.
func startCluster(dir string) (*cluster, error) {
	return startClusterOf(dir, 0, "2000")
}

// startClusterOf starts three masters with replicas replicas each, their
// cluster-node-timeout nodeTimeout milliseconds.
func startClusterOf(dir string, replicas int, nodeTimeout string) (*cluster, error) {
	var lastErr error
	for attempt := range portAttempts {
		c, err := tryCluster(filepath.Join(dir, "attempt-"+strconv.Itoa(attempt)), replicas, nodeTimeout)
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func tryCluster(dir string, replicas int, nodeTimeout string) (_ *cluster, err error) {
	const masters = 3
	nodes := masters * (1 + replicas)
	// Each node needs its client port and its cluster bus port; naming the
	// bus port (--cluster-port) avoids assuming port+10000 is free.
	ports, err := freePorts(2 * nodes)
	if err != nil {
		return nil, err
	}
	c := &cluster{}
	defer func() {
		if err != nil {
			c.stop()
		}
	}()
	for i := range nodes {
		nodeDir, err := newDir(dir, "node-"+strconv.Itoa(i))
		if err != nil {
			return nil, fmt.Errorf("redistest: %w", err)
		}
		n := &server{
			port: ports[i],
			dir:  nodeDir,
			log:  filepath.Join(nodeDir, "redis.log"),
			args: []string{
				"--cluster-enabled", "yes",
				"--cluster-config-file", filepath.Join(nodeDir, "nodes.conf"),
				"--cluster-node-timeout", nodeTimeout,
				"--cluster-port", strconv.Itoa(ports[nodes+i]),
			},
		}
		if err := n.start(); err != nil {
			return nil, err
		}
		c.nodes = append(c.nodes, n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := []string{"--cluster", "create"}
	for _, n := range c.nodes {
		args = append(args, n.addr())
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redistest: redis-cli %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	for _, n := range c.nodes {
		if err := awaitClusterOK(n, nodes); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// awaitClusterOK polls CLUSTER INFO on one node until it sees the whole
// cluster: state ok, every slot served, every node known.
func awaitClusterOK(n *server, nodes int) error {
	cl := redis.NewClient(probeOptions(n.addr(), nil))
	defer cl.Close()
	want := []string{"cluster_state:ok", "cluster_slots_ok:16384", "cluster_known_nodes:" + strconv.Itoa(nodes)}
	deadline := time.Now().Add(clusterReadyTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var info string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		info, _ = cl.ClusterInfo(ctx).Result()
		cancel()
		if hasLines(info, want) {
			return nil
		}
		if n.exited() {
			return fmt.Errorf("redistest: cluster node %s exited%s", n.addr(), n.logTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: cluster node %s not ok within %v; CLUSTER INFO:\n%s", n.addr(), clusterReadyTimeout, info)
		}
		<-tick.C
	}
}

func hasLines(info string, want []string) bool {
	lines := map[string]bool{}
	for _, l := range strings.Split(info, "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, w := range want {
		if !lines[w] {
			return false
		}
	}
	return true
}
