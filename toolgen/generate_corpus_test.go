package toolgen

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/specs"
	"github.com/mcp-gateway/mcp-gateway/openapi"
)

func specsDir(tb testing.TB) string { return specs.Dir(tb) }

func TestCorpusGitHub(t *testing.T) {
	_, set := generateFile(t, filepath.Join(specsDir(t), "github-api.github.com.json"), Options{})
	require.Equal(t, 1223, set.Len())
	requireValidSchemas(t, set)

	issues := tool(t, set, "issues_create")
	require.Equal(t, "POST /repos/{owner}/{repo}/issues", method(issues))
	require.True(t, issues.Binding.Body.Flattened)
	require.Contains(t, props(t, issues.InputSchema), "title")
	require.True(t, *tool(t, set, "repos_get").Annotations.ReadOnlyHint)
	for _, w := range set.Warnings() {
		t.Logf("warning: %s", w)
	}
}

// Every OAI example generates tools whose schemas compile (toolgen/call
// checks that their calls can be planned).
func TestCorpusOAI(t *testing.T) {
	dir, files := specs.OAIDocuments(t)
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			_, set := generateFile(t, filepath.Join(dir, rel), Options{})
			requireValidSchemas(t, set)
		})
	}
}

func BenchmarkGenerateGitHub(b *testing.B) {
	doc, err := openapi.Load(context.Background(), filepath.Join(specsDir(b), "github-api.github.com.json"), openapi.LoadOptions{})
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		set, err := Generate(doc, Options{})
		if err != nil || set.Len() != 1223 {
			b.Fatal(err, set.Len())
		}
	}
}

// testdataAndGitHub lists the testdata documents and, when the corpus is
// there, GitHub's description.
func testdataAndGitHub(t *testing.T) []string {
	files, err := filepath.Glob("testdata/*.yaml")
	require.NoError(t, err)
	if dir := os.Getenv(specs.Env); dir != "" {
		files = append(files, filepath.Join(dir, "github-api.github.com.json"))
	}
	return files
}

// The gateway generates tools while kin-openapi validates the same document
// (cmd/mcp-gateway's loadToolSet): both must only read it. Run with -race.
func TestGenerateBesideValidation(t *testing.T) {
	for _, f := range testdataAndGitHub(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			doc, err := openapi.Load(context.Background(), f, openapi.LoadOptions{DeferValidation: true})
			require.NoError(t, err)
			validated := make(chan []openapi.Warning, 1)
			go func() { validated <- openapi.Validate(context.Background(), doc) }()
			_, err = Generate(doc, Options{})
			<-validated
			require.NoError(t, err)
		})
	}
}
