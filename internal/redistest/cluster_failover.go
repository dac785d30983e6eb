package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// FailoverCluster is a Redis Cluster of three masters with one replica each,
// owned by one test, which may kill its masters. It is never the cluster
// Main shares: a failover reshapes it.
type FailoverCluster struct {
	*ClusterServer

	mu sync.Mutex
	c  *cluster
}

// ClusterNodeTimeout is a FailoverCluster's cluster-node-timeout: a master
// silent this long is failed, and its replica takes over a moment later.
const ClusterNodeTimeout = time.Second

// ClusterWithReplicas starts a FailoverCluster whose every node reports the
// cluster ok and whose replicas are in sync. It stops when t ends; a failing
// test gets every node's log tail. It skips t when redis-server or redis-cli
// is not on PATH.
func ClusterWithReplicas(t testing.TB) *FailoverCluster {
	t.Helper()
	if err := lookBinaries("redis-server", "redis-cli"); err != nil {
		fail(t, err)
	}
	c, err := startClusterOf(t.TempDir(), 1, strconv.FormatInt(ClusterNodeTimeout.Milliseconds(), 10))
	if err != nil {
		t.Fatal(err)
	}
	f := &FailoverCluster{ClusterServer: c.public(), c: c}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("redistest: cluster logs:\n%s", f.Logs())
		}
		c.stop()
	})
	for _, n := range c.nodes {
		if role := nodeRole(n); role == "slave" {
			if err := awaitInfo(n, "replication", clusterReadyTimeout, "master_link_status:up"); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

// nodeRole is the role line of INFO replication: master or slave.
func nodeRole(n *server) string {
	c := redis.NewClient(probeOptions(n.addr(), nil))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, _ := c.Info(ctx, "replication").Result()
	for _, l := range strings.Split(info, "\n") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(l), "role:"); ok {
			return r
		}
	}
	return ""
}

// slotMasters are the slot ranges and their nodes (the master first), as
// the first running node that answers sees them.
func (f *FailoverCluster) slotMasters(ctx context.Context) ([]redis.ClusterSlot, error) {
	var lastErr error
	for _, n := range f.c.nodes {
		if n.exited() {
			continue
		}
		c := redis.NewClient(probeOptions(n.addr(), nil))
		slots, err := c.ClusterSlots(ctx).Result()
		c.Close()
		if err == nil {
			return slots, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("redistest: no node answers CLUSTER SLOTS: %v", lastErr)
}

// masterOfSlot is the master serving slot in slots, "" if none.
func masterOfSlot(slots []redis.ClusterSlot, slot int) string {
	for _, r := range slots {
		if slot >= r.Start && slot <= r.End && len(r.Nodes) > 0 {
			return r.Nodes[0].Addr
		}
	}
	return ""
}

// KillMasterOf sends SIGKILL to the master serving key's slot and returns
// its address.
func (f *FailoverCluster) KillMasterOf(t testing.TB, key string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	slots, err := f.slotMasters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	addr := masterOfSlot(slots, keySlot(key))
	for _, n := range f.c.nodes {
		if n.addr() == addr && !n.exited() {
			n.kill()
			return addr
		}
	}
	t.Fatalf("redistest: no running node serves %q (master %q)", key, addr)
	return ""
}

// AwaitFailover waits until every running node reports the cluster ok and
// key's slot is served by a master other than old, and returns it.
func (f *FailoverCluster) AwaitFailover(t testing.TB, key, old string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	slot := keySlot(key)
	for {
		f.mu.Lock()
		now, ok := f.failedOver(slot, old)
		f.mu.Unlock()
		if ok {
			return now
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: slot %d not failed over from %s within %v\n%s", slot, old, timeout, f.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (f *FailoverCluster) failedOver(slot int, old string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, n := range f.c.nodes {
		if n.exited() {
			continue
		}
		c := redis.NewClient(probeOptions(n.addr(), nil))
		info, err := c.ClusterInfo(ctx).Result()
		c.Close()
		if err != nil || !hasLines(info, []string{"cluster_state:ok"}) {
			return "", false
		}
	}
	slots, err := f.slotMasters(ctx)
	if err != nil {
		return "", false
	}
	now := masterOfSlot(slots, slot)
	return now, now != "" && now != old
}

// AwaitReplicated returns once every write each master took so far has
// reached its replica (see SentinelSet.AwaitReplicated for why a test that
// kills a master needs this): on each master it writes a key of a slot the
// master serves and WAITs for one replica.
func (f *FailoverCluster) AwaitReplicated(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	slots, err := f.slotMasters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]bool{}
	for i := 0; len(done) < 3; i++ {
		if i > 10000 {
			t.Fatalf("redistest: found no key for every master in %v", slots)
		}
		key := "redistest:replicated:" + strconv.Itoa(i)
		addr := masterOfSlot(slots, keySlot(key))
		if addr == "" || done[addr] {
			continue
		}
		if err := awaitReplicated(ctx, addr, nil, key); err != nil {
			t.Fatal(err)
		}
		done[addr] = true
	}
}

// Logs are the tails of every node's log, for failure messages.
func (f *FailoverCluster) Logs() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	for _, n := range f.c.nodes {
		fmt.Fprintf(&b, "--- %s%s\n", n.addr(), n.logTail())
	}
	return b.String()
}

// keySlot is the Cluster hash slot of key: CRC16 (XMODEM) of its hash tag,
// or of the whole key when it has none, modulo 16384.
func keySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}
