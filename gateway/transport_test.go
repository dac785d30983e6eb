package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
	"github.com/stretchr/testify/require"
)

func TestInitializeNegotiatesVersionAndMintsSession(t *testing.T) {
	g := newTestGateway(t, Config{})
	for _, tc := range []struct{ asked, want string }{
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2024-11-05", "2025-11-25"},
		{"2099-01-01", "2025-11-25"},
		{"2026-07-28", "2025-11-25"}, // no handshake in the stateless revision
	} {
		t.Run(tc.asked, func(t *testing.T) {
			r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + tc.asked + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`})
			require.Equal(t, http.StatusOK, r.status)
			res := r.result(t)
			require.Equal(t, tc.want, res["protocolVersion"])
			require.Contains(t, res["capabilities"], "tools")
			sid := r.header.Get("Mcp-Session-Id")
			require.GreaterOrEqual(t, len(sid), 22, "at least 128 bits")
			for _, c := range sid {
				require.True(t, c >= 0x21 && c <= 0x7e, "session id must be visible ASCII: %q", sid)
			}
		})
	}
	a := g.initialize(t, "2025-06-18")
	b := g.initialize(t, "2025-06-18")
	require.NotEqual(t, a, b)
}

func TestSessionEraStatusCodes(t *testing.T) {
	g := newTestGateway(t, Config{MaxBodyBytes: 4096})
	sid := g.initialize(t, "2025-06-18")
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range hdr {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	tests := []struct {
		name   string
		call   exchange
		status int
		code   int // JSON-RPC error code; 0 = expect no error (or no body)
	}{
		{"ok", exchange{body: list, headers: hdr}, 200, 0},
		{"missing session", exchange{body: list}, 400, mcp.CodeInvalidRequest},
		{"unknown session", exchange{body: list, headers: with(map[string]string{"Mcp-Session-Id": "nope"})}, 404, mcp.CodeSessionNotFound},
		{"unsupported version header", exchange{body: list, headers: with(map[string]string{"MCP-Protocol-Version": "1999-01-01"})}, 400, mcp.CodeInvalidRequest},
		{"other supported version header", exchange{body: list, headers: with(map[string]string{"MCP-Protocol-Version": "2025-03-26"})}, 200, 0},
		{"no version header", exchange{body: list, headers: with(map[string]string{"MCP-Protocol-Version": ""})}, 200, 0},
		{"notification", exchange{body: `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, headers: hdr}, 202, 0},
		{"response", exchange{body: `{"jsonrpc":"2.0","id":"s1","result":{}}`, headers: hdr}, 202, 0},
		{"wrong accept", exchange{body: list, headers: with(map[string]string{"Accept": "application/json"})}, 406, mcp.CodeInvalidRequest},
		{"wrong content type", exchange{body: list, headers: with(map[string]string{"Content-Type": "text/plain"})}, 415, mcp.CodeInvalidRequest},
		{"too large", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`, headers: hdr}, 413, mcp.CodeInvalidRequest},
		{"malformed json", exchange{body: `{"jsonrpc":"2.0",`, headers: hdr}, 400, mcp.CodeParseError},
		{"not jsonrpc 2.0", exchange{body: `{"jsonrpc":"1.0","id":1,"method":"ping"}`, headers: hdr}, 400, mcp.CodeInvalidRequest},
		{"jsonrpc not a string", exchange{body: `{"jsonrpc":2.0,"id":1,"method":"ping"}`, headers: hdr}, 400, mcp.CodeInvalidRequest},
		{"jsonrpc with escapes", exchange{body: `{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`, headers: hdr}, 200, 0},
		{"method not a string", exchange{body: `{"jsonrpc":"2.0","id":1,"method":7}`, headers: hdr}, 400, mcp.CodeInvalidRequest},
		{"method with escapes", exchange{body: `{"jsonrpc":"2.0","id":1,"method":"p\u0069ng"}`, headers: hdr}, 200, 0},
		{"member names are exact", exchange{body: `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, headers: hdr}, 400, mcp.CodeInvalidRequest},
		{"not an object", exchange{body: `"ping"`, headers: hdr}, 400, mcp.CodeInvalidRequest},
		{"trailing data", exchange{body: list + `{}`, headers: hdr}, 400, mcp.CodeParseError},
		{"control character in a string", exchange{body: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":\"\x01\"}}", headers: hdr}, 400, mcp.CodeParseError},
		{"name case differs", exchange{body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"NAME":"getNote"}}`, headers: hdr}, 200, mcp.CodeInvalidParams},
		{"null id", exchange{body: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, headers: hdr}, 400, mcp.CodeInvalidRequest},
		{"unknown method", exchange{body: `{"jsonrpc":"2.0","id":3,"method":"nope/nope"}`, headers: hdr}, 200, mcp.CodeMethodNotFound},
		{"stateless-only method", exchange{body: `{"jsonrpc":"2.0","id":3,"method":"server/discover"}`, headers: hdr}, 200, mcp.CodeMethodNotFound},
		{"bad params", exchange{body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":42}}`, headers: hdr}, 200, mcp.CodeInvalidParams},
		{"unknown tool", exchange{body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}`, headers: hdr}, 200, mcp.CodeInvalidParams},
		{"arguments not an object", exchange{body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"getNote","arguments":[1]}}`, headers: hdr}, 200, mcp.CodeInvalidParams},
		{"bad log level", exchange{body: `{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"loud"}}`, headers: hdr}, 200, mcp.CodeInvalidParams},
		{"batch outside 2025-03-26", exchange{body: `[` + list + `]`, headers: hdr}, 400, mcp.CodeInvalidRequest},
		{"GET without session", exchange{method: "GET"}, 405, mcp.CodeInvalidRequest},
		{"DELETE without session", exchange{method: "DELETE"}, 405, mcp.CodeInvalidRequest},
		{"PUT", exchange{method: "PUT", headers: hdr}, 405, mcp.CodeInvalidRequest},
		{"GET wrong accept", exchange{method: "GET", headers: with(map[string]string{"Accept": "application/json"})}, 406, mcp.CodeInvalidRequest},
		{"GET unknown session", exchange{method: "GET", headers: with(map[string]string{"Mcp-Session-Id": "nope", "Accept": "text/event-stream"})}, 404, mcp.CodeSessionNotFound},
		{"foreign origin", exchange{body: list, headers: with(map[string]string{"Origin": "http://evil.example.com"})}, 403, mcp.CodeInvalidRequest},
		{"foreign host", exchange{body: list, headers: with(map[string]string{"Host": "evil.example.com"})}, 403, mcp.CodeInvalidRequest},
		{"loopback origin", exchange{body: list, headers: with(map[string]string{"Origin": "http://localhost:1234"})}, 200, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(t, tc.call)
			require.Equal(t, tc.status, r.status, "body: %s", r.body)
			if tc.code != 0 {
				require.Equal(t, tc.code, r.errCode(t))
				return
			}
			if tc.status == 202 {
				require.Empty(t, r.body)
				return
			}
			require.NotContains(t, r.msg(t), "error")
		})
	}
	// The session survives all of that.
	require.Equal(t, 200, g.do(t, exchange{body: list, headers: hdr}).status)
}

