package quota

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

// BenchmarkAllow measures one decision, from parallel callers over 1000
// keys, so that both allowed and denied paths run.
func BenchmarkAllow(b *testing.B) {
	b.Run("Memory", func(b *testing.B) { benchAllow(b, NewMemory()) })
	b.Run("Redis", func(b *testing.B) {
		c := redistest.Standalone(b).Client(b)
		p := redistest.Prefix(b)
		redistest.Cleanup(b, c, p)
		benchAllow(b, NewRedis(c, p))
	})
	b.Run("Cluster", func(b *testing.B) {
		c := redistest.Cluster(b).Client(b)
		p := redistest.Prefix(b)
		redistest.Cleanup(b, c, p)
		benchAllow(b, NewRedis(c, p))
	})
}

func benchAllow(b *testing.B, l Limiter) {
	ctx := context.Background()
	lim := Limit{Rate: 100, Burst: 10}
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "principal-" + strconv.Itoa(i)
	}
	var seq atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(1)) * 7919
		for pb.Next() {
			i++
			if _, err := l.Allow(ctx, keys[i%len(keys)], lim); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkGateAdmit measures one Admit of three buckets and a quota, from
// parallel callers over 1000 tags (client identities).
func BenchmarkGateAdmit(b *testing.B) {
	b.Run("Memory", func(b *testing.B) { benchAdmit(b, NewMemoryGate()) })
	b.Run("Redis", func(b *testing.B) {
		c := redistest.Standalone(b).Client(b)
		p := redistest.Prefix(b)
		redistest.Cleanup(b, c, p)
		benchAdmit(b, NewRedisGate(c, p))
	})
	b.Run("Cluster", func(b *testing.B) {
		c := redistest.Cluster(b).Client(b)
		p := redistest.Prefix(b)
		redistest.Cleanup(b, c, p)
		benchAdmit(b, NewRedisGate(c, p))
	})
}

func benchAdmit(b *testing.B, g Gate) {
	ctx := context.Background()
	adms := make([]Admission, 1000)
	for i := range adms {
		adms[i] = Admission{
			Tag: "principal-" + strconv.Itoa(i),
			Buckets: []Bucket{
				{Key: "t:search", Limit: Limit{Rate: 100, Burst: 10}, Scope: "per_tool"},
				{Key: "session", Limit: Limit{Rate: 1000, Burst: 100}, Scope: "per_session"},
				{Key: "client", Limit: Limit{Rate: 1000, Burst: 100}, Scope: "per_client"},
			},
			Quotas: []Quota{{Key: "q:daily", Name: "daily", Limit: 1 << 40, Window: 24 * time.Hour}},
		}
	}
	var seq atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(1)) * 7919
		for pb.Next() {
			i++
			if _, err := g.Admit(ctx, adms[i%len(adms)]); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
