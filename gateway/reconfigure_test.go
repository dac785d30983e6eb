package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

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

// The session caps a reload sets are the ones initialize enforces.
func TestReconfigureChangesSessionCaps(t *testing.T) {
	g := newTestGateway(t, Config{MaxSessionsPerClient: 5})
	g.initialize(t, "2025-11-25")
	cur := g.srv.currentCatalog()
	announce, err := g.srv.Reconfigure(Config{MaxSessionsPerClient: 1}, *cur)
	require.NoError(t, err)
	announce()
	r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`})
	require.Equal(t, http.StatusTooManyRequests, r.status, "the lowered cap applies: %s", r.body)
	require.Contains(t, string(r.body), "holds 1 open sessions")
}

// A reload's max_concurrent_calls bounds the calls started after it.
func TestReconfigureChangesMaxConcurrentCalls(t *testing.T) {
	started, release := make(chan struct{}, 4), make(chan struct{})
	g := newHeldGateway(t, Config{}, started, release)
	_, err := g.srv.Reconfigure(Config{MaxConcurrentCalls: 1}, *g.srv.currentCatalog())
	require.NoError(t, err)
	sid := g.initialize(t, "2025-11-25")
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
	first, second := make(chan reply, 1), make(chan reply, 1)
	go func() { first <- g.sessionCall(t, sid, "2025-11-25", call) }()
	waitFor(t, started, "the first call")
	go func() { second <- g.sessionCall(t, sid, "2025-11-25", call) }()
	defer func() { close(release); <-first }()
	select {
	case r := <-second:
		require.Contains(t, string(r.body), "busy", "one slot, taken: %s", r.body)
	case <-started:
		t.Fatal("a second call reached the backend: the reloaded bound does not apply")
	case <-time.After(10 * time.Second):
		t.Fatal("the second call was not answered")
	}
}

// CheckReconfigure refuses what Reconfigure would, serving on unchanged.
func TestCheckReconfigureChangesNothing(t *testing.T) {
	g := newTestGateway(t, Config{})
	cur := g.srv.currentCatalog()
	bad := "{{"
	for _, cfg := range []Config{
		{Prompts: []DeclaredPrompt{{Name: "p", Messages: []PromptMessage{{Role: "user", Text: &bad}}}}},
		{ToolMode: "most"},
		{ToolsetsEnabled: []string{"nosuch"}},
	} {
		require.Error(t, g.srv.CheckReconfigure(cfg, *cur))
		_, err := g.srv.Reconfigure(cfg, *cur)
		require.Error(t, err)
	}
	require.Same(t, cur, g.srv.currentCatalog())
	require.NoError(t, g.srv.CheckReconfigure(Config{ToolMode: "search"}, *cur))
}
