package resources

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp/mcptest"
)

func TestEmptyListsAndNotFoundPerEra(t *testing.T) {
	tab := mcptest.Table{}
	New().Register(tab)
	require.Len(t, tab, 3)
	for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
		res, err := tab.Call("resources/list", mcptest.Request(era, ""))
		require.NoError(t, err)
		require.NotNil(t, res.(*listResult).Resources, "an empty list, not null")
		require.Empty(t, res.(*listResult).Resources)

		_, err = tab.Call("resources/templates/list", mcptest.Request(era, `{"cursor":"x"}`))
		var rerr *mcp.Error
		require.ErrorAs(t, err, &rerr)
		require.Equal(t, mcp.CodeInvalidParams, rerr.Code)

		_, err = tab.Call("resources/read", mcptest.Request(era, `{"uri":"x://y"}`))
		require.ErrorAs(t, err, &rerr)
		want := mcp.CodeResourceNotFound
		if era == mcp.EraStateless {
			want = mcp.CodeInvalidParams
		}
		require.Equal(t, want, rerr.Code)
		require.Equal(t, map[string]string{"uri": "x://y"}, rerr.Data)
	}
}
