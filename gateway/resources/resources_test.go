package resources

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

type table map[string]mcp.Handler

func (t table) Handle(name string, _ mcp.Era, h mcp.Handler) { t[name] = h }

func TestEmptyListsAndNotFoundPerEra(t *testing.T) {
	tab := table{}
	New().Register(tab)
	require.Len(t, tab, 3)
	for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
		r := &mcp.Request{Ctx: context.Background(), Era: era, Method: "resources/list", Stamp: &mcp.Stamper{}}
		res, err := tab["resources/list"](r)
		require.NoError(t, err)
		require.Empty(t, res.(*listResult).Resources)
		require.NotNil(t, res.(*listResult).Resources, "an empty list, not null")

		r.Params = json.RawMessage(`{"cursor":"x"}`)
		_, err = tab["resources/templates/list"](r)
		var rerr *mcp.Error
		require.ErrorAs(t, err, &rerr)
		require.Equal(t, mcp.CodeInvalidParams, rerr.Code)

		r.Method, r.Params = "resources/read", json.RawMessage(`{"uri":"x://y"}`)
		_, err = tab["resources/read"](r)
		require.ErrorAs(t, err, &rerr)
		want := mcp.CodeResourceNotFound
		if era == mcp.EraStateless {
			want = mcp.CodeInvalidParams
		}
		require.Equal(t, want, rerr.Code)
		require.Equal(t, map[string]string{"uri": "x://y"}, rerr.Data)
	}
}
