package toolgen

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

const toolsetsDoc = `openapi: 3.0.3
info: {title: t, version: '1'}
tags:
  - {name: Pull Requests, description: "Work with <b>pull</b> requests."}
  - {name: repos}
paths:
  /repos:
    get: {operationId: listRepos, tags: [repos], ` + okResponse + `}
    post: {operationId: createRepo, tags: [repos], ` + okResponse + `}
  /repos/{r}/pulls:
    parameters: [{name: r, in: path, required: true, schema: {type: string}}]
    get: {operationId: listPulls, tags: [Pull Requests, repos], ` + okResponse + `}
    put: {operationId: mergePull, tags: [Pull Requests], ` + okResponse + `}
  /meta:
    get: {operationId: meta, ` + okResponse + `}
    head: {operationId: metaHead, ` + okResponse + `}
    options: {operationId: metaOptions, ` + okResponse + `}
    delete: {operationId: list_available_toolsets, ` + okResponse + `}
  /gists:
    patch: {operationId: editGist, tags: [gists], ` + okResponse + `}
`

func toolsetNames(set *Set) map[string][]string {
	out := map[string][]string{}
	for _, ts := range set.Toolsets() {
		for _, t := range ts.Tools {
			out[ts.Name] = append(out[ts.Name], t.Name)
		}
	}
	return out
}

func TestToolsetsFromTags(t *testing.T) {
	set := genDoc(t, toolsetsDoc, Options{})
	var order []string
	for _, ts := range set.Toolsets() {
		order = append(order, ts.Name)
	}
	// The document's tags in its order, then undeclared tags, then default.
	require.Equal(t, []string{"pull_requests", "repos", "gists", "default"}, order)
	names := toolsetNames(set)
	require.Equal(t, []string{"listRepos", "createRepo", "listPulls"}, names["repos"], "document order")
	require.Equal(t, []string{"listPulls", "mergePull"}, names["pull_requests"], "a tool with two tags is in both")
	require.Equal(t, []string{"editGist"}, names["gists"])
	require.Len(t, names["default"], 4)

	ts, ok := set.Toolset("pull_requests")
	require.True(t, ok)
	require.Equal(t, "Work with **pull** requests.", ts.Description, "the tag's description, as plain text")
	ts, _ = set.Toolset("gists")
	require.Equal(t, "Operations tagged gists.", ts.Description, "never empty")
}

func TestReservedNamesAreNeverOperationNames(t *testing.T) {
	set := genDoc(t, toolsetsDoc, Options{})
	_, taken := set.Lookup(ToolListToolsets)
	require.False(t, taken, "the gateway's own tool name is reserved in every mode")
	names := toolsetNames(set)["default"]
	require.Contains(t, names, ToolListToolsets+"_faf547", "the operation gets a stable suffix")
}

func TestDeclaredToolsets(t *testing.T) {
	set := genDoc(t, toolsetsDoc, Options{Toolsets: []ToolsetSpec{
		{Name: "writes", Description: "Everything that changes state.", Tools: []string{"create*", "merge*", "edit*"}},
		{Name: "repos", Tools: []string{"listRepos"}},
	}})
	names := toolsetNames(set)
	require.Equal(t, []string{"editGist", "createRepo", "mergePull"}, names["writes"], "document order: paths sorted")
	require.Equal(t, []string{"listRepos"}, names["repos"], "a declared toolset replaces the tag's of its name")
	require.Equal(t, "writes", set.Toolsets()[0].Name, "declared toolsets come first")
	require.True(t, set.Toolsets()[0].Declared)
	ts, _ := set.Toolset("repos")
	require.Equal(t, "The repos tools.", ts.Description)

	for _, bad := range []ToolsetSpec{{Name: "Has Space", Tools: []string{"*"}}, {Name: "x"}, {Name: "y", Tools: []string{"["}}} {
		_, err := Generate(loadInline(t, toolsetsDoc), Options{Toolsets: []ToolsetSpec{bad}})
		require.Error(t, err, "%+v", bad)
	}
	_, err := Generate(loadInline(t, toolsetsDoc), Options{Toolsets: []ToolsetSpec{{Name: "a", Tools: []string{"*"}}, {Name: "a", Tools: []string{"*"}}}})
	require.ErrorContains(t, err, "declared twice")
}

func TestReadOnly(t *testing.T) {
	set := genDoc(t, toolsetsDoc, Options{ReadOnly: true})
	var got []string
	for _, tl := range set.Tools() {
		got = append(got, tl.Name)
		require.True(t, SafeMethod(tl.Binding.Method), tl.Name)
	}
	require.ElementsMatch(t, []string{"listRepos", "listPulls", "meta", "metaHead", "metaOptions"}, got)

	// An explicit include replaces read-only's allow-list: it alone decides.
	set = genDoc(t, toolsetsDoc, Options{ReadOnly: true, Include: []string{"createRepo", "meta"}})
	got = nil
	for _, tl := range set.Tools() {
		got = append(got, tl.Name)
	}
	require.Equal(t, []string{"meta", "createRepo"}, got)
}

func TestNamePrefix(t *testing.T) {
	set := genDoc(t, toolsetsDoc, Options{NamePrefix: "gh_"})
	for _, tl := range set.Tools() {
		require.True(t, strings.HasPrefix(tl.Name, "gh_"), tl.Name)
	}
	_, ok := set.Lookup("gh_listRepos")
	require.True(t, ok)

	long := strings.Repeat("a", 70)
	set = genYAML(t, "  /x:\n    get: {operationId: "+long+", "+okResponse+"}\n  /y:\n    get: {operationId: "+long+"b, "+okResponse+"}\n", Options{NamePrefix: "api2_"})
	var names []string
	for _, tl := range set.Tools() {
		require.LessOrEqual(t, len(tl.Name), 64)
		require.True(t, strings.HasPrefix(tl.Name, "api2_"), tl.Name)
		names = append(names, tl.Name)
	}
	require.NotEqual(t, names[0], names[1])

	for _, bad := range []string{"has space", "a/b", strings.Repeat("p", 25)} {
		_, err := Generate(loadInline(t, toolsetsDoc), Options{NamePrefix: bad})
		require.Error(t, err, bad)
	}
}

func loadInline(t *testing.T, doc string) *openapi.Document {
	t.Helper()
	d, err := openapi.LoadData(context.Background(), []byte(doc), "", openapi.LoadOptions{})
	require.NoError(t, err)
	return d
}

func TestMerge(t *testing.T) {
	a := genDoc(t, toolsetsDoc, Options{NamePrefix: "a_"})
	b := genDoc(t, toolsetsDoc, Options{NamePrefix: "b_", ReadOnly: true})
	m, err := Merge([]string{"a", "b"}, a, b)
	require.NoError(t, err)
	require.Equal(t, a.Len()+b.Len(), m.Len())
	_, ok := m.Lookup("b_listRepos")
	require.True(t, ok)
	repos, _ := m.Toolset("repos")
	require.Len(t, repos.Tools, 3+2, "toolsets of one name are one: a's three and b's two read-only ones")
	require.Equal(t, "a_listRepos", repos.Tools[0].Name)

	_, err = Merge([]string{"a", "again"}, a, genDoc(t, toolsetsDoc, Options{NamePrefix: "a_"}))
	require.EqualError(t, err, `a and again both have a tool named "a_editGist": give them different tool_prefix values`)
	same, err := Merge([]string{"a"}, a)
	require.NoError(t, err)
	require.Same(t, a, same)
}