func TestSessionlessLegacyRequestKeepsDualEraClientsLegacy(t *testing.T) {
	g := newTestGateway(t, Config{})
	for _, h := range []map[string]string{nil, {"MCP-Protocol-Version": "2025-06-18"}} {
		r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, headers: h})
		require.Equal(t, 400, r.status)
		code := r.errCode(t)
		require.NotContains(t, []int{mcp.CodeHeaderMismatch, mcp.CodeMissingCapability, mcp.CodeUnsupportedProtocolVer}, code,
			"a 2026-era code would stop a dual-era client from falling back to initialize")
	}
	// Modern headers without modern _meta: a malformed modern request.
	r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}})
	require.Equal(t, 400, r.status)
	require.Equal(t, mcp.CodeInvalidParams, r.errCode(t))
}

func TestDeleteEndsSession(t *testing.T) {
	g := newTestGateway(t, Config{})
	sid := g.initialize(t, "2025-11-25")
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	require.Equal(t, 200, g.do(t, exchange{method: "DELETE", headers: hdr}).status)
	require.Equal(t, 404, g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: hdr}).status)
	require.Equal(t, 404, g.do(t, exchange{method: "DELETE", headers: hdr}).status)

	g2 := newTestGateway(t, Config{DisableSessionDelete: true})
	sid = g2.initialize(t, "2025-11-25")
	hdr["Mcp-Session-Id"] = sid
	r := g2.do(t, exchange{method: "DELETE", headers: hdr})
	require.Equal(t, 405, r.status)
	require.NotContains(t, r.header.Get("Allow"), "DELETE")
	require.Equal(t, 200, g2.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: hdr}).status)
}

