package completion

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp/mcptest"
)

func TestNothingToComplete(t *testing.T) {
	tab := mcptest.Table{}
	New().Register(tab)
	res, err := tab.Call("completion/complete", mcptest.Request(mcp.EraSession,
		`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"b"}}`))
	require.NoError(t, err)
	require.Equal(t, []string{}, res.(*result).Completion.Values)

	_, err = tab.Call("completion/complete", mcptest.Request(mcp.EraStateless, `{"ref":{"type":"ref/tool"},"argument":{"name":"a","value":"b"}}`))
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, mcp.CodeInvalidParams, rerr.Code)
}
