package redistest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { Main(m) }

func TestStandaloneRestartsOnSamePort(t *testing.T) {
	ctx := context.Background()
	srv := Standalone(t)
	opt, err := redis.ParseURL(srv.URL)
	require.NoError(t, err)
	require.Equal(t, srv.Addr, opt.Addr)
	require.Equal(t, 0, opt.DB)

	c := srv.Client(t)
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	save, err := c.ConfigGet(ctx, "save").Result()
	require.NoError(t, err)
	require.Equal(t, "", save["save"], "no RDB snapshots")

	srv.Stop()
	require.Error(t, quickPing(ctx, srv.Addr), "a stopped server must not answer")
	srv.Stop() // idempotent

	srv.Start()
	require.NoError(t, c.Ping(ctx).Err(), "the same client reconnects to the same address")
	srv.Start() // idempotent
	require.NoError(t, c.Set(ctx, "k", "again", 0).Err())
}

func TestStandaloneStopsWhenTestEnds(t *testing.T) {
	var srv *Server
	var pid int
	t.Run("owner", func(t *testing.T) {
		srv = Standalone(t)
		pid = srv.s.cmd.Process.Pid
		require.True(t, alive(pid))
	})
	require.False(t, alive(pid), "redis-server %d outlived its test", pid)
	require.Error(t, quickPing(context.Background(), srv.Addr))
}

// TestServersDieWithTheTestBinary kills a test binary that holds a
// redis-server without letting it clean up, and expects the kernel to end
// the server too (the parent-death signal).
func TestServersDieWithTheTestBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death backstop is Linux only")
	}
	if err := lookBinaries("redis-server"); err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldServer$", "-test.v")
	cmd.Env = append(os.Environ(), "REDISTEST_HOLD=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	pid := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "redis-server pid "); ok {
			pid, err = strconv.Atoi(s)
			require.NoError(t, err)
			break
		}
	}
	require.NotZero(t, pid, "helper did not report its server")
	require.True(t, alive(pid))

	require.NoError(t, cmd.Process.Kill()) // no cleanup runs in the helper
	_ = cmd.Wait()
	require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 10*time.Millisecond,
		"redis-server %d outlived its killed test binary", pid)
}

// TestHelperHoldServer is the child of TestServersDieWithTheTestBinary.
func TestHelperHoldServer(t *testing.T) {
	if os.Getenv("REDISTEST_HOLD") != "1" {
		t.Skip("helper process only")
	}
	srv := Standalone(t)
	fmt.Printf("redis-server pid %d\n", srv.s.cmd.Process.Pid)
	select {} // until killed
}

// alive reports whether pid is a running process; a zombie counts as dead.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return runtime.GOOS != "linux"
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestPrefixIsUniqueAndPlain(t *testing.T) {
	a, b := Prefix(t), Prefix(t)
	require.NotEqual(t, a, b)
	require.True(t, strings.HasPrefix(a, "rt:TestPrefixIsUniqueAndPlain:"), a)
	require.NotContainsf(t, a, "{", "a prefix must not form a hash tag")
	t.Run("odd {name} *?[x]", func(t *testing.T) {
		p := Prefix(t)
		require.False(t, strings.ContainsAny(p, "{}*?[]\\ "), p)
	})
}

func TestCleanupDeletesOnlyThePrefix(t *testing.T) {
	ctx := context.Background()
	c := Standalone(t).Client(t)
	p := "rt:glob*[x]:"   // metacharacters must match literally
	for i := range 1200 { // more than one SCAN page
		require.NoError(t, c.Set(ctx, p+strconv.Itoa(i), "v", 0).Err())
	}
	keep := []string{"rt:glob:1", "rt:globx[x]:1", "rt:glob*[x]", "other"}
	for _, k := range keep {
		require.NoError(t, c.Set(ctx, k, "v", 0).Err())
	}
	n, err := deletePrefix(ctx, c, p)
	require.NoError(t, err)
	require.EqualValues(t, 1200, n)
	left, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	require.ElementsMatch(t, keep, left)
}

func TestCluster(t *testing.T) {
	ctx := context.Background()
	cs := Cluster(t)
	require.Len(t, cs.Addrs, 3)
	opt, err := redis.ParseClusterURL(cs.URL)
	require.NoError(t, err)
	require.Equal(t, cs.Addrs, opt.Addrs)

	c := cs.Client(t)
	p := Prefix(t)
	Cleanup(t, c, p)

	// Keys sharing a hash tag share a slot, so multi-key commands work.
	tagged := []string{p + "{s1}a", p + "{s1}b", p + "{s1}c"}
	require.NoError(t, c.MSet(ctx, tagged[0], "1", tagged[1], "2", tagged[2], "3").Err())
	vals, err := c.MGet(ctx, tagged...).Result()
	require.NoError(t, err)
	require.Equal(t, []any{"1", "2", "3"}, vals)
	require.NoError(t, c.Eval(ctx, "return redis.call('RENAME', KEYS[1], KEYS[2])", tagged[:2]).Err())
	// Keys without a common tag do not: the cluster is really sharded.
	err = c.Do(ctx, "MSET", p+"{x}1", "1", p+"{y}2", "2").Err()
	require.ErrorContains(t, err, "CROSSSLOT")

	// Every master serves some of a spread of keys.
	for i := range 60 {
		require.NoError(t, c.Set(ctx, fmt.Sprintf("%s{%d}", p, i), "v", 0).Err())
	}
	perNode := map[string]int{}
	for _, a := range cs.Addrs {
		node := redis.NewClient(&redis.Options{Addr: a})
		keys, err := node.Keys(ctx, escapeGlob(p)+"*").Result()
		node.Close()
		require.NoError(t, err)
		perNode[a] = len(keys)
	}
	for a, n := range perNode {
		require.NotZero(t, n, "master %s holds none of 60 keys: %v", a, perNode)
	}

	n, err := deletePrefix(ctx, c, p)
	require.NoError(t, err)
	require.EqualValues(t, 62, n, "2 tagged keys left after the rename, plus 60")
}