func TestPingAndSetLevelResultsAreEmptyObjects(t *testing.T) {
	g := newTestGateway(t, Config{})
	sid := g.initialize(t, "2025-11-25")
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`,
	} {
		r := g.sessionCall(t, sid, "2025-11-25", body)
		require.Equal(t, 200, r.status)
		require.JSONEq(t, `{}`, string(mustJSON(t, r.msg(t)["result"])))
	}
}

func TestBatchIn20250326Session(t *testing.T) {
	g := newTestGateway(t, Config{})
	sid := g.initialize(t, "2025-03-26")
	r := g.sessionCall(t, sid, "2025-03-26", `[
		{"jsonrpc":"2.0","id":1,"method":"ping"},
		{"jsonrpc":"2.0","method":"notifications/initialized"},
		{"jsonrpc":"2.0","id":2,"method":"tools/list"},
		{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}},
		{"jsonrpc":"2.0","id":4,"method":"nope"}
	]`)
	require.Equal(t, 200, r.status, "%s", r.body)
	var out []map[string]any
	require.NoError(t, json.Unmarshal(r.body, &out))
	require.Len(t, out, 4)
	byID := map[float64]map[string]any{}
	for _, m := range out {
		byID[m["id"].(float64)] = m
	}
	require.Contains(t, byID[1], "result")
	require.Contains(t, byID[2]["result"], "tools")
	require.Equal(t, float64(mcp.CodeInvalidRequest), byID[3]["error"].(map[string]any)["code"])
	require.Equal(t, float64(mcp.CodeMethodNotFound), byID[4]["error"].(map[string]any)["code"])

	r = g.sessionCall(t, sid, "2025-03-26", `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	require.Equal(t, 202, r.status)
	r = g.sessionCall(t, sid, "2025-03-26", `[]`)
	require.Equal(t, 400, r.status)
}

