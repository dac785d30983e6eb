package e2e

// Issue "Big APIs and many backends" with the real binary: GitHub's
// description in the toolsets mode over three replicas sharing a Redis
// (a toolset enabled through one replica is in the next tools/list of
// another), the search mode in front of the Prism mock, two APIs on two
// mount paths of one process, and a connection narrowing what it is served
// by header and by path, never widening what the operator serves.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
	"github.com/mcp-gateway/mcp-gateway/internal/specs"
)

// The gateway's own tools of the toolsets and search modes.
var (
	toolsetsMetaTools = []string{"list_available_toolsets", "get_toolset_tools", "enable_toolset"}
	searchMetaTools   = []string{"search_operations", "describe_operation", "call_operation"}
)

// githubDescription is GitHub's REST description in the corpus; the test
// skips without it.
func githubDescription(t *testing.T) string {
	t.Helper()
	doc := specs.GitHub(t)
	if _, err := os.Stat(doc); err != nil {
		t.Skipf("GitHub's description is not in %s: %v", specs.Dir(t), err)
	}
	return doc
}

// 1. The toolsets mode over three replicas: enable_toolset through one
// replica, the next tools/list through another has the toolset's tools,
// and the session's push stream (held by a third) is told once.
func TestLargeAPIToolsetsAcrossReplicas(t *testing.T) {
	doc := githubDescription(t)
	t.Parallel()
	for _, kind := range redisKinds {
		t.Run(kind.name, func(t *testing.T) {
			redisURL, rdb := kind.redis(t)
			// The backend is never reached: these calls fail to connect.
			backend := &replicaBackend{URL: "http://127.0.0.1:9", doc: doc}
			env := newReplicaEnv(t, backend, redisURL, rdb, 3, "--tool-mode", "toolsets")
			testEnableToolsetAcrossReplicas(t, env)
		})
	}
}

func testEnableToolsetAcrossReplicas(t *testing.T, env *replicaEnv) {
	sid := env.initialize(t, env.proxy.URL)
	names, _ := reloadTools(t, env, env.proxy.URL, sid)
	require.ElementsMatch(t, toolsetsMetaTools, names, "a new session is served the toolsets mode's own tools only")
	changes := watchListChanges("push stream on replica 2", env.openPush(t, env.url(2), sid, ""))

	listed := requireToolSucceeded(t, env.do(t, env.proxy.URL, sid, callBody("3", "list_available_toolsets", `{}`)), "3")
	toolsets := map[string]map[string]any{}
	for _, ts := range listed["toolsets"].([]any) {
		entry := ts.(map[string]any)
		toolsets[entry["name"].(string)] = entry
	}
	for _, name := range []string{"pulls", "repos"} {
		require.Contains(t, toolsets, name, "list_available_toolsets: %v", slices.Sorted(maps.Keys(toolsets)))
		require.Equal(t, false, toolsets[name]["enabled"], "%s: %v", name, toolsets[name])
	}
	pulls := int(toolsets["pulls"]["tools"].(float64))
	require.Positive(t, pulls)

	peek := requireToolSucceeded(t, env.do(t, env.proxy.URL, sid, callBody("4", "get_toolset_tools", `{"toolset":"pulls"}`)), "4")
	require.Contains(t, toolNamesIn(peek["tools"]), "pulls_merge", "get_toolset_tools lists the toolset without enabling it")
	require.Len(t, peek["tools"], pulls)

	// Replicas 1 and 2 read the session before the toolset is enabled (so
	// each may hold a copy of its record without it).
	names, _ = reloadTools(t, env, env.url(1), sid)
	require.ElementsMatch(t, toolsetsMetaTools, names, "get_toolset_tools enabled nothing")
	refused := onlyResponse(t, env.do(t, env.url(2), sid, callBody("5", "pulls_list", `{"owner":"o","repo":"r"}`)), "5")
	require.NotNil(t, refused.Error, "a tool of a toolset not enabled: %s", refused.Result)
	require.Contains(t, refused.Error.Message, "not enabled")
	require.Contains(t, refused.Error.Message, "pulls")

	enabled := requireToolSucceeded(t, env.do(t, env.url(0), sid, callBody("6", "enable_toolset", `{"toolset":"pulls"}`)), "6")
	require.Equal(t, true, enabled["changed"], "%v", enabled)
	require.Equal(t, float64(pulls), enabled["toolsAdded"], "%v", enabled)

	names, _ = reloadTools(t, env, env.url(1), sid)
	require.Contains(t, names, "pulls_merge", "the next tools/list through another replica has the toolset enabled through replica 0")
	require.Len(t, names, len(toolsetsMetaTools)+pulls, "%v", names)
	require.NotContains(t, names, "repos_list-tags", "only the enabled toolset")
	call := onlyResponse(t, env.do(t, env.url(2), sid, callBody("7", "pulls_list", `{"owner":"o","repo":"r"}`)), "7")
	require.Nil(t, call.Error, "the enabled toolset's tools are callable on replica 2: %+v", call.Error)
	require.Contains(t, string(call.Result), `"isError":true`, "and reach the (unreachable) backend: %s", call.Result)

	awaitTrue(t, eventWait, 5*time.Millisecond, func() bool { return changes.count("notifications/tools/list_changed") > 0 },
		"the session's push stream on replica 2 is told its tool list changed")
	again := requireToolSucceeded(t, env.do(t, env.url(2), sid, callBody("8", "enable_toolset", `{"toolset":"pulls"}`)), "8")
	require.Equal(t, false, again["changed"], "enabling twice is enabling once: %v", again)
	listed = requireToolSucceeded(t, env.do(t, env.url(1), sid, callBody("9", "list_available_toolsets", `{}`)), "9")
	for _, ts := range listed["toolsets"].([]any) {
		entry := ts.(map[string]any)
		require.Equal(t, entry["name"] == "pulls", entry["enabled"], "%v", entry)
	}
	require.Equal(t, 1, changes.count("notifications/tools/list_changed"), "one list_changed for one change:%s", changes.describe())
}

