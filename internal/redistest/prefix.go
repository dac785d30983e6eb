package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Prefix returns a key prefix unique to this test run: "rt:", a readable
// form of t.Name() and random hex, ending in ':'. It contains no glob
// metacharacters and no braces, so it neither widens a SCAN MATCH nor
// forms a Cluster hash tag of its own.
func Prefix(t testing.TB) string {
	var b strings.Builder
	for _, r := range t.Name() {
		if b.Len() >= 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return "rt:" + b.String() + ":" + randomHex(8) + ":"
}

// Cleanup deletes every key starting with prefix when t ends, with SCAN and
// DEL on every master of c (each node of a Cluster, each shard of a Ring).
// A failure to clean is a test error: a shared server must not collect
// leftovers silently. It matters for servers that outlive the test (the
// machine's Redis, the cluster shared under Main); a Standalone is thrown
// away whole, and one the test leaves stopped cannot be cleaned.
func Cleanup(t testing.TB, c redis.UniversalClient, prefix string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n, err := deletePrefix(ctx, c, prefix)
		if err != nil {
			t.Errorf("redistest: clean up keys %q after %d deleted: %v", prefix+"*", n, err)
		}
	})
}

// deletePrefix removes every key starting with prefix and returns how many
// it deleted.
func deletePrefix(ctx context.Context, c redis.UniversalClient, prefix string) (int64, error) {
	pattern := escapeGlob(prefix) + "*"
	// ForEachMaster and ForEachShard call fn concurrently, so nodes report
	// their counts on a channel that is summed afterwards.
	counts := make(chan int64, 1024)
	perNode := func(ctx context.Context, node *redis.Client) error {
		n, err := deleteMatching(ctx, node, pattern)
		counts <- n
		return err
	}
	var err error
	switch c := c.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, perNode)
	case *redis.Ring:
		err = c.ForEachShard(ctx, perNode)
	case *redis.Client:
		err = perNode(ctx, c)
	default:
		return 0, fmt.Errorf("redistest: cannot clean up with a %T", c)
	}
	close(counts)
	var total int64
	for n := range counts {
		total += n
	}
	return total, err
}

// deleteMatching SCANs one node and deletes what matches. Keys are deleted
// one per DEL (pipelined) because keys of different hash slots cannot share
// a DEL on a Cluster node.
func deleteMatching(ctx context.Context, node *redis.Client, pattern string) (int64, error) {
	var deleted int64
	var cursor uint64
	for {
		keys, next, err := node.Scan(ctx, cursor, pattern, 500).Result()
		if err != nil {
			return deleted, err
		}
		if len(keys) > 0 {
			cmds, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range keys {
					p.Del(ctx, k)
				}
				return nil
			})
			if err != nil {
				return deleted, err
			}
			for _, cmd := range cmds {
				deleted += cmd.(*redis.IntCmd).Val()
			}
		}
		if next == 0 {
			return deleted, nil
		}
		cursor = next
	}
}

// escapeGlob quotes the characters SCAN MATCH treats specially.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// randomHex is used where a name must not collide across test binaries.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
