package tools

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/quota"
)

// Run admits other features' backend calls as tools/call: the same
// limits, answered as JSON-RPC errors; nil is the gateway's own work.
func TestRunAdmitsAsToolsCall(t *testing.T) {
	f, _ := newFeature(t, Config{Policy: Policy{PerTool: quota.Limit{Rate: 0.001, Burst: 1}}})
	ran := 0
	run := func(r *mcp.Request) error {
		return f.Run(r, "getNote", func(op Operation) error {
			require.Equal(t, "getNote", op.Tool.Name)
			require.NotNil(t, op.Caller)
			_, ok := op.Ctx.Deadline()
			require.True(t, ok, "the operation's timeout bounds it")
			ran++
			return nil
		})
	}
	r := request("resources/read", `{}`)
	require.NoError(t, run(r))
	err := run(r)
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, http.StatusTooManyRequests, rerr.Status)
	require.NotEmpty(t, rerr.Header["Retry-After"])
	data := rerr.Data.(map[string]any)
	require.Equal(t, "rate_limited", data["kind"])
	require.Equal(t, "per_tool", data["scope"])
	require.Equal(t, 1, ran, "a refused call does not run")

	require.NoError(t, run(nil), "the gateway's own poll is nobody's: no limit")
	require.Equal(t, 2, ran)
	require.Error(t, f.Run(r, "noSuchTool", func(Operation) error { return nil }))
}

// Permits and PermitsAll follow the tools' scopes when authorization is on.
func TestPermits(t *testing.T) {
	f, _ := newFeature(t, Config{Policy: Policy{Authorize: true, ScopeRules: []ScopeRule{{Tools: []string{"deleteNote"}, Scopes: []string{"admin"}}}}})
	anon := request("tools/list", `{}`)
	require.True(t, f.Permits(anon, "getNote"))
	require.False(t, f.Permits(anon, "deleteNote"))
	require.False(t, f.PermitsAll(anon))
	admin := request("tools/list", `{}`)
	admin.Principal = &mcp.Principal{Subject: "a", Scopes: []string{"admin"}}
	require.True(t, f.Permits(admin, "deleteNote"))
	require.True(t, f.PermitsAll(admin))
}
