package toolgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/specs"
)

// compact is a JSON text without its spaces, for writing cases readably.
func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, []byte(s)), s)
	return b.String()
}

func TestInlineRefs(t *testing.T) {
	const dialect = `"$schema":"https://json-schema.org/draft/2020-12/schema"`
	cutTree := `{"type":"object","description":"Recursive schema Tree, cut after 2 levels: what it holds here is not described."}`
	cutA := `{"type":"object","description":"Recursive schema A, cut after 2 levels: what it holds here is not described."}`
	for _, tc := range []struct {
		name, in, want string
		dangling       bool // refers outside the schema: does not compile
	}{{
		name: "simple ref",
		in:   `{` + dialect + `,"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"additionalProperties":false,"$defs":{"A":{"type":"string","minLength":1}}}`,
		want: `{` + dialect + `,"type":"object","properties":{"a":{"type":"string","minLength":1}},"additionalProperties":false}`,
	}, {
		name: "a sibling description wins",
		in:   `{"type":"object","properties":{"a":{"$ref":"#/$defs/A","description":"the parameter"}},"$defs":{"A":{"type":"string","description":"the schema","maxLength":3}}}`,
		want: `{"type":"object","properties":{"a":{"type":"string","description":"the parameter","maxLength":3}}}`,
	}, {
		name: "siblings the definition lacks are added after it",
		in:   `{"type":"object","properties":{"a":{"$ref":"#/$defs/A","deprecated":true,"examples":["x"]}},"$defs":{"A":{"type":"string"}}}`,
		want: `{"type":"object","properties":{"a":{"type":"string","deprecated":true,"examples":["x"]}}}`,
	}, {
		name: "a sibling that checks what the definition checks: allOf",
		in:   `{"type":"object","properties":{"a":{"$ref":"#/$defs/A","description":"d","maxLength":2}},"$defs":{"A":{"type":"string","maxLength":3}}}`,
		want: `{"type":"object","properties":{"a":{"description":"d","maxLength":2,"allOf":[{"type":"string","maxLength":3}]}}}`,
	}, {
		name: "properties beside additionalProperties: allOf, joining the sibling's",
		in:   `{"type":"object","properties":{"a":{"$ref":"#/$defs/A","properties":{"y":{}},"allOf":[{"required":["y"]}]}},"$defs":{"A":{"type":"object","properties":{"x":{}},"additionalProperties":false}}}`,
		want: `{"type":"object","properties":{"a":{"properties":{"y":{}},"allOf":[{"required":["y"]},{"type":"object","properties":{"x":{}},"additionalProperties":false}]}}}`,
	}, {
		name: "nested refs",
		in:   `{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"}}},"B":{"type":"array","items":{"$ref":"#/$defs/C"}},"C":{"type":"integer"}}}`,
		want: `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"array","items":{"type":"integer"}}}}}}`,
	}, {
		name: "refs in every kind of place",
		in: `{"type":"object","properties":{
			"items":{"type":"array","items":{"$ref":"#/$defs/S"}},
			"tuple":{"type":"array","prefixItems":[{"$ref":"#/$defs/S"},{"$ref":"#/$defs/N"}]},
			"any":{"anyOf":[{"$ref":"#/$defs/S"},{"type":"null"}]},
			"all":{"allOf":[{"$ref":"#/$defs/N"}],"description":"x"},
			"one":{"oneOf":[{"$ref":"#/$defs/S"},{"$ref":"#/$defs/N"}]},
			"map":{"type":"object","additionalProperties":{"$ref":"#/$defs/N"},"patternProperties":{"^s":{"$ref":"#/$defs/S"}}},
			"not":{"not":{"$ref":"#/$defs/S"}},
			"content":{"type":"string","contentMediaType":"application/json","contentSchema":{"$ref":"#/$defs/N"}}
		},"$defs":{"N":{"type":"number"},"S":{"type":"string"}}}`,
		want: `{"type":"object","properties":{
			"items":{"type":"array","items":{"type":"string"}},
			"tuple":{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}]},
			"any":{"anyOf":[{"type":"string"},{"type":"null"}]},
			"all":{"allOf":[{"type":"number"}],"description":"x"},
			"one":{"oneOf":[{"type":"string"},{"type":"number"}]},
			"map":{"type":"object","additionalProperties":{"type":"number"},"patternProperties":{"^s":{"type":"string"}}},
			"not":{"not":{"type":"string"}},
			"content":{"type":"string","contentMediaType":"application/json","contentSchema":{"type":"number"}}
		}}`,
	}, {
		name: "self-recursive: two levels, then cut",
		in:   `{"type":"object","properties":{"tree":{"$ref":"#/$defs/Tree","description":"the tree"}},"$defs":{"Tree":{"type":"object","description":"a tree","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/Tree"}}}}}}`,
		want: `{"type":"object","properties":{"tree":{"type":"object","description":"the tree","properties":{"name":{"type":"string"},"children":{"type":"array","items":` +
			`{"type":"object","description":"a tree","properties":{"name":{"type":"string"},"children":{"type":"array","items":` + cutTree + `}}}}}}}}`,
	}, {
		name: "mutually recursive: each twice along the path, then cut",
		in:   `{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"}}},"B":{"type":"array","items":{"$ref":"#/$defs/A"}}}}`,
		want: `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"array","items":` +
			`{"type":"object","properties":{"b":{"type":"array","items":` + cutA + `}}}}}}}}`,
	}, {
		name: "a cut definition without a type",
		in:   `{"type":"object","properties":{"e":{"$ref":"#/$defs/E"}},"$defs":{"E":{"anyOf":[{"type":"null"},{"type":"array","items":{"$ref":"#/$defs/E"}}]}}}`,
		want: `{"type":"object","properties":{"e":{"anyOf":[{"type":"null"},{"type":"array","items":{"anyOf":[{"type":"null"},{"type":"array","items":` +
			`{"description":"Recursive schema E, cut after 2 levels: what it holds here is not described."}}]}}]}}}`,
	}, {
		name: "one definition inside a recursive one, each expanded as often as it is met",
		in:   `{"type":"object","properties":{"l":{"$ref":"#/$defs/List"},"m":{"$ref":"#/$defs/List"}},"$defs":{"List":{"type":"object","properties":{"v":{"$ref":"#/$defs/V"},"next":{"$ref":"#/$defs/List"}}},"V":{"type":"integer"}}}`,
		want: `{"type":"object","properties":{` +
			`"l":{"type":"object","properties":{"v":{"type":"integer"},"next":{"type":"object","properties":{"v":{"type":"integer"},"next":{"type":"object","description":"Recursive schema List, cut after 2 levels: what it holds here is not described."}}}}},` +
			`"m":{"type":"object","properties":{"v":{"type":"integer"},"next":{"type":"object","properties":{"v":{"type":"integer"},"next":{"type":"object","description":"Recursive schema List, cut after 2 levels: what it holds here is not described."}}}}}}}`,
	}, {
		name: "boolean definitions",
		in:   `{"type":"object","properties":{"t":{"$ref":"#/$defs/T"},"f":{"$ref":"#/$defs/F","description":"never"}},"$defs":{"T":true,"F":false}}`,
		want: `{"type":"object","properties":{"t":true,"f":{"description":"never","allOf":[false]}}}`,
	}, {
		name: "discriminator mappings into $defs go",
		in:   `{"type":"object","properties":{"pet":{"oneOf":[{"$ref":"#/$defs/Cat"}],"discriminator":{"propertyName":"kind","mapping":{"cat":"#/$defs/Cat"}}}},"$defs":{"Cat":{"type":"object"}}}`,
		want: `{"type":"object","properties":{"pet":{"oneOf":[{"type":"object"}],"discriminator":{"propertyName":"kind"}}}}`,
	}, {
		name:     "other references stay",
		in:       `{"type":"object","properties":{"x":{"$ref":"https://example.com/x.json"},"m":{"$ref":"#/$defs/Missing"},"p":{"$ref":"#/properties/x"},"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"null"}}}`,
		want:     `{"type":"object","properties":{"x":{"$ref":"https://example.com/x.json"},"m":{"$ref":"#/$defs/Missing"},"p":{"$ref":"#/properties/x"},"a":{"type":"null"}}}`,
		dangling: true,
	}, {
		name: "examples and defaults are values, not schemas",
		in:   `{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"examples":[{"a":{"$ref":"#/$defs/A"}}],"$defs":{"A":{"type":"object","default":{"$ref":"x"}}}}`,
		want: `{"type":"object","properties":{"a":{"type":"object","default":{"$ref":"x"}}},"examples":[{"a":{"$ref":"#/$defs/A"}}]}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := inlineRefs([]byte(compact(t, tc.in)))
			require.Equal(t, compact(t, tc.want), string(got))
			if !tc.dangling {
				compileSchema(t, got)
			}
		})
	}
}

func TestInlineRefsWithoutDefsIsUnchanged(t *testing.T) {
	for _, in := range []string{
		`{"$schema":"https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"a": {"type": "string"}}}`,
		`{"type":"object","properties":{"x":{"$ref":"#/$defs/X"}}}`, // dangling: not ours to fix
		`true`,
		`not json`,
	} {
		require.Equal(t, in, string(inlineRefs([]byte(in))))
	}
}

func TestInlineTools(t *testing.T) {
	_, set := generateFile(t, "testdata/schemas.yaml", Options{})
	tools, inline := set.Tools(), set.InlineTools()
	require.Len(t, inline, len(tools))
	hadRefs := false
	for i, tl := range tools {
		got := inline[i]
		require.NotSame(t, tl, got)
		require.Equal(t, tl.Name, got.Name)
		require.Equal(t, tl.Title, got.Title)
		require.Equal(t, tl.Description, got.Description)
		require.Same(t, tl.Binding, got.Binding)
		require.Same(t, tl.Annotations, got.Annotations)
		require.Same(t, tl.Confirm, got.Confirm)
		require.Equal(t, tl.OutputSchema == nil, got.OutputSchema == nil, tl.Name)
		hadRefs = hadRefs || bytes.Contains(tl.InputSchema, []byte(`"$ref"`)) || bytes.Contains(tl.OutputSchema, []byte(`"$ref"`))
		require.Equal(t, []byte(tl.OutputSchema), []byte(tl.Binding.OutputSchema), "the call path keeps the $defs form")
	}
	require.True(t, hadRefs, "the fixture has references to inline")

	// Computed once, whoever asks first.
	_, fresh := generateFile(t, "testdata/schemas.yaml", Options{})
	lists := make(chan []*Tool, 8)
	for range cap(lists) {
		go func() { lists <- fresh.InlineTools() }()
	}
	first := <-lists
	for range cap(lists) - 1 {
		again := <-lists
		for i := range again {
			require.Same(t, first[i], again[i])
		}
	}
	// Each Set has its own, the same.
	require.NotSame(t, inline[0], first[0])
	require.Equal(t, inline[0].InputSchema, first[0].InputSchema)
}

// A Set's inlined tools go when the Set does.
func TestInlineToolsAreCollected(t *testing.T) {
	key := func() weak.Pointer[Set] {
		_, set := generateFile(t, "testdata/schemas.yaml", Options{})
		set.InlineTools()
		return weak.Make(set)
	}()
	_, ok := inlined.Load(key)
	require.True(t, ok)
	require.Eventually(t, func() bool {
		runtime.GC()
		_, ok := inlined.Load(key)
		return !ok
	}, 10*time.Second, 10*time.Millisecond)
}

// fitDoc has a body whose properties all reference one big definition:
// small with $defs, many times the size inlined.
func fitDoc(refs int) string {
	var props, big strings.Builder
	for i := range refs {
		fmt.Fprintf(&props, "                p%d: {$ref: '#/components/schemas/Big'}\n", i)
	}
	for i := range 20 {
		fmt.Fprintf(&big, "        f%d: {type: string, description: %q}\n", i, strings.Repeat("a long description ", 5))
	}
	return `openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /x:
    post:
      operationId: many
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
` + props.String() + `      responses:
        '204': {description: ok}
components:
  schemas:
    Big:
      type: object
      properties:
        inner:
          type: object
          properties:
` + strings.ReplaceAll(big.String(), "        f", "            f") + big.String()
}

func TestInlineToolsFit(t *testing.T) {
	const bound = 8 << 10
	doc := fitDoc(20)
	set := genDoc(t, doc, Options{MaxSchemaBytes: bound})
	orig := tool(t, set, "many").InputSchema
	require.LessOrEqual(t, len(orig), bound, "the $defs form fits")
	full := inlineRefs(orig)
	require.Greater(t, len(full), bound, "the inlined form does not")

	got := set.InlineTools()[0].InputSchema
	require.LessOrEqual(t, len(got), bound)
	require.NotContains(t, string(got), "a long description", "simplified: the deep descriptions went")
	requireNoRefs(t, got)
	compiled := compileSchema(t, got)
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"p0":{"f1":"x","inner":{"f2":"y"}},"p19":{}}`))
	require.NoError(t, err)
	require.NoError(t, compiled.Validate(v))

	// No bound: inlined as it is.
	unbounded := genDoc(t, doc, Options{MaxSchemaBytes: -1})
	require.Equal(t, string(inlineRefs(tool(t, unbounded, "many").InputSchema)), string(unbounded.InlineTools()[0].InputSchema))
}

// requireNoRefs checks that no subschema of raw has "$ref" or "$defs".
func requireNoRefs(t testing.TB, raw []byte) {
	t.Helper()
	var s any
	require.NoError(t, json.Unmarshal(raw, &s))
	var walk func(s any, at string)
	walk = func(s any, at string) {
		m, ok := s.(map[string]any)
		if !ok {
			return
		}
		require.NotContains(t, m, "$ref", "at %s", at)
		require.NotContains(t, m, "$defs", "at %s", at)
		for k, v := range m {
			kind := subKeywords[k].kind
			if k == "contentSchema" {
				kind = subOne
			}
			switch v := v.(type) {
			case map[string]any:
				if kind == subMap {
					for name, sub := range v {
						walk(sub, at+"/"+k+"/"+name)
					}
				} else if kind == subOne {
					walk(v, at+"/"+k)
				}
			case []any:
				if kind == subList || kind == subOne {
					for i, sub := range v {
						walk(sub, fmt.Sprintf("%s/%s/%d", at, k, i))
					}
				}
			}
		}
	}
	walk(s, "#")
}

// Every tool of every fixture and of the corpus: inlined schemas hold no
// reference, compile as JSON Schema 2020-12, and accept what the $defs
// form accepts (instances made from the original schema, those it accepts).
func TestInlineEveryDocument(t *testing.T) {
	type run struct {
		file string
		opts Options
		// every: instances for every n-th tool only; GitHub's thousands of
		// schemas compiled twice more would double the corpus tests' time.
		every int
	}
	var runs []run
	files, err := filepath.Glob("testdata/*.yaml")
	require.NoError(t, err)
	for _, f := range files {
		for _, mode := range []string{OutputStrict, OutputLenient} {
			runs = append(runs, run{f, Options{OutputSchema: mode}, 1})
		}
	}
	if os.Getenv(specs.Env) != "" {
		runs = append(runs, run{specs.GitHub(t), Options{}, 10})
		oai, docs := specs.OAIDocuments(t)
		for _, rel := range docs {
			runs = append(runs, run{filepath.Join(oai, rel), Options{}, 1})
		}
	}
	for _, r := range runs {
		t.Run(filepath.Base(r.file)+"/"+r.opts.OutputSchema, func(t *testing.T) {
			_, set := generateFile(t, r.file, r.opts)
			checked, accepted := 0, 0
			for i, tl := range set.InlineTools() {
				orig := set.Tools()[i]
				for _, pair := range [][2]json.RawMessage{{orig.InputSchema, tl.InputSchema}, {orig.OutputSchema, tl.OutputSchema}} {
					if pair[0] == nil {
						continue
					}
					requireNoRefs(t, pair[1])
					after := compileSchema(t, pair[1])
					if i%r.every != 0 {
						continue
					}
					before := compileSchema(t, pair[0])
					for _, full := range []bool{true, false} {
						inst := instance(t, pair[0], full)
						checked++
						if before.Validate(inst) != nil {
							continue // a made-up value may miss a pattern or a bound
						}
						accepted++
						require.NoError(t, after.Validate(inst), "%s: the inlined schema refuses what the original accepts:\n%s", tl.Name, pair[1])
					}
				}
			}
			t.Logf("%d tools, %d instances, %d of them valid and accepted inlined", set.Len(), checked, accepted)
		})
	}
}

// instance makes a value the schema raw describes: objects with every
// property (full) or only the required ones, the first of any enum,
// example or branch, references followed a few levels deep. It is not
// always valid (patterns, formats and bounds are not looked at).
func instance(t *testing.T, raw []byte, full bool) any {
	t.Helper()
	var root map[string]any
	require.NoError(t, json.Unmarshal(raw, &root))
	defs, _ := root["$defs"].(map[string]any)
	var gen func(s any, depth int) any
	gen = func(s any, depth int) any {
		m, ok := s.(map[string]any)
		if !ok || depth > 12 {
			return nil
		}
		if ref, ok := m["$ref"].(string); ok {
			if def, ok := defs[strings.TrimPrefix(ref, "#/$defs/")]; ok {
				return gen(def, depth+1)
			}
		}
		for _, k := range []string{"const", "default"} {
			if v, ok := m[k]; ok {
				return v
			}
		}
		for _, k := range []string{"enum", "examples"} {
			if v, ok := m[k].([]any); ok && len(v) > 0 {
				return v[0]
			}
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			if v, ok := m[k].([]any); ok && len(v) > 0 && m["type"] == nil && m["properties"] == nil {
				return gen(v[0], depth+1)
			}
		}
		typ := m["type"]
		if list, ok := typ.([]any); ok && len(list) > 0 {
			typ = list[0]
		}
		if typ == nil && m["properties"] != nil {
			typ = "object"
		}
		switch typ {
		case "string":
			n := 1
			if l, ok := m["minLength"].(float64); ok {
				n = int(l)
			}
			return strings.Repeat("x", n)
		case "integer", "number":
			if v, ok := m["minimum"].(float64); ok {
				return v
			}
			return 1
		case "boolean":
			return true
		case "array":
			if items, ok := m["items"]; ok {
				return []any{gen(items, depth+1)}
			}
			return []any{}
		case "object":
			obj := map[string]any{}
			props, _ := m["properties"].(map[string]any)
			req, _ := m["required"].([]any)
			for _, r := range req {
				name, _ := r.(string)
				obj[name] = gen(props[name], depth+1)
			}
			if full {
				for name, p := range props {
					obj[name] = gen(p, depth+1)
				}
			}
			return obj
		}
		return nil
	}
	// Through the same decoder the schemas are compiled with.
	b, err := json.Marshal(gen(root, 0))
	require.NoError(t, err)
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	return v
}

// BenchmarkInlineGitHub is InlineTools' work for GitHub's tools, and the
// size of tools/list (all the tools' JSON) with $defs, inlined and fitted
// to the default max_schema_bytes, and inlined without a bound.
func BenchmarkInlineGitHub(b *testing.B) {
	_, set := generateFile(b, specs.GitHub(b), Options{})
	size := func(tools []*Tool) float64 {
		out, err := json.Marshal(tools)
		require.NoError(b, err)
		return float64(len(out))
	}
	defs, inline, unbounded := size(set.tools), size(inlineTools(set.tools, set.opts.MaxSchemaBytes)), size(inlineTools(set.tools, -1))
	b.ReportAllocs()
	for b.Loop() {
		inlineTools(set.tools, set.opts.MaxSchemaBytes)
	}
	// After the loop: b.Loop's reset would delete them.
	b.ReportMetric(defs, "defs-bytes")
	b.ReportMetric(inline, "inline-bytes")
	b.ReportMetric(unbounded, "unbounded-bytes")
}