// toolNamesIn is the names of a meta tool's list of {name, …} entries.
func toolNamesIn(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(map[string]any)["name"].(string))
	}
	return out
}

// 2. The search mode in front of Prism serving GitHub's description:
// search_operations finds the operation for a task, describe_operation
// says how to call it, call_operation runs it, and refuses arguments a
// direct tools/call would refuse before anything reaches the backend.
func TestLargeAPISearchAgainstPrism(t *testing.T) {
	doc := githubDescription(t)
	node, prismJS := findPrism(t)
	t.Parallel()
	var reached atomic.Int64
	recorder := prismRecorder(startPrism(t, node, prismJS, doc))
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		recorder.ServeHTTP(w, r)
	}))
	t.Cleanup(backend.Close)
	gw := startGateway(t, "--openapi", doc, "--upstream", backend.URL, "--listen", freeAddr(t), "--tool-mode", "search", "--log-level", "warn")

	c := &mcpConn{url: gw.url}
	c.initialize(t)
	require.ElementsMatch(t, searchMetaTools, c.tools(t))

	var found searchHits
	c.structured(t, "search_operations", `{"query":"merge a pull request"}`, &found)
	i := found.index("pulls_merge")
	require.GreaterOrEqual(t, i, 0, "search_operations: %+v", found.Operations)
	t.Logf("search_operations \"merge a pull request\": pulls_merge is hit %d of %d", i+1, len(found.Operations))
	require.Equal(t, "PUT", found.Operations[i].Method)
	require.Equal(t, "/repos/{owner}/{repo}/pulls/{pull_number}/merge", found.Operations[i].Path)
	require.NotEmpty(t, found.Operations[i].Summary)
	c.structured(t, "search_operations", `{"query":"list the tags of a repository","limit":3}`, &found)
	require.LessOrEqual(t, len(found.Operations), 3)
	require.GreaterOrEqual(t, found.index("repos_list-tags"), 0, "search_operations: %+v", found.Operations)

	var described struct {
		Name, Method, Path string
		InputSchema        struct {
			Required []string `json:"required"`
		} `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  struct {
			ReadOnlyHint bool `json:"readOnlyHint"`
		} `json:"annotations"`
	}
	raw := c.structured(t, "describe_operation", `{"name":"repos_list-tags"}`, &described)
	require.Equal(t, "GET", described.Method)
	require.Equal(t, "/repos/{owner}/{repo}/tags", described.Path)
	require.Subset(t, described.InputSchema.Required, []string{"owner", "repo"})
	require.NotEmpty(t, described.OutputSchema)
	require.True(t, described.Annotations.ReadOnlyHint)
	require.Contains(t, raw, `"$ref"`, "schema_refs defs: the tag schema is shared")
	inline := (&mcpConn{url: gw.url, header: map[string]string{"X-MCP-Schema-Refs": "inline"}}).structured(t, "describe_operation", `{"name":"repos_list-tags"}`, &described)
	require.NotContains(t, inline, `"$ref"`, "X-MCP-Schema-Refs: inline")
	require.NotContains(t, inline, `"$defs"`, "X-MCP-Schema-Refs: inline")

	before := reached.Load()
	ok := c.result(t, "call_operation", `{"name":"repos_list-tags","arguments":{"owner":"octocat","repo":"hello-world"}}`)
	require.False(t, ok.IsError, "call_operation with valid arguments: %s", ok.text())
	require.Greater(t, reached.Load(), before, "the call reached Prism")
	require.NotEmpty(t, ok.Content)

	before = reached.Load()
	bad := c.result(t, "call_operation", `{"name":"repos_list-tags","arguments":{"owner":"octocat"}}`)
	require.True(t, bad.IsError, "a required path argument is missing: %s", bad.text())
	t.Logf("call_operation without repo: %s", bad.text())
	require.Contains(t, bad.text(), `"repo"`, "the tool error names the missing argument")
	direct := (&mcpConn{url: gw.url, header: map[string]string{"X-MCP-Tool-Mode": "all"}}).result(t, "repos_list-tags", `{"owner":"octocat"}`)
	require.True(t, direct.IsError, "%s", direct.text())
	require.Equal(t, direct.text(), bad.text(), "call_operation validates exactly as a direct tools/call")
	require.Equal(t, before, reached.Load(), "invalid arguments never reach the backend")

	require.Contains(t, c.call(t, "call_operation", `{"name":"no_such_operation","arguments":{}}`).errorMessage(), "Unknown tool")
}

// searchHits is search_operations' structuredContent.
type searchHits struct {
	Operations []struct{ Name, Method, Path, Summary string } `json:"operations"`
}

// index is the rank of the operation named name (from 0), -1 if absent.
func (h searchHits) index(name string) int {
	for i, o := range h.Operations {
		if o.Name == name {
			return i
		}
	}
	return -1
}

// 3. Two APIs on two mount paths of one process (the apis list), on the
// in-memory store and on Redis: each endpoint serves its own tools and
// sessions, calls its own upstream, and inherits the top-level settings it
// does not set; tools --api prints one of them. Two APIs on one mount path
// share one endpoint (tool_prefix keeps their names apart, a clash is a
// configuration error); mount paths one under the other's are one too.
func TestLargeAPISeveralAPIs(t *testing.T) {
	t.Parallel()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"from":%q}`, r.Method+" "+r.URL.Path)
	}))
	t.Cleanup(backend.Close)

	t.Run("memory", func(t *testing.T) {
		addr := freeAddr(t)
		startGateway(t, "--config", severalAPIsConfig(t, addr, backend.URL, "/orders/mcp", ""))
		testSeveralAPIs(t, "http://"+addr, nil, "")
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Standalone(t)
		rdb := srv.Client(t)
		prefix := redistest.Prefix(t)
		redistest.Cleanup(t, rdb, prefix)
		addr := freeAddr(t)
		startGateway(t, "--config", severalAPIsConfig(t, addr, backend.URL, "/orders/mcp", fmt.Sprintf("redis_url: %q\nredis_prefix: %q\n", srv.URL, prefix)))
		testSeveralAPIs(t, "http://"+addr, rdb, prefix)
	})

	t.Run("tools --api", func(t *testing.T) {
		cfg := severalAPIsConfig(t, freeAddr(t), backend.URL, "/orders/mcp", "")
		out, _, err := runGateway(t, "tools", "--config", cfg, "--api", "orders", "--format", "json")
		require.NoError(t, err)
		var listed struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(out, &listed), "%s", out)
		require.Len(t, listed.Tools, 1, "%s", out)
		require.Equal(t, "listOrders", listed.Tools[0].Name, "orders inherits the top-level read_only")
		out, _, err = runGateway(t, "tools", "--config", cfg, "--api", "pets")
		require.NoError(t, err)
		for _, name := range []string{"listPets", "createPet", "getPet", "petsHealth"} {
			require.Contains(t, string(out), name)
		}
		require.NotContains(t, string(out), "listOrders")

		_, out, err = runGateway(t, "tools", "--config", cfg)
		requireExitCode(t, err, 2, out)
		require.Contains(t, string(out), "pets, orders", "names the APIs to choose from")
		_, out, err = runGateway(t, "tools", "--config", cfg, "--api", "nope")
		requireExitCode(t, err, 2, out)
		require.Contains(t, string(out), `"nope"`)
	})

	t.Run("a mount path under another API's", func(t *testing.T) {
		for _, path := range []string{"/pets/mcp/x/orders", "/pets/mcp/readonly"} {
			_, out, err := runGateway(t, "--config", severalAPIsConfig(t, freeAddr(t), backend.URL, path, ""))
			requireExitCode(t, err, 2, out)
			require.Contains(t, string(out), path, "names the path")
			require.Contains(t, string(out), "pets and orders")
		}
	})

	t.Run("two APIs on one mount path", func(t *testing.T) {
		// The pets document twice: the same tool names, unless prefixed.
		shared := func(addr, prefix string) string {
			return writeConfig(t, fmt.Sprintf(`listen: %s
apis:
  - name: pets
    openapi: %s
    upstream: %s/petstore
    mount_path: /shared
  - name: morepets
    openapi: %s
    upstream: %s/other
    mount_path: /shared
%s`, addr, largeAPIDoc(t, "pets.yaml"), backend.URL, largeAPIDoc(t, "pets.yaml"), backend.URL, prefix))
		}
		_, out, err := runGateway(t, "--config", shared(freeAddr(t), ""))
		requireExitCode(t, err, 2, out)
		require.Contains(t, string(out), "/shared", "names the path")
		require.Contains(t, string(out), `"petsHealth"`, "names the clashing tool")

		addr := freeAddr(t)
		startGateway(t, "--config", shared(addr, "    tool_prefix: more_\n"))
		c := &mcpConn{url: "http://" + addr + "/shared"}
		c.initialize(t)
		require.ElementsMatch(t, []string{"listPets", "createPet", "getPet", "petsHealth", "more_listPets", "more_createPet", "more_getPet", "more_petsHealth"}, c.tools(t))
		var answer struct{ From string }
		c.structured(t, "listPets", `{}`, &answer)
		require.Equal(t, "GET /petstore/pets", answer.From)
		c.structured(t, "more_getPet", `{"id":3}`, &answer)
		require.Equal(t, "GET /other/pets/3", answer.From, "each API's tools call its own backend")
	})
}

