package completion

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp/mcptest"
)

// source is a Deps func over a fixed map: owner → argument → candidates.
func source(m map[string]map[string][]string) func(owner, arg string) ([]string, bool) {
	return func(owner, arg string) ([]string, bool) {
		args, ok := m[owner]
		if !ok {
			return nil, false
		}
		v, ok := args[arg]
		return v, ok
	}
}

// resourceSource is source in ResourceValues' shape.
func resourceSource(m map[string]map[string][]string) func(*mcp.Request, string, string) ([]string, bool) {
	src := source(m)
	return func(_ *mcp.Request, owner, arg string) ([]string, bool) { return src(owner, arg) }
}

// promptSource is source in PromptValues' shape.
func promptSource(m map[string]map[string][]string) func(*mcp.Request, string, string, map[string]string) ([]string, bool, error) {
	src := source(m)
	return func(_ *mcp.Request, owner, arg string, _ map[string]string) ([]string, bool, error) {
		v, ok := src(owner, arg)
		return v, ok, nil
	}
}

func table(deps Deps) mcptest.Table {
	tab := mcptest.Table{}
	New(deps).Register(tab)
	return tab
}

func wire(t *testing.T, v any) string {
	t.Helper()
	b, err := mcp.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestComplete(t *testing.T) {
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf("item%03d", i)
	}
	tab := table(Deps{
		PromptValues: promptSource(map[string]map[string][]string{
			"trip":                       {"city": {"Paris", "park", "Party", "Berlin", "parKing"}, "free": nil},
			"big":                        {"n": many},
			"test_prompt_with_arguments": {"arg1": nil, "arg2": nil},
		}),
		ResourceValues: resourceSource(map[string]map[string][]string{
			"users://{id}/profile": {"id": {"alice", "albert", "bob"}},
		}),
	})
	cases := []struct{ name, params, want string }{
		{"prompt, case-insensitive prefix, declared order",
			`{"ref":{"type":"ref/prompt","name":"trip"},"argument":{"name":"city","value":"PAR"}}`,
			`{"values":["Paris","park","Party","parKing"],"total":4,"hasMore":false}`},
		{"exact case",
			`{"ref":{"type":"ref/prompt","name":"trip"},"argument":{"name":"city","value":"Berlin"}}`,
			`{"values":["Berlin"],"total":1,"hasMore":false}`},
		{"empty value matches all",
			`{"ref":{"type":"ref/prompt","name":"trip"},"argument":{"name":"city","value":""}}`,
			`{"values":["Paris","park","Party","Berlin","parKing"],"total":5,"hasMore":false}`},
		{"no match",
			`{"ref":{"type":"ref/prompt","name":"trip"},"argument":{"name":"city","value":"parisx"}}`,
			`{"values":[],"total":0,"hasMore":false}`},
		{"argument without candidates",
			`{"ref":{"type":"ref/prompt","name":"trip"},"argument":{"name":"free","value":"x"}}`,
			`{"values":[],"total":0,"hasMore":false}`},
		{"conformance completion-complete",
			`{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"test"}}`,
			`{"values":[],"total":0,"hasMore":false}`},
		{"resource template",
			`{"ref":{"type":"ref/resource","uri":"users://{id}/profile"},"argument":{"name":"id","value":"al"},"context":{"arguments":{"other":"x"}}}`,
			`{"values":["alice","albert"],"total":2,"hasMore":false}`},
		{"limit under the total",
			`{"ref":{"type":"ref/prompt","name":"big"},"argument":{"name":"n","value":"item1"}}`,
			fmt.Sprintf(`{"values":%s,"total":50,"hasMore":false}`, wire(t, many[100:150]))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tab.Call("completion/complete", mcptest.Request(mcp.EraSession, tc.params))
			require.NoError(t, err)
			require.JSONEq(t, `{"completion":`+tc.want+`}`, wire(t, res))
		})
	}

	t.Run("at most 100 values", func(t *testing.T) {
		res, err := tab.Call("completion/complete", mcptest.Request(mcp.EraSession,
			`{"ref":{"type":"ref/prompt","name":"big"},"argument":{"name":"n","value":"ITEM"}}`))
		require.NoError(t, err)
		c := res.(*result).Completion
		require.Equal(t, many[:MaxValues], c.Values)
		require.Equal(t, 150, c.Total)
		require.True(t, c.HasMore)
	})
}

