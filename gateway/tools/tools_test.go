package tools

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp/mcptest"
	"github.com/mcp-gateway/mcp-gateway/internal/demo"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// newFeature serves the demo backend's tools, registered on a table: the
// feature needs nothing of the gateway but mcp values.
func newFeature(t *testing.T, cfg Config) (*Feature, mcptest.Table) {
	t.Helper()
	backend := httptest.NewServer(demo.New().Handler())
	t.Cleanup(backend.Close)
	doc, err := openapi.LoadData(context.Background(), demo.OpenAPI(), "demo/openapi.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	set, err := toolgen.Generate(doc, toolgen.Options{})
	require.NoError(t, err)
	caller, err := call.NewCaller(doc, call.Config{BaseURL: backend.URL})
	require.NoError(t, err)
	f := New(cfg, Deps{})
	tab := mcptest.Table{}
	f.Register(tab)
	f.SetCatalog(Catalog{Tools: set, Caller: caller})
	return f, tab
}

func request(method, params string) *mcp.Request {
	r := mcptest.Request(mcp.EraSession, params)
	r.Method = method
	return r
}

func TestRegistersListAndCall(t *testing.T) {
	_, tab := newFeature(t, Config{})
	require.Len(t, tab, 2)
	require.Contains(t, tab, "tools/list")
	require.Contains(t, tab, "tools/call")
}

func TestListPagesWithCursors(t *testing.T) {
	_, tab := newFeature(t, Config{PageSize: 4})
	var names []string
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		params := ""
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		res, err := tab["tools/list"].Handler(request("tools/list", params))
		require.NoError(t, err)
		page := res.(*listResult)
		require.LessOrEqual(t, len(page.Tools), 4)
		for _, tl := range page.Tools {
			names = append(names, tl.Name)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	require.Contains(t, names, "getNote")
	_, err := tab["tools/list"].Handler(request("tools/list", `{"cursor":"bm9wZTox"}`))
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, mcp.CodeInvalidParams, rerr.Code)
}

func TestCallResults(t *testing.T) {
	_, tab := newFeature(t, Config{})
	res, err := tab["tools/call"].Handler(request("tools/call", `{"name":"getNote","arguments":{"id":1}}`))
	require.NoError(t, err)
	p := res.(*mcp.PooledResult)
	require.False(t, p.IsError())
	got := p.Copy()
	p.Release()
	require.NotEmpty(t, got.StructuredContent)

	res, err = tab["tools/call"].Handler(request("tools/call", `{"name":"getNote","arguments":{"id":"x"}}`))
	require.NoError(t, err)
	require.True(t, res.(*mcp.PooledResult).IsError(), "invalid arguments are a tool error, not a protocol error")

	for params, want := range map[string]string{
		`{"name":"nope"}`:                  `Unknown tool: "nope"`,
		`{"arguments":{}}`:                 "Invalid params for tools/call: name is required",
		`{"name":"getNote","arguments":7}`: "Invalid params for tools/call: arguments must be an object",
		`{"name":5}`:                       `Invalid params for tools/call: "name" must be a string`,
	} {
		_, err := tab["tools/call"].Handler(request("tools/call", params))
		var rerr *mcp.Error
		require.ErrorAs(t, err, &rerr, params)
		require.Equal(t, mcp.CodeInvalidParams, rerr.Code)
		require.Equal(t, want, rerr.Message)
	}
}

func TestNoCatalogIsUnavailable(t *testing.T) {
	tab := mcptest.Table{}
	New(Config{}, Deps{}).Register(tab)
	_, err := tab["tools/list"].Handler(request("tools/list", ""))
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, mcp.CodeUnavailable, rerr.Code)
	require.Equal(t, 503, rerr.Status)
}

// The call limit is per caller: a denial is a tool result the model can
// act on, and another session is not affected.
func TestCallLimit(t *testing.T) {
	_, tab := newFeature(t, Config{CallLimit: quota.Limit{Rate: 0.001, Burst: 1}})
	call := func(sid string) *mcp.CallToolResult {
		r := request("tools/call", `{"name":"getNote","arguments":{"id":1}}`)
		r.SessionID = sid
		res, err := tab["tools/call"].Handler(r)
		require.NoError(t, err)
		return res.(*mcp.PooledResult).Copy()
	}
	require.False(t, call("a").IsError)
	denied := call("a")
	require.True(t, denied.IsError)
	require.Contains(t, denied.FirstText(), "rate limit exceeded")
	require.False(t, call("b").IsError)
}
