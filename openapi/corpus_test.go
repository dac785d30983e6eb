package openapi_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/specs"
	"github.com/mcp-gateway/mcp-gateway/openapi"
)

func specsDir(tb testing.TB) string { return specs.Dir(tb) }

// TestCorpusOAI loads every example document of the OpenAPI Initiative.
// Files that are fragments of a multi-file document (no top-level openapi
// or swagger field) are loaded through the document that refers to them.
func TestCorpusOAI(t *testing.T) {
	dir := filepath.Join(specsDir(t), "oai")
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ext := filepath.Ext(p)
		if ext != ".yaml" && ext != ".json" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		head := string(data)
		if !strings.Contains(head, "openapi") && !strings.Contains(head, "swagger") {
			return nil
		}
		if strings.Contains(p, "petstore-separate") && filepath.Base(p) != "swagger.yaml" {
			return nil
		}
		n++
		rel, _ := filepath.Rel(dir, p)
		t.Run(rel, func(t *testing.T) {
			doc, err := openapi.Load(context.Background(), p, openapi.LoadOptions{})
			require.NoError(t, err)
			require.NotNil(t, doc.T)
			for _, w := range doc.Warnings {
				t.Logf("warning: %s", w)
			}
		})
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 10, "expected the OAI examples under %s", dir)
}

func TestCorpusPetstoreSeparate(t *testing.T) {
	p := filepath.Join(specsDir(t), "oai/v2.0/petstore-separate/spec/swagger.yaml")
	doc := load(t, p)
	find := doc.T.Paths.Find("/pets").Get
	params := map[string]string{}
	for _, ref := range find.Parameters {
		require.NotNil(t, ref.Value.Schema, "parameter %s from parameters.yaml has a schema", ref.Value.Name)
		params[ref.Value.Name] = ref.Value.Schema.Value.Type.Slice()[0]
	}
	require.Equal(t, map[string]string{"tags": "array", "limit": "integer"}, params)

	add := doc.T.Paths.Find("/pets").Post
	body := add.RequestBody.Value.Content.Get("application/json").Schema.Value
	require.Len(t, body.AllOf, 2)
	require.Contains(t, body.AllOf[0].Value.Properties, "name", "NewPet.yaml's allOf refers to Pet.yaml")
	errSchema := add.Responses.Default().Value.Content.Get("application/json").Schema.Value
	require.Contains(t, errSchema.Properties, "message", "../common/Error.yaml")
}

func TestCorpusGitHub(t *testing.T) {
	p := filepath.Join(specsDir(t), "github-api.github.com.json")
	doc := load(t, p)
	require.Equal(t, "3.0.3", doc.SourceVersion)
	require.Len(t, openapi.Operations(doc.T), 1223)
	for _, w := range doc.Warnings {
		t.Logf("warning: %s", w)
	}
}

func TestCorpusGitHubFastPathMatchesKin(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: decodes GitHub's description twice")
	}
	compareWithKin(t, filepath.Join(specsDir(t), "github-api.github.com.json"))
}

func BenchmarkLoadGitHub(b *testing.B) {
	p := filepath.Join(specsDir(b), "github-api.github.com.json")
	data, err := os.ReadFile(p)
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := openapi.LoadData(context.Background(), data, p, openapi.LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeGitHubJSON is the floor to compare BenchmarkLoadGitHub with:
// plain encoding/json into an any, no OpenAPI types, no $ref resolution.
func BenchmarkDecodeGitHubJSON(b *testing.B) {
	p := filepath.Join(specsDir(b), "github-api.github.com.json")
	data, err := os.ReadFile(p)
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}
