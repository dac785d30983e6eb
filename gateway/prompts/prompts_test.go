package prompts

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

type table map[string]mcp.Handler

func (t table) Handle(name string, _ mcp.Era, h mcp.Handler) { t[name] = h }

func TestEmptyListAndUnknownPrompt(t *testing.T) {
	tab := table{}
	New().Register(tab)
	res, err := tab["prompts/list"](&mcp.Request{Ctx: context.Background(), Method: "prompts/list"})
	require.NoError(t, err)
	require.NotNil(t, res.(*listResult).Prompts)
	_, err = tab["prompts/get"](&mcp.Request{Ctx: context.Background(), Method: "prompts/get", Params: json.RawMessage(`{"name":"p"}`)})
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, `Unknown prompt: "p"`, rerr.Message)
}
