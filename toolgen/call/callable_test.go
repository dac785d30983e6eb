package call

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/specs"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// requireCallable builds the call path's plan for every tool: generation and
// calling must agree on arguments, path parameters and body placement.
func requireCallable(t testing.TB, doc *openapi.Document, set *toolgen.Set) {
	t.Helper()
	c, err := NewCaller(doc, Config{BaseURL: "http://backend.test"})
	require.NoError(t, err)
	for _, tool := range set.Tools() {
		p, err := c.plan(tool.Binding)
		require.NoError(t, err, "the call path cannot call %s", tool.Name)
		var root struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(tool.InputSchema, &root))
		got := make([]string, 0, len(root.Properties))
		for name := range root.Properties {
			got = append(got, name)
		}
		require.ElementsMatch(t, p.argNames, got, "%s: arguments in the schema and in the call plan", tool.Name)
	}
}

func generatedFile(t testing.TB, file string) (*openapi.Document, *toolgen.Set) {
	t.Helper()
	doc, err := openapi.Load(context.Background(), file, openapi.LoadOptions{})
	require.NoError(t, err)
	set, err := toolgen.Generate(doc, toolgen.Options{})
	require.NoError(t, err)
	return doc, set
}

// Every tool generated from toolgen's golden fixtures can be planned.
func TestGoldenFixturesCallable(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			doc, set := generatedFile(t, file)
			requireCallable(t, doc, set)
		})
	}
}

func TestCorpusCallable(t *testing.T) {
	t.Run("github", func(t *testing.T) {
		doc, set := generatedFile(t, specs.GitHub(t))
		requireCallable(t, doc, set)
	})
	dir, files := specs.OAIDocuments(t)
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			doc, set := generatedFile(t, filepath.Join(dir, rel))
			requireCallable(t, doc, set)
		})
	}
}

func TestFlattenedBodyCall(t *testing.T) {
	doc, set := generatedFile(t, "../testdata/bodies.yaml")
	srv := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":1,"name":"ann"}`))
	})
	c, err := NewCaller(doc, Config{BaseURL: srv.URL})
	require.NoError(t, err)
	tool, ok := set.Lookup("createUser")
	require.True(t, ok)
	res := c.Call(context.Background(), tool, json.RawMessage(`{"name":"ann","password":"pw"}`))
	require.False(t, res.IsError, "%+v", res)
	reqs := srv.requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "/users", reqs[0].Path)
	require.JSONEq(t, `{"name":"ann","password":"pw"}`, string(reqs[0].Body))
}
