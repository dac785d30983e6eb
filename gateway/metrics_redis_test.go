package gateway

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// With Redis, mcpgw_active_sessions is the deployment's: the shared
// session count, which another replica's sessions are part of.
func TestActiveSessionsAreTheDeployments(t *testing.T) {
	srv := redistest.Standalone(t)
	rdb := srv.Client(t)
	prefix := redistest.Prefix(t)
	redistest.Cleanup(t, rdb, prefix)
	counter := quota.NewRedisSessionCounter(rdb, prefix+"sc:")
	newReplica := func(reg prometheus.Registerer) *testGateway {
		return newTestGatewayWith(t, Config{SessionSampleInterval: 10 * time.Millisecond},
			Deps{Metrics: reg, Store: sessions.NewRedis(rdb, prefix, sessions.Limits{TTL: time.Hour}), Bus: pubsub.NewMemory(), Sessions: counter})
	}
	reg := prometheus.NewRegistry()
	a, b := newReplica(reg), newReplica(nil)
	a.initialize(t, "2025-11-25")
	b.initialize(t, "2025-11-25")
	sid := b.initialize(t, "2025-11-25")
	require.Eventually(t, func() bool { return gaugeValue(t, reg, "mcpgw_active_sessions") == 3 }, 10*time.Second, 10*time.Millisecond)
	b.do(t, exchange{method: "DELETE", headers: map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}})
	require.Eventually(t, func() bool { return gaugeValue(t, reg, "mcpgw_active_sessions") == 2 }, 10*time.Second, 10*time.Millisecond)
}
