package prompts

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp/mcptest"
)

func TestEmptyListAndUnknownPrompt(t *testing.T) {
	tab := mcptest.Table{}
	New().Register(tab)
	res, err := tab.Call("prompts/list", mcptest.Request(mcp.EraSession, ""))
	require.NoError(t, err)
	require.NotNil(t, res.(*listResult).Prompts)
	_, err = tab.Call("prompts/get", mcptest.Request(mcp.EraStateless, `{"name":"p"}`))
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, `Unknown prompt: "p"`, rerr.Message)
}