// runGateway runs the binary to its end and returns what it wrote to
// stdout and to stderr. It is bounded: a gateway that serves where it
// should refuse to start fails the test instead of hanging it.
func runGateway(t *testing.T, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, gatewayBinary(t), args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	require.NoError(t, ctx.Err(), "mcp-gateway %v did not exit:\n%s%s", args, out.String(), errOut.String())
	return []byte(out.String()), []byte(errOut.String()), err
}

func requireExitCode(t *testing.T, err error, code int, out []byte) {
	t.Helper()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%v\n%s", err, out)
	require.Equal(t, code, ee.ExitCode(), "%s", out)
}

// largeAPIDoc is the absolute path of a document in testdata/largeapi.
func largeAPIDoc(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "largeapi", name))
	require.NoError(t, err)
	return p
}

// severalAPIsConfig writes the configuration of TestLargeAPISeveralAPIs:
// the pets API on /pets/mcp with a declared toolset, the orders API on
// ordersPath, each with its own upstream under backend; read_only at the
// top level, which pets overrides and orders inherits. extra is more
// top-level YAML.
func severalAPIsConfig(t *testing.T, addr, backend, ordersPath, extra string) string {
	t.Helper()
	return writeConfig(t, fmt.Sprintf(`listen: %s
read_only: true
%sapis:
  - name: pets
    openapi: %s
    upstream: %s/petstore
    mount_path: /pets/mcp
    read_only: false
    toolsets:
      - {name: browse, description: Look at the pets, tools: [listPets, getPet]}
  - name: orders
    openapi: %s
    upstream: %s/shop
    mount_path: %s
`, addr, extra, largeAPIDoc(t, "pets.yaml"), backend, largeAPIDoc(t, "orders.yaml"), backend, ordersPath))
}

