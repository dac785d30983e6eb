package gateway

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	wire "github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// 2026-07-28 has no ping: the Go SDK's default-revision client sends it
// with the 2026 headers and no _meta, and gets what the README promises,
// 404 with -32601, not a complaint about _meta it could not fix. A session
// client's ping is answered.
func TestGoSDKPingPerEra(t *testing.T) {
	g := newTestGateway(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-test", Version: "1.0.0"}, nil)

	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.url, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer cs.Close()
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	err = cs.Ping(ctx, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), "Method not found: ping")
	require.Contains(t, err.Error(), "Not Found")

	old, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer old.Close()
	require.NoError(t, old.Ping(ctx, nil))
}

// The stateless era's order, with and without _meta: a mismatched
// Mcp-Method header, then an unknown method, then the missing _meta.
func TestStatelessErrorPrecedence(t *testing.T) {
	g := newTestGateway(t, Config{})
	modernHeaders := func(method string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	}
	for _, tc := range []struct {
		name    string
		body    string
		headers map[string]string
		status  int
		code    int
	}{
		{"no _meta, unknown method", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, modernHeaders("ping"), http.StatusNotFound, wire.CodeMethodNotFound},
		{"no _meta, header mismatch first", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, modernHeaders("tools/list"), http.StatusBadRequest, wire.CodeHeaderMismatch},
		{"no _meta, known method", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, modernHeaders("tools/list"), http.StatusBadRequest, wire.CodeInvalidParams},
		{"no _meta, only the version header", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2026-07-28"}, http.StatusBadRequest, wire.CodeInvalidParams},
		{"_meta without capabilities, unknown method", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, modernHeaders("ping"), http.StatusNotFound, wire.CodeMethodNotFound},
		{"_meta without capabilities, known method", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, modernHeaders("tools/list"), http.StatusBadRequest, wire.CodeInvalidParams},
		{"unsupported version before the method", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}`, map[string]string{"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "ping"}, http.StatusBadRequest, wire.CodeUnsupportedProtocolVer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(t, exchange{body: tc.body, headers: tc.headers})
			require.Equal(t, tc.status, r.status, "%s", r.body)
			require.Equal(t, tc.code, r.errCode(t), "%s", r.body)
		})
	}
}
