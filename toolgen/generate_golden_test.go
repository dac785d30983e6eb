package toolgen

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func loadDoc(t testing.TB, file string) *openapi.Document {
	t.Helper()
	doc, err := openapi.Load(context.Background(), file, openapi.LoadOptions{})
	require.NoError(t, err)
	return doc
}

func generateFile(t testing.TB, file string, opts Options) (*openapi.Document, *Set) {
	t.Helper()
	doc := loadDoc(t, file)
	set, err := Generate(doc, opts)
	require.NoError(t, err)
	return doc, set
}

// TestGolden generates the tools of every testdata/*.yaml document and
// compares tools/list's JSON with testdata/NAME.golden.json, and the
// generation warnings with testdata/NAME.warnings.golden; with
// testdata/NAME.inline.golden.json the default (lenient) tools inlined
// (Set.InlineTools). Run with -update to rewrite them, then review the diff.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		base := strings.TrimSuffix(file, ".yaml")
		// NAME.golden.json holds the document's schemas as they are
		// (output_schema: strict), NAME.lenient.golden.json the default.
		for _, mode := range []string{OutputStrict, OutputLenient} {
			golden := base + ".golden.json"
			if mode == OutputLenient {
				golden = base + ".lenient.golden.json"
			}
			t.Run(filepath.Base(base)+"/"+mode, func(t *testing.T) {
				opts := goldenOptions(t, loadDoc(t, file))
				opts.OutputSchema = mode
				_, set := generateFile(t, file, opts)

				var got bytes.Buffer
				require.NoError(t, Print(&got, set, "json"))
				compareGolden(t, golden, got.Bytes())

				var warnings bytes.Buffer
				for _, w := range set.Warnings() {
					fmt.Fprintln(&warnings, w)
				}
				compareGolden(t, base+".warnings.golden", warnings.Bytes())

				requireValidSchemas(t, set)

				if mode == OutputLenient {
					// NAME.inline.golden.json: the same tools as schema_refs:
					// inline lists them, printed the same way.
					inline := &Set{tools: set.InlineTools()}
					var got bytes.Buffer
					require.NoError(t, Print(&got, inline, "json"))
					compareGolden(t, base+".inline.golden.json", got.Bytes())
					requireValidSchemas(t, inline)
					for _, tool := range inline.Tools() {
						requireNoRefs(t, tool.InputSchema)
						if tool.OutputSchema != nil {
							requireNoRefs(t, tool.OutputSchema)
						}
					}
				}

				// Same document, same bytes: names and schemas are deterministic.
				_, again := generateFile(t, file, opts)
				var second bytes.Buffer
				require.NoError(t, Print(&second, again, "json"))
				require.Equal(t, got.String(), second.String(), "generation is not deterministic")
			})
		}
	}
}

// goldenOptions reads the Options a fixture asks for in its top-level
// x-toolgen-test-options extension ({include: [...], exclude: [...],
// maxDescription: n}).
func goldenOptions(t *testing.T, doc *openapi.Document) Options {
	t.Helper()
	raw, ok := doc.T.Extensions["x-toolgen-test-options"]
	if !ok {
		return Options{}
	}
	b, err := json.Marshal(raw)
	require.NoError(t, err)
	var o struct {
		Include        []string `json:"include"`
		Exclude        []string `json:"exclude"`
		MaxDescription int      `json:"maxDescription"`
	}
	require.NoError(t, json.Unmarshal(b, &o))
	return Options{Include: o.Include, Exclude: o.Exclude, MaxDescription: o.MaxDescription}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./toolgen -run TestGolden -update")
	require.Equal(t, string(want), string(got), "%s differs; if the change is intended, run with -update and review the diff", path)
}

// requireValidSchemas compiles every input and output schema as JSON Schema
// 2020-12 (so every $ref resolves within its own $defs) and checks the
// shape MCP requires.
func requireValidSchemas(t testing.TB, set *Set) {
	t.Helper()
	names := map[string]bool{}
	for _, tool := range set.Tools() {
		require.False(t, names[tool.Name], "duplicate tool name %q", tool.Name)
		names[tool.Name] = true
		require.Regexp(t, `^[A-Za-z0-9_-]{1,64}$`, tool.Name)
		require.NotEmpty(t, tool.Description, tool.Name)
		require.NotNil(t, tool.Binding, tool.Name)
		require.Equal(t, tool.Binding.HasOutputSchema, tool.OutputSchema != nil, tool.Name)
		for kind, raw := range map[string]json.RawMessage{"inputSchema": tool.InputSchema, "outputSchema": tool.OutputSchema} {
			if raw == nil {
				continue
			}
			var root map[string]any
			require.NoError(t, json.Unmarshal(raw, &root), "%s %s is not a JSON object", tool.Name, kind)
			require.Equal(t, "object", root["type"], "%s %s: root type", tool.Name, kind)
			c := jsonschema.NewCompiler()
			c.DefaultDraft(jsonschema.Draft2020)
			c.UseRegexpEngine(anyRegexp)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			require.NoError(t, err)
			url := "mem://" + tool.Name + "/" + kind + ".json"
			require.NoError(t, c.AddResource(url, doc))
			_, err = c.Compile(url)
			require.NoError(t, err, "%s %s does not compile as JSON Schema 2020-12", tool.Name, kind)
			if defs, ok := root["$defs"].(map[string]any); ok {
				for name := range defs {
					require.Contains(t, string(raw), `"#/$defs/`+name+`"`, "%s %s: $defs.%s is not referenced", tool.Name, kind, name)
				}
			}
		}
	}
}

// anyRegexp accepts every pattern: documents carry ECMA-262 patterns Go's
// regexp cannot compile, and the check here is about structure.
func anyRegexp(string) (jsonschema.Regexp, error) { return anyMatch{}, nil }

type anyMatch struct{}

func (anyMatch) MatchString(string) bool { return true }
func (anyMatch) String() string          { return "" }