// writeConfig writes a YAML configuration file.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(f, []byte(yaml), 0o600))
	return f
}

// testSeveralAPIs drives the two endpoints of severalAPIsConfig at base;
// with rdb, also the Redis keys each keeps under its own prefix.
func testSeveralAPIs(t *testing.T, base string, rdb redis.UniversalClient, prefix string) {
	petsURL, ordersURL := base+"/pets/mcp", base+"/orders/mcp"
	pets, orders := &mcpConn{url: petsURL}, &mcpConn{url: ordersURL}
	pets.initialize(t)
	orders.initialize(t)
	require.ElementsMatch(t, []string{"listPets", "createPet", "getPet", "petsHealth"}, pets.tools(t))
	require.ElementsMatch(t, []string{"listOrders"}, orders.tools(t), "orders inherits the top-level read_only; pets sets its own")

	var answer struct{ From string }
	pets.structured(t, "listPets", `{}`, &answer)
	require.Equal(t, "GET /petstore/pets", answer.From, "pets calls its own upstream")
	orders.structured(t, "listOrders", `{}`, &answer)
	require.Equal(t, "GET /shop/orders", answer.From, "orders calls its own upstream")
	require.Contains(t, orders.call(t, "listPets", `{}`).errorMessage(), "Unknown tool", "one API's tool is unknown on the other")

	// Each endpoint has its own sessions.
	const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	require.Equal(t, http.StatusOK, pets.send(t, nil, ping).status)
	require.Equal(t, http.StatusNotFound, (&mcpConn{url: ordersURL, sid: pets.sid}).send(t, nil, ping).status, "a pets session on /orders/mcp")
	require.Equal(t, http.StatusNotFound, (&mcpConn{url: petsURL, sid: orders.sid}).send(t, nil, ping).status, "an orders session on /pets/mcp")
	require.Equal(t, http.StatusOK, orders.send(t, nil, ping).status)

	// Each its own toolsets: one per tag (sanitized), "default" for the
	// untagged operation, and the declared one.
	for _, tc := range []struct {
		url, toolsets string
		want          []string
	}{
		{petsURL, "browse", []string{"listPets", "getPet"}},
		{petsURL, "pet_care", []string{"listPets", "createPet", "getPet"}},
		{petsURL + "/x/default", "", []string{"petsHealth"}},
		{ordersURL + "/x/orders", "", []string{"listOrders"}},
	} {
		c := &mcpConn{url: tc.url}
		if tc.toolsets != "" {
			c.header = map[string]string{"X-MCP-Toolsets": tc.toolsets}
		}
		require.ElementsMatch(t, tc.want, c.tools(t), "%s %s", tc.url, tc.toolsets)
	}
	requireBadToolset(t, (&mcpConn{url: ordersURL, header: map[string]string{"X-MCP-Toolsets": "browse"}}).stateless(t, "tools/list", "", ""),
		`unknown toolset "browse"`, "served: orders")

	if rdb == nil {
		return
	}
	for api, sid := range map[string]string{"pets": pets.sid, "orders": orders.sid} {
		other := map[string]string{"pets": "orders", "orders": "pets"}[api]
		require.NotEmpty(t, scanKeys(t, rdb, prefix+api+":*"+sid+"*"), "the %s session is kept under %s%s:", api, prefix, api)
		require.Empty(t, scanKeys(t, rdb, prefix+other+":*"+sid+"*"), "and not under %s%s:", prefix, other)
	}
}

