package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testLegacySSEClient runs the TypeScript SDK's SSEClientTransport (the
// 2024-11-05 HTTP+SSE transport) through the round-robin proxy: the event
// stream is held by one replica while the POSTs rotate over all three, and
// every answer still arrives on the stream.
func testLegacySSEClient(t *testing.T, env *replicaEnv) {
	node := findNodeSDK(t)
	base := strings.TrimSuffix(env.proxy.URL, "/mcp")
	const calls = 4
	cmd := exec.Command(node, filepath.Join("tsclient", "legacy.mjs"), base+"/mcp/sse", strconv.Itoa(calls))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node: %s", stderr.String())
	var res struct {
		SessionID       string   `json:"sessionId"`
		ProtocolVersion string   `json:"protocolVersion"`
		Tools           int      `json:"tools"`
		Calls           []string `json:"calls"`
		Pinged          bool     `json:"pinged"`
		Old             struct {
			SessionID       string `json:"sessionId"`
			ProtocolVersion string `json:"protocolVersion"`
			Text            string `json:"text"`
		} `json:"old"`
	}
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	require.Equal(t, "2025-11-25", res.ProtocolVersion, "the SDK's Client asks for its newest revision")
	require.Positive(t, res.Tools)
	require.Len(t, res.Calls, calls)
	for i, text := range res.Calls {
		require.Contains(t, text, fmt.Sprintf("legacy %d", i))
	}
	require.True(t, res.Pinged)
	// initialize, initialized, tools/list, the calls and ping: POSTs on
	// every replica, while one replica held the stream.
	require.Len(t, env.proxy.replicasFor(res.SessionID), 3, "the POSTs went to every replica")

	require.Equal(t, "2024-11-05", res.Old.ProtocolVersion, "a 2024-11-05-only client gets its revision")
	require.Contains(t, res.Old.Text, "legacy 0", "and sees the notes the first client made")
	require.NotEqual(t, res.SessionID, res.Old.SessionID)

	// Closing its stream ended each session, on every replica.
	for _, sid := range []string{res.SessionID, res.Old.SessionID} {
		awaitTrue(t, 5*time.Second, 20*time.Millisecond, func() bool {
			for i := range env.addrs {
				resp, err := http.Post("http://"+env.addrs[i]+"/mcp/messages?sessionId="+sid, "application/json",
					strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
				if err != nil {
					return false
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusNotFound {
					return false
				}
			}
			return true
		}, "the session %s ended on every replica", sid)
	}
}
