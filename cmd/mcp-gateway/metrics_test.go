package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/sessions/documents"
)

// unreadable is a document store whose versions' bytes cannot be read
// while down is set.
type unreadable struct {
	documents.Store
	down atomic.Bool
}

func (u *unreadable) Document(ctx context.Context, id string) ([]byte, error) {
	if u.down.Load() {
		return nil, errors.New("store down")
	}
	return u.Store.Document(ctx, id)
}

// A published version this replica cannot build is one invalid reload,
// however many checks see it (and built once per configuration); a store
// that cannot hand the version over is a store error, not an invalid
// document, and the version is tried again.
func TestReloadCountsABrokenVersionOnce(t *testing.T) {
	ctx := context.Background()
	docs := &unreadable{Store: documents.NewMemory()}
	_, _, err := docs.Publish(ctx, "sha256:bad", []byte("x"))
	require.NoError(t, err)
	var builds atomic.Int32
	rl := &reloader{cfg: &config{}, log: slog.New(slog.NewTextHandler(io.Discard, nil)), docs: docs, bus: pubsub.NewMemory(),
		replica: "r1", active: "sha256:good", metrics: newReloadMetrics(prometheus.NewRegistry()),
		build: func(context.Context, []byte) (*gateway.Catalog, error) {
			builds.Add(1)
			return nil, errors.New("does not load")
		}}
	count := func(outcome string) float64 { return testutil.ToFloat64(rl.metrics.reloads[outcome]) }

	docs.down.Store(true)
	rl.check(ctx)
	rl.check(ctx)
	require.Equal(t, 2.0, count(reloadStoreError))
	require.Zero(t, count(reloadInvalid), "the store failed, not the document")
	require.Zero(t, builds.Load())

	docs.down.Store(false)
	for range 5 {
		rl.check(ctx)
	}
	require.Equal(t, 1.0, count(reloadInvalid), "one version, one failure")
	require.Equal(t, int32(1), builds.Load(), "not rebuilt every check")

	// Another configuration may build it: tried (and counted) again.
	rl.cfg = &config{}
	rl.check(ctx)
	rl.check(ctx)
	require.Equal(t, 2.0, count(reloadInvalid))
	require.Equal(t, int32(2), builds.Load())
}