func TestToolsListPagination(t *testing.T) {
	g := newTestGateway(t, Config{PageSize: 3})
	sid := g.initialize(t, "2025-06-18")
	total := g.srv.currentCatalog().Tools.Len()
	require.Greater(t, total, 3)
	var names []string
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, total, "pagination does not end")
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		res := g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":`+params+`}`).result(t)
		tools := res["tools"].([]any)
		require.LessOrEqual(t, len(tools), 3)
		for _, tool := range tools {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	require.Len(t, names, total)
	seen := map[string]bool{}
	for _, n := range names {
		require.False(t, seen[n], "tool %s listed twice", n)
		seen[n] = true
	}
	r := g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"garbage"}}`)
	require.Equal(t, mcp.CodeInvalidParams, r.errCode(t))
}

func TestStatelessEra(t *testing.T) {
	g := newTestGateway(t, Config{})

	t.Run("discover", func(t *testing.T) {
		r := g.modern(t, 1, "server/discover", "", nil)
		require.Equal(t, 200, r.status, "%s", r.body)
		require.Empty(t, r.header.Get("Mcp-Session-Id"), "no session is ever minted")
		res := r.result(t)
		require.Equal(t, "complete", res["resultType"])
		require.Equal(t, "2026-07-28", res["supportedVersions"].([]any)[0])
		require.Contains(t, res, "ttlMs")
		require.Equal(t, "public", res["cacheScope"])
		require.Contains(t, res["_meta"], "io.modelcontextprotocol/serverInfo")
	})
	t.Run("tools/list carries cache hints", func(t *testing.T) {
		res := g.modern(t, 2, "tools/list", "", nil).result(t)
		require.NotEmpty(t, res["tools"])
		require.Equal(t, "complete", res["resultType"])
		require.Contains(t, res, "ttlMs")
		require.Contains(t, res, "cacheScope")
	})
	t.Run("tools/call", func(t *testing.T) {
		r := g.modern(t, 3, "tools/call", `"name":"getNote","arguments":{"id":1}`, map[string]string{"Mcp-Name": "getNote"})
		require.Equal(t, 200, r.status, "%s", r.body)
		res := r.result(t)
		require.Equal(t, "complete", res["resultType"])
		require.NotEqual(t, true, res["isError"], "%s", r.body)
		require.Contains(t, res, "structuredContent")
	})
	t.Run("Mcp-Name base64 form", func(t *testing.T) {
		r := g.modern(t, 3, "tools/call", `"name":"getNote","arguments":{"id":1}`, map[string]string{"Mcp-Name": "=?base64?Z2V0Tm90ZQ==?="})
		require.Equal(t, 200, r.status, "%s", r.body)
	})
	t.Run("a stray session header is ignored", func(t *testing.T) {
		r := g.modern(t, 4, "tools/list", "", map[string]string{"Mcp-Session-Id": "whatever"})
		require.Equal(t, 200, r.status)
	})

	errorCases := []struct {
		name   string
		method string
		params string
		hdr    map[string]string
		status int
		code   int
	}{
		{"ping is unknown", "ping", "", nil, 404, mcp.CodeMethodNotFound},
		{"initialize is unknown", "initialize", "", nil, 404, mcp.CodeMethodNotFound},
		{"unknown method", "nope/nope", "", nil, 404, mcp.CodeMethodNotFound},
		{"method header mismatch", "tools/list", "", map[string]string{"Mcp-Method": "prompts/list"}, 400, mcp.CodeHeaderMismatch},
		{"method header missing", "tools/list", "", map[string]string{"Mcp-Method": ""}, 400, mcp.CodeHeaderMismatch},
		{"version header missing", "tools/list", "", map[string]string{"MCP-Protocol-Version": ""}, 400, mcp.CodeHeaderMismatch},
		{"version header mismatch", "tools/list", "", map[string]string{"MCP-Protocol-Version": "2025-11-25"}, 400, mcp.CodeHeaderMismatch},
		{"name header missing", "tools/call", `"name":"getNote"`, nil, 400, mcp.CodeHeaderMismatch},
		{"name header mismatch", "tools/call", `"name":"getNote"`, map[string]string{"Mcp-Name": "deleteNote"}, 400, mcp.CodeHeaderMismatch},
	}
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.modern(t, 9, tc.method, tc.params, tc.hdr)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			require.Equal(t, tc.code, r.errCode(t))
		})
	}

	t.Run("unsupported version lists the supported ones", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2030-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`
		r := g.do(t, exchange{body: body, headers: map[string]string{"MCP-Protocol-Version": "2030-01-01", "Mcp-Method": "tools/list"}})
		require.Equal(t, 400, r.status)
		require.Equal(t, mcp.CodeUnsupportedProtocolVer, r.errCode(t))
		data := r.msg(t)["error"].(map[string]any)["data"].(map[string]any)
		require.Equal(t, []any{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}, data["supported"])
		require.Equal(t, "2030-01-01", data["requested"])
	})
	t.Run("missing client capabilities", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		r := g.do(t, exchange{body: body, headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}})
		require.Equal(t, 400, r.status)
		require.Equal(t, mcp.CodeInvalidParams, r.errCode(t))
	})
	t.Run("resource not found is -32602", func(t *testing.T) {
		r := g.modern(t, 5, "resources/read", `"uri":"x://y"`, map[string]string{"Mcp-Name": "x://y"})
		require.Equal(t, mcp.CodeInvalidParams, r.errCode(t))
	})
	t.Run("GET and DELETE are 405", func(t *testing.T) {
		require.Equal(t, 405, g.do(t, exchange{method: "GET", headers: map[string]string{"Accept": "text/event-stream"}}).status)
		require.Equal(t, 405, g.do(t, exchange{method: "DELETE"}).status)
	})
}

