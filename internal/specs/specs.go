// Package specs locates the shared corpus of real OpenAPI documents (the
// OpenAPI Initiative examples and GitHub's REST description) for tests and
// benchmarks. A fresh clone does not have it: tests skip without it. It
// imports no project package.
package specs

import (
	"os"
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