func TestClusterSharedUnderMain(t *testing.T) {
	a, b := Cluster(t), Cluster(t)
	require.Equal(t, a.Addrs, b.Addrs, "under Main the binary shares one cluster")
}

func TestClusterOwnedWithoutMain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second cluster")
	}
	mainActive.Store(false)
	defer mainActive.Store(true)
	var cs *ClusterServer
	t.Run("owner", func(t *testing.T) {
		cs = Cluster(t)
		require.NoError(t, cs.Client(t).Ping(context.Background()).Err())
	})
	for _, a := range cs.Addrs {
		require.Error(t, quickPing(context.Background(), a), "node %s outlived its test", a)
	}
}

// quickPing pings addr once, without go-redis's retries.
func quickPing(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	return c.Ping(ctx).Err()
}

func TestTLSServer(t *testing.T) {
	ctx := context.Background()
	srv := TLS(t, "yes")
	require.True(t, strings.HasPrefix(srv.URL, "rediss://127.0.0.1:"), srv.URL)
	require.NoError(t, srv.Client(t).Ping(ctx).Err(), "with the client certificate")

	noCert := redis.NewClient(&redis.Options{Addr: srv.Addr, TLSConfig: srv.Certs.ClientTLS(false), MaxRetries: -1, DialerRetries: 1})
	defer noCert.Close()
	require.Error(t, noCert.Ping(ctx).Err(), "tls-auth-clients yes refuses a client without a certificate")

	plain := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialerRetries: 1, ReadTimeout: time.Second})
	defer plain.Close()
	require.Error(t, plain.Ping(ctx).Err(), "the plain port is off: TLS only")
}

// A killed master's replica takes over, with every write acknowledged by
// WAIT before the kill.
func TestSentinelFailover(t *testing.T) {
	ctx := context.Background()
	set := Sentinel(t)
	opt, err := redis.ParseFailoverURL(set.URL)
	require.NoError(t, err)
	require.Equal(t, set.SentinelAddrs, opt.SentinelAddrs)
	require.Equal(t, set.MasterName, opt.MasterName)

	c := set.Client(t)
	p := Prefix(t)
	require.NoError(t, c.Set(ctx, p+"k", "v", 0).Err())
	set.AwaitReplicated(t)

	start := time.Now()
	old := set.KillMaster(t)
	now := set.AwaitNewMaster(t, old, 30*time.Second)
	require.NotEqual(t, old, now)
	t.Logf("sentinels named %s master %v after %s was killed", now, time.Since(start).Round(time.Millisecond), old)
	require.Eventually(t, func() bool { return c.Get(ctx, p+"k").Val() == "v" }, 10*time.Second, 20*time.Millisecond,
		"the failover client reads the write from the new master")
}

// A killed master's replica takes over its slots, with every write
// acknowledged by WAIT before the kill.
func TestClusterWithReplicasFailover(t *testing.T) {
	ctx := context.Background()
	fc := ClusterWithReplicas(t)
	require.Len(t, fc.Addrs, 6)
	c := fc.Client(t)
	for _, k := range []string{"a", "{user1000}.following", "foo{}{bar}", "rt:x:{sid}:log", "{}"} {
		want, err := c.ClusterKeySlot(ctx, k).Result()
		require.NoError(t, err)
		require.EqualValues(t, want, keySlot(k), k)
	}
	p := Prefix(t)
	for i := range 30 {
		require.NoError(t, c.Set(ctx, fmt.Sprintf("%s{%d}", p, i), "v", 0).Err())
	}
	fc.AwaitReplicated(t)

	key := p + "{0}"
	start := time.Now()
	old := fc.KillMasterOf(t, key)
	now := fc.AwaitFailover(t, key, old, 30*time.Second)
	t.Logf("%s took over from %s %v after the kill", now, old, time.Since(start).Round(time.Millisecond))
	for i := range 30 {
		k := fmt.Sprintf("%s{%d}", p, i)
		var got string
		var err error
		ok := assert.Eventually(t, func() bool { got, err = c.Get(ctx, k).Result(); return got == "v" }, 10*time.Second, 20*time.Millisecond)
		require.True(t, ok, "%s: %q %v", k, got, err)
	}
}
