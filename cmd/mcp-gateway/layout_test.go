package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/mcp-gateway/mcp-gateway/"

// goFile is one source file of the repository and what it imports.
type goFile struct {
	pkg     string // directory relative to the repository root
	name    string // file name
	test    bool
	imports []string
}

func repoFiles(t *testing.T) []goFile {
	t.Helper()
	root := filepath.Join("..", "..")
	var out []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		gf := goFile{pkg: filepath.ToSlash(rel), name: d.Name(), test: strings.HasSuffix(p, "_test.go")}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			gf.imports = append(gf.imports, path)
		}
		out = append(out, gf)
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, out)
	return out
}

// The package layout the README and DESIGN.md describe, enforced: which
// project packages each may import (non-test files), and where the
// third-party libraries with one home live.
func TestPackageLayout(t *testing.T) {
	features := []string{"gateway/tools", "gateway/resources", "gateway/prompts", "gateway/completion"}
	// allowed lists the project packages a package may import; a package
	// not listed here may import any.
	allowed := map[string][]string{
		"internal/jsonlex":    {},
		"internal/redact":     {},
		"internal/lograte":    {},
		"gateway/mcp":         {"internal/jsonlex"},
		"gateway/mcp/mcptest": {"gateway/mcp"},
		"openapi":             {"internal/jsonlex"},
		"toolgen":             {"openapi", "internal/jsonlex"},
		"toolgen/call":        {"toolgen", "openapi", "gateway/mcp", "internal/jsonlex", "internal/redact"},
		// Ranking operations for search_operations: the tools only.
		"toolgen/search":         {"toolgen"},
		"sessions":               {},
		"sessions/subscriptions": {"internal/redisx"},
		"sessions/documents":     {"internal/redisx"},
		"sessions/pending":       {"internal/redisx"},
		"pubsub":                 {},
		"pubsub/lease":           {"internal/redisx"},
		"quota":                  {"internal/redisx"},
		// Resource change watching: the stores it coordinates through and
		// the validators of a conditional GET; no feature package.
		"gateway/watch": {"sessions/subscriptions", "pubsub", "pubsub/lease", "toolgen/call", "internal/lograte"},
		// Not MCP features: the token verifier and the audit log, which
		// cmd/mcp-gateway builds and hands to gateway through Deps.
		"gateway/auth":  {"gateway/mcp"},
		"gateway/audit": {"internal/lograte"},
		// The sealed MRTR requestState: the standard library only.
		"gateway/mrtr": {},
	}
	for _, f := range features {
		allowed[f] = []string{"gateway/mcp", "toolgen", "toolgen/call", "toolgen/search", "openapi", "quota", "sessions", "pubsub", "internal/jsonlex", "internal/lograte"}
	}
	thirdParty := map[string]func(f goFile) bool{
		"github.com/redis/go-redis/v9": func(f goFile) bool {
			return f.name == "redis.go" || strings.HasSuffix(f.name, "_redis.go") || f.pkg == "internal/redistest"
		},
		"github.com/labstack/echo/v4": func(f goFile) bool { return f.pkg == "gateway" && f.name == "http.go" },
		"github.com/golang-jwt/jwt":   func(f goFile) bool { return f.pkg == "gateway/auth" },
		"github.com/MicahParks/":      func(f goFile) bool { return f.pkg == "gateway/auth" },
		"golang.org/x/oauth2":         func(f goFile) bool { return f.pkg == "toolgen/call" && f.name == "tokens_client.go" },
		// The OpenTelemetry API in the gateway's trace*.go; the SDK and
		// the exporter only where cmd builds the provider.
		"go.opentelemetry.io/otel": func(f goFile) bool {
			return f.pkg == "gateway" && strings.HasPrefix(f.name, "trace") || isTracingFile(f)
		},
		"go.opentelemetry.io/otel/sdk":       isTracingFile,
		"go.opentelemetry.io/otel/exporters": isTracingFile,
		"github.com/getkin/kin-openapi": func(f goFile) bool {
			return f.pkg == "openapi" || f.pkg == "toolgen" || f.pkg == "toolgen/call"
		},
	}
	files := repoFiles(t)
	for _, f := range files {
		if f.test {
			continue
		}
		for _, imp := range f.imports {
			where := f.pkg + "/" + f.name
			if own, ok := strings.CutPrefix(imp, module); ok {
				if list, limited := allowed[f.pkg]; limited {
					require.True(t, slices.Contains(list, own), "%s imports %s; %s may import only %v", where, own, f.pkg, list)
				}
				if slices.Contains(features, own) {
					require.Equal(t, "gateway", f.pkg, "%s imports the feature package %s: only gateway may", where, own)
				}
				if own == "gateway" {
					require.Contains(t, []string{"cmd/mcp-gateway", "bench"}, f.pkg, "%s imports gateway: no feature or leaf package may", where)
				}
				continue
			}
			for lib, ok := range thirdParty {
				if strings.HasPrefix(imp, lib) {
					require.True(t, ok(f), "%s imports %s outside its one home", where, imp)
				}
			}
		}
	}
}

// isTracingFile: cmd/mcp-gateway's tracing.go and tracing_*.go.
func isTracingFile(f goFile) bool {
	return f.pkg == "cmd/mcp-gateway" && (f.name == "tracing.go" || strings.HasPrefix(f.name, "tracing_"))
}

// Every package has a doc comment that says its role and what it may or
// must not import.
func TestPackagesHaveDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	pkgs := map[string]bool{}
	for _, f := range repoFiles(t) {
		if !f.test {
			pkgs[f.pkg] = true
		}
	}
	fset := token.NewFileSet()
	for pkg := range pkgs {
		matches, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		require.NoError(t, err)
		var doc string
		for _, m := range matches {
			if strings.HasSuffix(m, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, m, nil, parser.PackageClauseOnly|parser.ParseComments)
			require.NoError(t, err)
			if f.Doc != nil {
				doc += f.Doc.Text()
			}
		}
		require.NotEmpty(t, doc, "package %s has no doc comment", pkg)
		require.Contains(t, doc, "import", "the doc comment of %s does not say what it may import", pkg)
	}
}