func TestPrefixFold(t *testing.T) {
	cases := []struct {
		s, prefix string
		want      bool
	}{
		{"Kelvin", "\u212a", true}, // the Kelvin sign folds to K, in three bytes
		{"\u212aelvin", "kel", true},
		{"straße", "STRA", true},
		{"Ölbaum", "öl", true},
		{"ab", "abc", false},
		{"", "", true},
		{"abc", "b", false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, hasPrefixFold(tc.s, tc.prefix), "%q %q", tc.s, tc.prefix)
	}
}

func TestCompleteErrors(t *testing.T) {
	full := table(Deps{
		PromptValues:   promptSource(map[string]map[string][]string{"p": {"a": {"x"}}}),
		ResourceValues: resourceSource(map[string]map[string][]string{"t://{v}": {"v": {"x"}}}),
	})
	empty := table(Deps{}) // no prompts, no templates
	cases := []struct {
		tab             mcptest.Table
		params, message string
	}{
		{full, `{"argument":{"name":"a","value":""}}`, "Invalid params for completion/complete: ref is required"},
		{full, `{"ref":{"type":"ref/tool","name":"p"},"argument":{"name":"a","value":""}}`,
			`Invalid params for completion/complete: ref.type must be "ref/prompt" or "ref/resource"`},
		{full, `{"ref":{"type":"ref/prompt","name":"p"}}`,
			"Invalid params for completion/complete: argument.name and argument.value are required"},
		{full, `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a"}}`,
			"Invalid params for completion/complete: argument.name and argument.value are required"},
		{full, `{"ref":{"type":"ref/prompt"},"argument":{"name":"a","value":""}}`,
			"Invalid params for completion/complete: ref.name is required for ref/prompt"},
		{full, `{"ref":{"type":"ref/resource","name":"t://{v}"},"argument":{"name":"v","value":""}}`,
			"Invalid params for completion/complete: ref.uri is required for ref/resource"},
		{full, `{"ref":{"type":"ref/prompt","name":"q"},"argument":{"name":"a","value":""}}`,
			`Invalid params for completion/complete: no prompt "q" with argument "a"`},
		{full, `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"b","value":""}}`,
			`Invalid params for completion/complete: no prompt "p" with argument "b"`},
		{full, `{"ref":{"type":"ref/resource","uri":"t://{v}"},"argument":{"name":"w","value":""}}`,
			`Invalid params for completion/complete: no resource template "t://{v}" with variable "w"`},
		{empty, `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}`,
			`Invalid params for completion/complete: no prompt "p" with argument "a"`},
		{empty, `{"ref":{"type":"ref/resource","uri":"t://{v}"},"argument":{"name":"v","value":""}}`,
			`Invalid params for completion/complete: no resource template "t://{v}" with variable "v"`},
		{full, `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":1}}`,
			`Invalid params for completion/complete: "argument.value" must be a string`},
		{full, `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""},"context":{"arguments":{"b":2}}}`,
			"Invalid params for completion/complete: context.arguments must be an object of strings"},
		{full, `[]`, "Invalid params for completion/complete: params must be an object"},
	}
	for _, tc := range cases {
		t.Run(tc.params, func(t *testing.T) {
			_, err := tc.tab.Call("completion/complete", mcptest.Request(mcp.EraStateless, tc.params))
			var rerr *mcp.Error
			require.ErrorAs(t, err, &rerr)
			require.Equal(t, mcp.CodeInvalidParams, rerr.Code)
			require.Equal(t, tc.message, rerr.Message)
		})
	}
}

func TestEraStamping(t *testing.T) {
	tab := table(Deps{PromptValues: promptSource(map[string]map[string][]string{"p": {"a": {"x"}}})})
	params := `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}`

	res, err := tab.Call("completion/complete", mcptest.Request(mcp.EraSession, params))
	require.NoError(t, err)
	require.JSONEq(t, `{"completion":{"values":["x"],"total":1,"hasMore":false}}`, wire(t, res))

	r := mcptest.Request(mcp.EraStateless, params)
	r.Stamp.ServerMeta = map[string]any{"k": "v"}
	res, err = tab.Call("completion/complete", r)
	require.NoError(t, err)
	// Not cacheable: no ttlMs or cacheScope.
	require.JSONEq(t, `{"completion":{"values":["x"],"total":1,"hasMore":false},"resultType":"complete","_meta":{"k":"v"}}`, wire(t, res))
}
