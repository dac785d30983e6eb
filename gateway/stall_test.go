package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// With Redis stalled (SIGSTOP), calls on a session this replica has
// cached go on without waiting for it, and a request that needs the store
// fails with 503 once StoreTimeout is over. (No durations are asserted: a
// gateway whose StoreTimeout is an hour would hang its calls past the test
// client's timeout if they waited for Redis.)
func TestStalledRedis(t *testing.T) {
	srv := redistest.Standalone(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, MaxRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	prefix := redistest.Prefix(t)
	redistest.Cleanup(t, rdb, prefix)
	store := sessions.NewRedis(rdb, prefix, sessions.Limits{TTL: time.Hour})
	patient := newTestGatewayWith(t, Config{StoreTimeout: time.Hour, SessionTTL: time.Minute, SessionCacheTTL: time.Second},
		Deps{Store: store, Bus: pubsub.NewMemory()})
	bounded := newTestGatewayWith(t, Config{StoreTimeout: 300 * time.Millisecond}, Deps{Store: store, Bus: pubsub.NewMemory()})
	sid := patient.initialize(t, "2025-11-25")
	r := patient.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	require.Equal(t, 200, r.status)
	// The replica hears its own "changed" broadcast of initialized a moment
	// later and drops its copy: only a copy cached after that serves once
	// Redis stalls. Request until the copy stays.
	require.Eventually(t, func() bool {
		patient.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		time.Sleep(100 * time.Millisecond)
		cached, _ := patient.srv.cache.lookup(sid, time.Now())
		return cached != nil
	}, 5*time.Second, 10*time.Millisecond)

	srv.Pause()
	defer srv.Resume()
	// Past the cache's freshness and the touch interval (a minute's TTL
	// touches every 3.75s): the refresh and the touch now run in the
	// background, against the stalled Redis, and the calls go on.
	time.Sleep(4 * time.Second)
	for i := range 5 {
		r := patient.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"listNotes","arguments":{}}}`)
		require.Equal(t, 200, r.status, "call %d: %s", i, r.body)
		require.Nil(t, r.msg(t)["error"], "%s", r.body)
	}
	// What needs the store fails once the bound is over, with 503.
	r = bounded.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`})
	require.Equal(t, 503, r.status, "%s", r.body)
	require.Equal(t, -32003, r.errCode(t))

	srv.Resume()
	require.Eventually(t, func() bool {
		return bounded.srv.Ready(context.Background()) == nil
	}, 10*time.Second, 50*time.Millisecond)
}
