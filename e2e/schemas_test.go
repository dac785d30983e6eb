package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// deepTree is what the shapes backend answers for a tree: nested deeper
// than the simplified schema describes.
const deepTree = `{"name":"root","children":[{"name":"a","children":[{"name":"b","children":[],"meta":{"note":"x"}}]}],` +
	`"meta":{"note":"1","l2":{"note":"2","l3":{"note":"3","l4":{"note":"4","l5":{"note":"5"}}}}}}`

// The real binary in front of fixture/shapes.yaml (a deep, recursive
// response schema with long descriptions; HTML in the summary; a free-text
// format; a 3.1 construct in a 3.0 document): with a small
// max_schema_bytes every schema fits, the startup log says what was
// simplified, and the official TypeScript SDK, which validates results
// against the declared outputSchema, accepts the deep result.
func TestSchemasClientsCanAfford(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(r.URL.Path, "/trees/"):
			_, _ = w.Write([]byte(deepTree))
		case r.URL.Path == "/maybe":
			_, _ = w.Write([]byte(`{"v":null}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer backend.Close()
	doc, err := filepath.Abs(filepath.Join("fixture", "shapes.yaml"))
	require.NoError(t, err)
	p := startGateway(t, "--openapi", doc, "--upstream", backend.URL, "--listen", freeAddr(t), "--max-schema-bytes", "1KiB")

	sid := initialize(t, p.url)
	_, body := post(t, p.url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var list struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				Description  string          `json:"description"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &list), "%s", body)
	tools := map[string]int{}
	for i, tool := range list.Result.Tools {
		tools[tool.Name] = i
		require.LessOrEqual(t, len(tool.InputSchema), 1024, tool.Name)
		require.LessOrEqual(t, len(tool.OutputSchema), 1024, tool.Name)
	}
	tree := list.Result.Tools[tools["getTree"]]
	require.Contains(t, string(tree.OutputSchema), "Simplified to fit the gateway's max_schema_bytes", "a cut says so")
	require.Equal(t, "Gets a **tree** & its branches\n\n- deep\n- recursive", tree.Description, "HTML becomes Markdown, entities decoded")
	require.NotContains(t, string(tree.InputSchema), `"format"`, "a free-text format is not left as format")
	require.Contains(t, string(tree.InputSchema), "Format: repo.nwo.", "it is said in the description")

	logs := stderrOf(p)
	require.Contains(t, logs, "1 tool schemas were over max_schema_bytes (1024) and were simplified")
	require.Equal(t, 1, strings.Count(logs, `OpenAPI 3.1 construct in a pre-3.1 document: type \"null\"`), "one warning per construct:\n%s", logs)

	node := findNodeSDK(t)
	calls, err := json.Marshal([]map[string]any{
		{"name": "getTree", "arguments": map[string]any{"id": "octo/hello"}},
		{"name": "getMaybe", "arguments": map[string]any{}},
	})
	require.NoError(t, err)
	cmd := exec.Command(node, filepath.Join("tsclient", "calls.mjs"), p.url, string(calls))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node: %s", stderr.String())
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	want := []string{deepTree, `{"v":null}`}
	for i := 0; sc.Scan(); i++ {
		var r tsResult
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
		require.True(t, r.OK, "%s: the SDK rejected the result: %s", r.Name, r.Error)
		require.False(t, r.IsError, "%s: %s", r.Name, r.Text)
		require.JSONEq(t, want[i], string(r.Structured), r.Name)
	}
}
