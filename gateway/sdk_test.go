package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestOfficialGoSDKClient proves that a 2026-era client (server/discover)
// and a 2025-era client (initialize) both work against the same gateway.
func TestOfficialGoSDKClient(t *testing.T) {
	g := newTestGateway(t, Config{})
	for _, tc := range []struct {
		name        string
		version     string // "" = the SDK's default
		wantVersion string
		wantSession bool
	}{
		{name: "default revision", version: "", wantVersion: "2026-07-28", wantSession: false},
		{name: "forced 2025-06-18", version: "2025-06-18", wantVersion: "2025-06-18", wantSession: true},
		{name: "forced 2025-03-26", version: "2025-03-26", wantVersion: "2025-03-26", wantSession: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "sdk-test", Version: "1.0.0"}, nil)
			var opts *mcp.ClientSessionOptions
			if tc.version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: tc.version}
			}
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.url, MaxRetries: -1}, opts)
			require.NoError(t, err)
			defer cs.Close()
			require.Equal(t, tc.wantVersion, cs.InitializeResult().ProtocolVersion)
			if tc.wantSession {
				require.NotEmpty(t, cs.ID(), "a session-era client gets a session")
			}

			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				require.NoError(t, err)
				names = append(names, tool.Name)
			}
			require.Contains(t, names, "getNote")
			require.Contains(t, names, "createNote")

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getNote", Arguments: map[string]any{"id": 1}})
			require.NoError(t, err)
			require.False(t, res.IsError, "%+v", res.Content)
			require.NotNil(t, res.StructuredContent)
			require.NotEmpty(t, res.Content)

			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "createNote", Arguments: map[string]any{"title": "from " + tc.name}})
			require.NoError(t, err)
			require.False(t, res.IsError, "%+v", res.Content)

			// A wrong argument is a tool error the model can act on, not a protocol error.
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "getNote", Arguments: map[string]any{"id": "not-a-number"}})
			require.NoError(t, err)
			require.True(t, res.IsError)
		})
	}
}