func TestLogLevelStreamsNotificationsOnThePOST(t *testing.T) {
	g := newTestGateway(t, Config{})
	sid := g.initialize(t, "2025-06-18")
	// Without a level the answer is plain JSON.
	r := g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1}}}`)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))

	g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	r = g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1}}}`)
	require.Equal(t, "text/event-stream", r.header.Get("Content-Type"))
	evs := sseData(r.body)
	require.GreaterOrEqual(t, len(evs), 2)
	var first map[string]any
	require.NoError(t, json.Unmarshal(evs[0], &first))
	require.Equal(t, "notifications/message", first["method"])
	require.Equal(t, "debug", first["params"].(map[string]any)["level"])
	require.Contains(t, r.msg(t), "result")

	// Raising the level above the gateway's debug events silences them.
	g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"error"}}`)
	r = g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1}}}`)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))

	// Stateless: the level rides in _meta of the one request.
	r = g.modern(t, 6, "tools/call", `"name":"getNote","arguments":{"id":1}`, map[string]string{"Mcp-Name": "getNote"})
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestProgressTokenStreamsIncreasingProgress(t *testing.T) {
	g := newTestGateway(t, Config{})
	sid := g.initialize(t, "2025-11-25")
	r := g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1},"_meta":{"progressToken":"p-1"}}}`)
	require.Equal(t, "text/event-stream", r.header.Get("Content-Type"))
	evs := sseData(r.body)
	last := 0.0
	n := 0
	for _, ev := range evs[:len(evs)-1] {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Token    string  `json:"progressToken"`
				Progress float64 `json:"progress"`
				Total    float64 `json:"total"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(ev, &m))
		require.Equal(t, "notifications/progress", m.Method)
		require.Equal(t, "p-1", m.Params.Token)
		require.Greater(t, m.Params.Progress, last, "progress must increase")
		last = m.Params.Progress
		n++
	}
	require.Equal(t, 3, n)
	require.Equal(t, 3.0, last)
	require.Contains(t, r.msg(t), "result", "the response comes last")
	// Logging at debug level gives at least three messages per call.
	g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	r = g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1}}}`)
	require.Len(t, sseData(r.body), 4)
}

func TestToolCallRateLimit(t *testing.T) {
	g := newTestGateway(t, Config{ToolCallLimit: quota.Limit{Rate: 0.001, Burst: 2}})
	a := g.initialize(t, "2025-06-18")
	b := g.initialize(t, "2025-06-18")
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1}}}`
	for range 2 {
		require.NotEqual(t, true, g.sessionCall(t, a, "2025-06-18", call).result(t)["isError"])
	}
	res := g.sessionCall(t, a, "2025-06-18", call).result(t)
	require.Equal(t, true, res["isError"])
	require.Contains(t, res["content"].([]any)[0].(map[string]any)["text"], "rate limit exceeded")
	// Another session has its own budget; listing is not limited.
	require.NotEqual(t, true, g.sessionCall(t, b, "2025-06-18", call).result(t)["isError"])
	require.Equal(t, 200, g.sessionCall(t, a, "2025-06-18", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`).status)

	// Stateless requests are counted per remote address, apart from sessions.
	stateless := func() map[string]any {
		return g.modern(t, 1, "tools/call", `"name":"getNote","arguments":{"id":1}`, map[string]string{"Mcp-Name": "getNote"}).result(t)
	}
	for range 2 {
		require.NotEqual(t, true, stateless()["isError"])
	}
	require.Equal(t, true, stateless()["isError"])
}

func TestReviewRegressions(t *testing.T) {
	g := newTestGateway(t, Config{})

	t.Run("oversized client capabilities are refused", func(t *testing.T) {
		big := `{"x":"` + strings.Repeat("a", maxClientRecord) + `"}`
		r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":` + big + `,"clientInfo":{"name":"c","version":"1"}}}`})
		require.Equal(t, mcp.CodeInvalidParams, r.errCode(t))
		require.Empty(t, r.header.Get("Mcp-Session-Id"))
	})
	t.Run("a null progress token asks for no progress", func(t *testing.T) {
		sid := g.initialize(t, "2025-06-18")
		r := g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1},"_meta":{"progressToken":null}}}`)
		require.Equal(t, "application/json", r.header.Get("Content-Type"))
	})
	t.Run("a reused request id does not orphan the newer request", func(t *testing.T) {
		req := &mcp.Request{Ctx: context.Background()}
		endFirst := g.srv.trackInflight("s", json.RawMessage(`7`), req)
		second := &mcp.Request{Ctx: context.Background()}
		endSecond := g.srv.trackInflight("s", json.RawMessage(`7`), second)
		ctx, cancel := second.CallContext(time.Minute, call.ErrTimeout)
		defer cancel()
		endFirst()
		require.True(t, g.srv.cancelLocal("s", json.RawMessage(`7`)), "the newer request is still cancellable")
		require.ErrorIs(t, context.Cause(ctx), context.Canceled)
		require.True(t, mcp.Cancelled(ctx, call.ErrTimeout))
		endSecond()
	})
	t.Run("a cancellation before the backend call starts cancels it", func(t *testing.T) {
		req := &mcp.Request{Ctx: context.Background()}
		end := g.srv.trackInflight("s", json.RawMessage(`8`), req)
		defer end()
		require.True(t, g.srv.cancelLocal("s", json.RawMessage(`8`)))
		ctx, cancel := req.CallContext(time.Minute, call.ErrTimeout)
		defer cancel()
		require.True(t, mcp.Cancelled(ctx, call.ErrTimeout))
	})
	t.Run("a timeout is not a cancellation", func(t *testing.T) {
		req := &mcp.Request{Ctx: context.Background()}
		ctx, cancel := req.CallContext(time.Millisecond, call.ErrTimeout)
		defer cancel()
		<-ctx.Done()
		require.False(t, mcp.Cancelled(ctx, call.ErrTimeout))
		require.ErrorIs(t, context.Cause(ctx), call.ErrTimeout)
	})
	t.Run("an ended session is never cached again", func(t *testing.T) {
		c := newSessionCache(time.Minute)
		now := time.Now()
		c.end("gone", now)
		c.put(&sessions.Session{ID: "gone", LastSeen: now}, now)
		require.Nil(t, c.get("gone", now))
		c.sweep(now.Add(2 * time.Minute))
		c.put(&sessions.Session{ID: "gone", LastSeen: now}, now)
		require.NotNil(t, c.get("gone", now), "tombstones expire with the cache bound")
	})
	t.Run("readyz gives no internals", func(t *testing.T) {
		resp, err := http.Get(g.hs.URL + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
	})
}
