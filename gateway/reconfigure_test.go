package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// Reconfigure swaps the limits, the tools served and the prompts while a
// session and its stream stay; an invalid configuration changes nothing.
func TestReconfigureKeepsSessionsAndStreams(t *testing.T) {
	g := newTestGateway(t, Config{})
	sid := g.initialize(t, "2025-11-25")
	stream := g.openGET(t, sid, "")
	call := func(id string) reply {
		return g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"listNotes","arguments":{}}}`)
	}
	for _, id := range []string{"2", "3"} {
		require.NotContains(t, string(call(id).body), "rate limit", "unlimited before")
	}

	cur := g.srv.currentCatalog()
	set, err := toolgen.Generate(cur.Doc, toolgen.Options{Exclude: []string{"deleteNote"}})
	require.NoError(t, err)
	next := Catalog{Doc: cur.Doc, Tools: set, Caller: cur.Caller, Version: "v2"}
	text := "Summarize"
	cfg := Config{ToolCallLimit: quota.Limit{Rate: 0.001, Burst: 1},
		Prompts: []DeclaredPrompt{{Name: "summarize", Messages: []PromptMessage{{Role: "user", Text: &text}}}}}

	_, err = g.srv.Reconfigure(Config{Prompts: []DeclaredPrompt{{Name: ""}}}, next)
	require.Error(t, err, "a prompt without a name")
	list := g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	require.Contains(t, string(list.body), `"deleteNote"`, "nothing changed")

	announce, err := g.srv.Reconfigure(cfg, next)
	require.NoError(t, err)
	announce()
	got := map[string]bool{}
	for len(got) < 2 {
		ev := stream.next(t)
		for _, m := range []string{"notifications/tools/list_changed", "notifications/prompts/list_changed"} {
			if strings.Contains(ev.data, m) {
				got[m] = true
			}
		}
	}
	list = g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, list.status, "the same session")
	require.NotContains(t, string(list.body), `"deleteNote"`)
	prompts := g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":6,"method":"prompts/list"}`)
	require.Contains(t, string(prompts.body), `"summarize"`)
	require.NotContains(t, string(call("7").body), "rate limit", "the burst admits one")
	require.Contains(t, string(call("8").body), "rate limit exceeded", "the new limit applies")
	require.NoError(t, g.srv.Ready(context.Background()))
}
