// Package specs locates the shared corpus of real OpenAPI documents (the
// OpenAPI Initiative examples and GitHub's REST description) for tests and
// benchmarks. A fresh clone does not have it: tests skip without it. It
// imports no project package.
package specs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Env names the folder holding oai/ and github-api.github.com.json; .ci/run
// sets it to ../shared/specs.
const Env = "MCPGW_SPECS_DIR"

// Dir returns the corpus folder, or skips tb with a message saying how to
// provide it.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv(Env)
	if dir == "" {
		tb.Skip(Env + " is not set: skipping tests over the real OpenAPI documents (set it to the specs folder, e.g. ../shared/specs)")
	}
	return dir
}

// GitHub is the path of GitHub's REST description in the corpus.
func GitHub(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(Dir(tb), "github-api.github.com.json")
}

// OAIDocuments lists the OpenAPI Initiative examples that are whole
// documents, relative to the oai folder and in walk order: the
// petstore-separate example's fragments are reached through its
// swagger.yaml.
func OAIDocuments(tb testing.TB) (dir string, files []string) {
	tb.Helper()
	dir = filepath.Join(Dir(tb), "oai")
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".json") {
			return err
		}
		if strings.Contains(p, "petstore-separate") && filepath.Base(p) != "swagger.yaml" {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, rel)
		return nil
	})
	if err != nil {
		tb.Fatalf("listing the OAI examples: %v", err)
	}
	return dir, files
}
