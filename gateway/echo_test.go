package gateway

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// What a client sent comes back in errors as a short prefix at most: a
// 500 KB header, a 3 MB tool name, a method name, an argument's value.
func TestErrorsQuoteAShortPrefix(t *testing.T) {
	g := newTestGateway(t, Config{MaxBodyBytes: 8 << 20})
	huge := strings.Repeat("x", 500_000)
	bounded := func(what string, r reply) {
		t.Helper()
		require.Less(t, len(r.body), 2048, "%s: %d bytes came back", what, len(r.body))
		require.NotContains(t, string(r.body), strings.Repeat("x", 100), what)
	}
	bounded("protocol version header", g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		headers: map[string]string{"Mcp-Session-Id": g.initialize(t, "2025-11-25"), "MCP-Protocol-Version": huge}}))
	sid := g.initialize(t, "2025-11-25")
	bounded("method name", g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"`+huge+`"}`))
	bounded("tool name", g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+strings.Repeat("x", 3_000_000)+`"}}`))
	bounded("unknown argument", g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"listNotes","arguments":{"`+huge+`":1}}}`))
	bounded("argument value", g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getNote","arguments":{"id":"`+huge+`"}}}`))
	bounded("stateless version", g.modern(t, 1, "tools/list", "", map[string]string{"MCP-Protocol-Version": huge}))
}

// An id that is not valid UTF-8, or too long to repeat, is an invalid
// request answered without an id, alone and in a batch.
func TestIDsMustBeShortValidUTF8(t *testing.T) {
	g := newTestGateway(t, Config{})
	sid := g.initialize(t, "2025-03-26")
	for _, id := range []string{"\"bad \xff\xfe\"", `"` + strings.Repeat("7", 300) + `"`} {
		r := g.sessionCall(t, sid, "2025-03-26", `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
		require.Equal(t, 400, r.status, "%q", r.body)
		require.Equal(t, -32600, r.errCode(t))
		require.Nil(t, r.msg(t)["id"])
		r = g.modern(t, 1, "tools/list", "", nil) // the stateless era answers too
		require.Equal(t, 200, r.status)
		r = g.sessionCall(t, sid, "2025-03-26", `[{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}]`)
		require.Equal(t, 200, r.status)
		require.NotContains(t, string(r.body), id, "the id is not repeated")
		require.Contains(t, string(r.body), "valid UTF-8")
	}
}

func TestShortIDIsAShortHash(t *testing.T) {
	require.Len(t, shortID("abc"), 8)
	require.NotContains(t, shortID("a-session-id-of-43-characters-xxxxxxxxxxxx"), "session")
}
