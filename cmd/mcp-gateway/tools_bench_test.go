package main

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/internal/specs"
)

// BenchmarkToolsGitHub is the tools command on GitHub's REST description:
// load, generate and print every tool as JSON (bench's fresh-process figure,
// in process).
func BenchmarkToolsGitHub(b *testing.B) {
	file := filepath.Join(specs.Dir(b), "github-api.github.com.json")
	b.ReportAllocs()
	for b.Loop() {
		if code := run(b.Context(), []string{"tools", "--openapi", file, "--format", "json", "--log-level", "error"}, io.Discard, io.Discard, env(nil)); code != exitOK {
			b.Fatalf("exit %d", code)
		}
	}
}
