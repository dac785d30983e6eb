package main

import (
	"context"
	"slices"
	"strings"
	"time"
)

// streamSize is a push log's XLEN and MEMORY USAGE (SAMPLES 0: exact),
// and the event bytes its session record counts against stream_max_bytes
// (field b of the record).
func (r *redisServer) streamSize(logKey, recKey string) (n, bytes, data int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, _ = r.client.XLen(ctx, logKey).Result()
	bytes, _ = r.client.MemoryUsage(ctx, logKey, 0).Result()
	data, _ = r.client.HGet(ctx, recKey, "b").Int64()
	return n, bytes, data
}

// connectedClients is INFO clients connected_clients.
func (r *redisServer) connectedClients() int64 { return r.infoField("clients", "connected_clients") }

// keyKind is the keys of one kind under a prefix: how many, and the mean
// MEMORY USAGE of up to 200 of them.
type keyKind struct {
	kind  string
	count int
	mean  float64
}

// keyKinds groups the keys under prefix by what follows it up to the
// first ':' or '{' (s: session records, e: push logs, ...).
func (r *redisServer) keyKinds(prefix string) []keyKind {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	counts := map[string]int{}
	sums := map[string]int64{}
	sampled := map[string]int{}
	iter := r.client.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		rest := strings.TrimPrefix(iter.Val(), prefix)
		kind := rest
		if i := strings.IndexAny(rest, ":{"); i >= 0 {
			kind = rest[:i+1]
		}
		counts[kind]++
		if sampled[kind] < 200 {
			if m, err := r.client.MemoryUsage(ctx, iter.Val(), 0).Result(); err == nil {
				sums[kind] += m
				sampled[kind]++
			}
		}
	}
	var out []keyKind
	for k, n := range counts {
		kk := keyKind{kind: k, count: n}
		if sampled[k] > 0 {
			kk.mean = float64(sums[k]) / float64(sampled[k])
		}
		out = append(out, kk)
	}
	slices.SortFunc(out, func(a, b keyKind) int { return strings.Compare(a.kind, b.kind) })
	return out
}
