package completion

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

type table map[string]mcp.Handler

func (t table) Handle(name string, _ mcp.Era, h mcp.Handler) { t[name] = h }

func TestNothingToComplete(t *testing.T) {
	tab := table{}
	New().Register(tab)
	r := &mcp.Request{Ctx: context.Background(), Method: "completion/complete",
		Params: json.RawMessage(`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"b"}}`)}
	res, err := tab["completion/complete"](r)
	require.NoError(t, err)
	require.Equal(t, []string{}, res.(*result).Completion.Values)

	r.Params = json.RawMessage(`{"ref":{"type":"ref/tool"},"argument":{"name":"a","value":"b"}}`)
	_, err = tab["completion/complete"](r)
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, mcp.CodeInvalidParams, rerr.Code)
}
