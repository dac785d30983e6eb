package gateway

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/specs"
)

// TestLargeAPIListSizes measures what tools/list costs a client for
// GitHub's REST description in each tool mode and schema dialect (every
// page, the tools arrays' JSON; tokens ≈ bytes / 4). It reports; the only
// assertions are that the small modes are small.
func TestLargeAPIListSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("loads GitHub's description")
	}
	doc, err := os.ReadFile(specs.GitHub(t))
	require.NoError(t, err)
	// inline as the operator's default: the catalog inlines its schemas
	// before serving (most of a second, far more under -race), not in a
	// request's time; defs is asked for per connection.
	g := newGatewayFor(t, Config{SchemaRefs: "inline"}, doc, "http://127.0.0.1:9")
	size := func(h map[string]string) (tools, bytes int) {
		cursor := ""
		for {
			params := ""
			if cursor != "" {
				params = `"cursor":"` + cursor + `"`
			}
			r := g.modern(t, 1, "tools/list", params, h)
			require.Equal(t, 200, r.status, "%s", r.body)
			res := r.result(t)
			list := res["tools"].([]any)
			tools += len(list)
			bytes += len(mustJSON(t, list))
			next, _ := res["nextCursor"].(string)
			if next == "" {
				return tools, bytes
			}
			cursor = next
		}
	}
	var report strings.Builder
	fmt.Fprintf(&report, "| mode | tools listed | tools/list bytes | ≈ tokens |\n|---|---|---|---|\n")
	for _, m := range []struct {
		name string
		h    map[string]string
	}{
		{"all, $defs", map[string]string{HeaderSchemaRefs: "defs"}},
		{"all, inline", nil},
		{"all, read-only", map[string]string{HeaderSchemaRefs: "defs", HeaderReadOnly: "true"}},
		{"all, X-MCP-Toolsets: pulls", map[string]string{HeaderSchemaRefs: "defs", HeaderToolsets: "pulls"}},
		{"toolsets (nothing enabled)", map[string]string{HeaderSchemaRefs: "defs", HeaderToolMode: "toolsets"}},
		{"toolsets + pulls", map[string]string{HeaderSchemaRefs: "defs", HeaderToolMode: "toolsets", HeaderToolsets: "pulls"}},
		{"search", map[string]string{HeaderSchemaRefs: "defs", HeaderToolMode: "search"}},
	} {
		n, b := size(m.h)
		fmt.Fprintf(&report, "| %s | %d | %d | %d |\n", m.name, n, b, b/4)
		if strings.HasPrefix(m.name, "search") || m.name == "toolsets (nothing enabled)" {
			require.Equal(t, 3, n)
			require.Less(t, b, 8<<10)
		}
	}
	// What finding one operation costs in the small modes.
	call := func(h map[string]string, name, args string) int {
		hh := map[string]string{"Mcp-Name": name}
		for k, v := range h {
			hh[k] = v
		}
		r := g.modern(t, 2, "tools/call", `"name":"`+name+`","arguments":`+args, hh)
		res := r.result(t)
		require.NotEqual(t, true, res["isError"], "%s", r.body)
		return len(mustJSON(t, res["content"]))
	}
	ts := map[string]string{HeaderToolMode: "toolsets", HeaderSchemaRefs: "defs"}
	se := map[string]string{HeaderToolMode: "search", HeaderSchemaRefs: "defs"}
	fmt.Fprintf(&report, "\n| call | result bytes | ≈ tokens |\n|---|---|---|\n")
	for _, c := range []struct {
		what, name, args string
		h                map[string]string
	}{
		{"list_available_toolsets", "list_available_toolsets", `{}`, ts},
		{"get_toolset_tools pulls", "get_toolset_tools", `{"toolset":"pulls"}`, ts},
		{"search_operations (10 results)", "search_operations", `{"query":"merge a pull request"}`, se},
		{"describe_operation pulls/merge", "describe_operation", `{"name":"pulls_merge"}`, se},
	} {
		b := call(c.h, c.name, c.args)
		fmt.Fprintf(&report, "| %s | %d | %d |\n", c.what, b, b/4)
	}
	r := g.modern(t, 3, "tools/call", `"name":"list_available_toolsets","arguments":{}`, map[string]string{HeaderToolMode: "toolsets", "Mcp-Name": "list_available_toolsets"})
	fmt.Fprintf(&report, "\ntoolsets: %d\n", len(r.result(t)["structuredContent"].(map[string]any)["toolsets"].([]any)))
	t.Log("\n" + report.String())
}