func scanKeys(t *testing.T, rdb redis.UniversalClient, match string) []string {
	t.Helper()
	var keys []string
	iter := rdb.Scan(context.Background(), 0, match, 100).Iterator()
	for iter.Next(context.Background()) {
		keys = append(keys, iter.Val())
	}
	require.NoError(t, iter.Err())
	return keys
}

// requireBadToolset checks a 400 whose JSON-RPC error says each of want.
func requireBadToolset(t *testing.T, r *rawResponse, want ...string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	msgs := messages(t, r)
	require.Len(t, msgs, 1, "%s", r.body)
	require.NotNil(t, msgs[0].Error, "%s", r.body)
	for _, w := range want {
		require.Contains(t, msgs[0].Error.Message, w)
	}
}

// 4. What one connection is served: fewer toolsets by X-MCP-Toolsets or
// /x/{toolset}, only safe methods by X-MCP-Readonly or /readonly, in
// 2026-07-28 requests and in sessions (which keep what their initialize
// chose); never more than the operator serves.
func TestLargeAPIPerConnectionSurface(t *testing.T) {
	t.Parallel()
	var (
		notes   = []string{"listNotes", "createNote", "getNote", "replaceNote", "deleteNote", "updateNote", "getNoteText"}
		roNotes = []string{"listNotes", "getNote", "getNoteText"}
		files   = []string{"listFiles", "downloadFile", "checkFile"}
		system  = []string{"getHealth"}
		safe    = slices.Concat(roNotes, files, system)
	)
	gw := startGateway(t, "--demo", "--listen", freeAddr(t))
	mcpURL := gw.url

	t.Run("2026-07-28 requests", func(t *testing.T) {
		for _, tc := range []struct {
			name, path string
			header     map[string]string
			want       []string
		}{
			{"nothing asked", "", nil, slices.Concat(notes, files, system)},
			{"X-MCP-Toolsets", "", map[string]string{"X-MCP-Toolsets": "files"}, files},
			{"X-MCP-Toolsets with two", "", map[string]string{"X-MCP-Toolsets": "files, SYSTEM"}, slices.Concat(files, system)},
			{"/x/{toolset}", "/x/notes", nil, notes},
			{"/x/{toolset},{toolset}", "/x/files,system", nil, slices.Concat(files, system)},
			{"/x/{toolset}/readonly", "/x/notes/readonly", nil, roNotes},
			{"X-MCP-Readonly: true", "", map[string]string{"X-MCP-Readonly": "true"}, safe},
			{"/readonly", "/readonly", nil, safe},
			{"/readonly with X-MCP-Readonly: false", "/readonly", map[string]string{"X-MCP-Readonly": "false"}, safe},
			{"path and header: what both name", "/x/notes,files", map[string]string{"X-MCP-Toolsets": "files,system"}, files},
			{"X-MCP-Toolsets and X-MCP-Readonly", "", map[string]string{"X-MCP-Toolsets": "notes", "X-MCP-Readonly": "true"}, roNotes},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := &mcpConn{url: mcpURL + tc.path, header: tc.header}
				require.ElementsMatch(t, tc.want, c.tools(t))
			})
		}
	})

	t.Run("an unknown toolset is a 400 naming it", func(t *testing.T) {
		requireBadToolset(t, (&mcpConn{url: mcpURL, header: map[string]string{"X-MCP-Toolsets": "files,nope"}}).stateless(t, "tools/list", "", ""),
			`unknown toolset "nope"`, "served: notes, files, system")
		requireBadToolset(t, (&mcpConn{url: mcpURL + "/x/nope"}).stateless(t, "tools/list", "", ""), `unknown toolset "nope"`)
		r := (&mcpConn{url: mcpURL, header: map[string]string{"X-MCP-Toolsets": "nope"}}).send(t, nil, initializeBody)
		requireBadToolset(t, r, `unknown toolset "nope"`)
		require.Empty(t, r.header.Get("Mcp-Session-Id"), "no session for a refused initialize")
	})

	t.Run("a tool outside the surface is unknown", func(t *testing.T) {
		for _, tc := range []struct{ path, toolsets, tool, args string }{
			{"/readonly", "", "deleteNote", `{"id":1}`},
			{"/x/files", "", "getNote", `{"id":1}`},
			{"", "system", "listNotes", `{}`},
			{"/x/notes/readonly", "", "createNote", `{"text":"x"}`},
		} {
			c := &mcpConn{url: mcpURL + tc.path}
			if tc.toolsets != "" {
				c.header = map[string]string{"X-MCP-Toolsets": tc.toolsets}
			}
			require.Contains(t, c.call(t, tc.tool, tc.args).errorMessage(), "Unknown tool", "%s on %q %q", tc.tool, tc.path, tc.toolsets)
		}
		ok := (&mcpConn{url: mcpURL + "/x/notes/readonly"}).result(t, "getNote", `{"id":1}`)
		require.False(t, ok.IsError, "a tool inside it is served: %s", ok.text())
	})

	t.Run("a session keeps what its initialize chose", func(t *testing.T) {
		c := &mcpConn{url: mcpURL, header: map[string]string{"X-MCP-Toolsets": "notes", "X-MCP-Readonly": "true"}}
		c.initialize(t)
		require.ElementsMatch(t, roNotes, c.tools(t))
		c.header = map[string]string{"X-MCP-Toolsets": "files", "X-MCP-Readonly": "false"}
		require.ElementsMatch(t, roNotes, c.tools(t), "a later request's headers do not change the session's surface")
		c.header = nil
		require.ElementsMatch(t, roNotes, c.tools(t))
		require.Contains(t, c.call(t, "createNote", `{"text":"x"}`).errorMessage(), "Unknown tool")
		require.Contains(t, c.call(t, "listFiles", `{}`).errorMessage(), "Unknown tool")
		ok := c.result(t, "getNote", `{"id":1}`)
		require.False(t, ok.IsError, "%s", ok.text())

		byPath := &mcpConn{url: mcpURL + "/x/files"}
		byPath.initialize(t)
		require.ElementsMatch(t, files, byPath.tools(t))
		byPath.url = mcpURL
		require.ElementsMatch(t, files, byPath.tools(t), "the session from /x/files on the bare endpoint")
	})

	t.Run("tool modes per connection", func(t *testing.T) {
		ts := &mcpConn{url: mcpURL, header: map[string]string{"X-MCP-Tool-Mode": "toolsets", "X-MCP-Toolsets": "files"}}
		require.ElementsMatch(t, slices.Concat(toolsetsMetaTools, files), ts.tools(t), "toolsets named per request are served")
		refused := ts.result(t, "enable_toolset", `{"toolset":"notes"}`)
		require.True(t, refused.IsError, "no session to enable a toolset in: %s", refused.text())
		require.Contains(t, refused.text(), "X-MCP-Toolsets")
		require.Contains(t, refused.text(), "/x/notes")
		search := &mcpConn{url: mcpURL + "/x/files", header: map[string]string{"X-MCP-Tool-Mode": "search"}}
		require.ElementsMatch(t, searchMetaTools, search.tools(t))
		var found searchHits
		search.structured(t, "search_operations", `{"query":"note"}`, &found)
		for _, o := range found.Operations {
			require.Contains(t, files, o.Name, "search_operations finds only what the connection is served")
		}
		require.Contains(t, search.call(t, "call_operation", `{"name":"getNote","arguments":{"id":1}}`).errorMessage(), "Unknown tool",
			"call_operation runs only what the connection is served")
	})

	t.Run("the operator's choice is the widest", func(t *testing.T) {
		narrow := startGateway(t, "--demo", "--listen", freeAddr(t), "--toolsets", "notes,files", "--read-only")
		served := slices.Concat(roNotes, files)
		require.ElementsMatch(t, served, (&mcpConn{url: narrow.url}).tools(t))
		requireBadToolset(t, (&mcpConn{url: narrow.url, header: map[string]string{"X-MCP-Toolsets": "system"}}).stateless(t, "tools/list", "", ""),
			`unknown toolset "system"`, "served: notes, files")
		requireBadToolset(t, (&mcpConn{url: narrow.url + "/x/system"}).stateless(t, "tools/list", "", ""), `unknown toolset "system"`)
		wider := &mcpConn{url: narrow.url, header: map[string]string{"X-MCP-Readonly": "false"}}
		require.ElementsMatch(t, served, wider.tools(t), "X-MCP-Readonly: false does not widen --read-only")
		require.Contains(t, wider.call(t, "deleteNote", `{"id":1}`).errorMessage(), "Unknown tool")
		wider.initialize(t)
		require.ElementsMatch(t, served, wider.tools(t), "nor in a session")
		for _, tool := range []string{"deleteNote", "getHealth"} {
			require.Contains(t, wider.call(t, tool, `{"id":1}`).errorMessage(), "Unknown tool", tool)
		}
	})
}

// mcpConn is one client connection of these tests: the endpoint's URL
// (with any /x/ or /readonly path), the headers it sends with every
// request, and its session once initialize made one. Without a session
// its requests are 2026-07-28 ones.
type mcpConn struct {
	url    string
	header map[string]string
	sid    string
}

// send POSTs body with the connection's headers, h and the session's.
func (c *mcpConn) send(t *testing.T, h map[string]string, body string) *rawResponse {
	t.Helper()
	all := map[string]string{}
	maps.Copy(all, c.header)
	maps.Copy(all, h)
	if c.sid != "" {
		all["Mcp-Session-Id"], all["MCP-Protocol-Version"] = c.sid, "2025-06-18"
	}
	// protectedGateway.do without a token is a plain MCP request.
	return (&protectedGateway{url: c.url, sent: &clientTokens{}}).do(t, http.MethodPost, "", "", all, body)
}

// initialize starts a session with the connection's headers.
func (c *mcpConn) initialize(t *testing.T) {
	t.Helper()
	r := c.send(t, nil, initializeBody)
	require.Equal(t, http.StatusOK, r.status, "initialize: %s", r.body)
	require.Nil(t, onlyResponse(t, r, "1").Error, "%s", r.body)
	c.sid = r.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, c.sid)
	n := c.send(t, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, n.status, "%s", n.body)
}

// stateless sends a 2026-07-28 request of method (tool: tools/call's
// name); params are more members of its params, after a comma.
func (c *mcpConn) stateless(t *testing.T, method, tool, params string) *rawResponse {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":%q,"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"e2e-largeapi","version":"1"}}%s}}`, method, params)
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if tool != "" {
		h["Mcp-Name"] = tool
	}
	return c.send(t, h, body)
}

// tools is the names tools/list gives the connection.
func (c *mcpConn) tools(t *testing.T) []string {
	t.Helper()
	if c.sid != "" {
		return listedTools(t, c.send(t, nil, listBody("7")), "7")
	}
	return listedTools(t, c.stateless(t, "tools/list", "", ""), "7")
}

// call is tools/call's answer.
func (c *mcpConn) call(t *testing.T, tool, args string) rpcMessage {
	t.Helper()
	var r *rawResponse
	if c.sid != "" {
		r = c.send(t, nil, callBody("7", tool, args))
	} else {
		r = c.stateless(t, "tools/call", tool, fmt.Sprintf(`,"name":%q,"arguments":%s`, tool, args))
	}
	require.Equal(t, http.StatusOK, r.status, "tools/call %s: %s", tool, r.body)
	return onlyResponse(t, r, "7")
}

// result is tools/call's result, which must not be a JSON-RPC error.
func (c *mcpConn) result(t *testing.T, tool, args string) toolOutcome {
	t.Helper()
	m := c.call(t, tool, args)
	require.Nil(t, m.Error, "tools/call %s: %+v", tool, m.Error)
	var o toolOutcome
	require.NoError(t, json.Unmarshal(m.Result, &o), "%s", m.Result)
	return o
}

// structured decodes a successful result's structuredContent into v and
// returns it as JSON.
func (c *mcpConn) structured(t *testing.T, tool, args string, v any) string {
	t.Helper()
	o := c.result(t, tool, args)
	require.False(t, o.IsError, "tools/call %s: %s", tool, o.text())
	require.NotEmpty(t, o.StructuredContent, "tools/call %s", tool)
	require.NoError(t, json.Unmarshal(o.StructuredContent, v), "%s", o.StructuredContent)
	return string(o.StructuredContent)
}

// toolOutcome is a tools/call result.
type toolOutcome struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

func (o toolOutcome) text() string {
	var parts []string
	for _, c := range o.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// errorMessage is the message of a JSON-RPC error answer, "" for a result.
func (m rpcMessage) errorMessage() string {
	if m.Error == nil {
		return ""
	}
	return m.Error.Message
}
