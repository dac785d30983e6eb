package call

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
	"github.com/mcp-gateway/mcp-gateway/internal/specs"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// lenientSchemas are the lenient output schemas generated from the golden
// fixtures (and, with the corpus, from GitHub's description).
func lenientSchemas(t *testing.T, withCorpus bool) map[string]json.RawMessage {
	t.Helper()
	files, err := filepath.Glob("../testdata/*.yaml")
	require.NoError(t, err)
	files = append(files, "testdata/drift.yaml")
	if withCorpus && os.Getenv(specs.Env) != "" {
		files = append(files, specs.GitHub(t))
	}
	out := map[string]json.RawMessage{}
	for _, f := range files {
		doc, err := openapi.Load(t.Context(), f, openapi.LoadOptions{})
		require.NoError(t, err)
		set, err := toolgen.Generate(doc, toolgen.Options{})
		require.NoError(t, err)
		for _, tl := range set.Tools() {
			if mode, set := tl.Binding.Operation.Extensions["x-mcp-output-schema"]; set && mode != toolgen.OutputLenient {
				continue // this operation asks for another mode
			}
			if tl.OutputSchema != nil && tl.Binding.HasOutputSchema {
				out[filepath.Base(f)+"/"+tl.Name] = tl.OutputSchema
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

// Every lenient schema gets the fast check (that is what lenient is for),
// and the fast check never lets through what the library refuses: over
// values made from the schema's own property names, with wrong types,
// nulls, nesting and extra members mixed in, "fits" implies the library
// accepts. It must also say "fits" often, or it would only be slow.
func TestShapeCheckAgreesWithTheLibrary(t *testing.T) {
	schemas := lenientSchemas(t, true)
	names := make([]string, 0, len(schemas))
	for n := range schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	rng := rand.New(rand.NewPCG(7, 11))
	fits, total := 0, 0
	for _, name := range names {
		raw := schemas[name]
		check := compileOutput(raw)
		require.NotNil(t, check, name)
		require.NotNil(t, check.fast, "%s: a lenient schema without the fast check: %s", name, raw)
		keys := propertyNames(raw)
		for range 60 {
			v := randomValue(rng, keys, 0)
			data, err := json.Marshal(v)
			require.NoError(t, err)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
			require.NoError(t, err)
			libOK := check.schema.Validate(inst) == nil
			fastOK := check.fast.fits(data)
			total++
			if fastOK {
				fits++
				require.True(t, libOK, "%s: the fast check let through what the library refuses:\n%s\nschema %s", name, data, raw)
			}
		}
		// A value made to fit: the object with every property null-free
		// per its type is too much to build here; the drift fixture's
		// bodies are checked in TestStructuredContentAlwaysFitsTheDeclaredSchema.
	}
	t.Logf("%d schemas, %d values, the fast check said fits for %d", len(names), total, fits)
	require.Greater(t, fits, total/20, "the fast check almost never says fits")
}

// The fast check agrees on hand-picked values for each keyword it reads.
func TestShapeCheckCases(t *testing.T) {
	for _, tc := range []struct {
		schema, value string
		fits          bool
	}{
		{`{"type":"integer"}`, `3`, true},
		{`{"type":"integer"}`, `3.5`, false},
		{`{"type":"integer"}`, `"3"`, false},
		{`{"type":["string","null"]}`, `null`, true},
		{`{"type":["string","null"]}`, `1`, false},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":"x","b":1}`, true},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"b":1,"a":2}`, false},
		{`{"type":"object","properties":{"a\"b":{"type":"string"}}}`, `{"a\"b":2}`, false},
		{`{"type":"object","properties":{"ab":{"type":"string"}}}`, `{"\u0061b":2}`, false},
		{`{"type":"object","additionalProperties":{"type":"integer"}}`, `{"x":1,"y":"2"}`, false},
		{`{"type":"array","items":{"type":"string"}}`, `["a","b\"c"]`, true},
		{`{"type":"array","items":{"type":"string"}}`, `["a",1]`, false},
		{`{"type":"array","prefixItems":[{"type":"integer"}],"items":{"type":"string"}}`, `[1,"a"]`, true},
		{`{"type":"array","prefixItems":[{"type":"integer"}],"items":{"type":"string"}}`, `["a"]`, false},
		{`{"anyOf":[{"type":"string"},{"type":"null"}]}`, `null`, true},
		{`{"anyOf":[{"type":"string"},{"type":"null"}]}`, `{}`, false},
		{`{"allOf":[{"type":"object"},{"properties":{"a":{"type":"integer"}}}]}`, `{"a":1}`, true},
		{`{"allOf":[{"type":"object"},{"properties":{"a":{"type":"integer"}}}]}`, `{"a":[]}`, false},
		{`{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}}}`, `{"next":{"next":{"next":null}}}`, false},
		{`{"$ref":"#/$defs/N","$defs":{"N":{"type":["object","null"],"properties":{"next":{"$ref":"#/$defs/N"}}}}}`, `{"next":{"next":{"next":null}}}`, true},
		{`{"type":"object","properties":{"a":{"description":"anything"}}}`, `{"a":[1,{"b":"}"}]}`, true},
		{`false`, `1`, false},
		{`{"type":"integer"}`, `1.0000000000000000001`, false},
		{`{"type":"integer"}`, `12345678901234567.5`, false},
		{`{"type":"integer"}`, `1e-400`, false},
		{`{"type":"object","required":["a","b"]}`, `{"b":1,"a":2}`, true},
		{`{"type":"object","required":["a","b"]}`, `{"b":1}`, false},
		{`{"type":"object","required":["a"]}`, `{}`, false},
		{`{"type":"object","properties":{"a":{}},"required":["a"]}`, `{"\u0061":1}`, true},
	} {
		check := compileOutput(json.RawMessage(tc.schema))
		require.NotNil(t, check, tc.schema)
		require.NotNil(t, check.fast, tc.schema)
		require.Equal(t, tc.fits, check.fast.fits([]byte(tc.value)), "%s on %s", tc.value, tc.schema)
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.value))
		require.NoError(t, err)
		require.Equal(t, tc.fits, check.schema.Validate(inst) == nil, "the library on %s, %s", tc.value, tc.schema)
	}
	// 1.0 is an integer in 2020-12; the fast check leaves it to the library.
	check := compileOutput(json.RawMessage(`{"type":"integer"}`))
	require.False(t, check.fast.fits([]byte(`3.0`)))
	require.Equal(t, "", check.check([]byte(`3.0`), false))
	// A cycle that never moves on in the data gets no fast check (walking
	// it would never end); the library copes.
	for _, s := range []string{
		`{"$ref":"#/$defs/A","$defs":{"A":{"anyOf":[{"$ref":"#/$defs/A"},{"type":"string"}]}}}`,
		`{"$ref":"#/$defs/A","$defs":{"A":{"allOf":[{"$ref":"#/$defs/B"}]},"B":{"$ref":"#/$defs/A"}}}`,
	} {
		check := compileOutput(json.RawMessage(s))
		if check != nil {
			require.Nil(t, check.fast, s)
			_ = check.check([]byte(`"x"`), false)
		}
	}
	// A cycle through properties is fine: it consumes the data.
	check = compileOutput(json.RawMessage(`{"$ref":"#/$defs/N","$defs":{"N":{"type":["object","null"],"properties":{"next":{"$ref":"#/$defs/N"}}}}}`))
	require.NotNil(t, check.fast)
	// A schema that asserts more than a shape gets no fast check.
	for _, s := range []string{`{"type":"string","enum":["a"]}`, `{"type":"string","format":"date"}`, `{"oneOf":[{"type":"string"}]}`} {
		check := compileOutput(json.RawMessage(s))
		require.NotNil(t, check, s)
		require.Nil(t, check.fast, s)
	}
}

// propertyNames collects every property name of a schema, for values that
// reach deep into it.
func propertyNames(raw json.RawMessage) []string {
	var v any
	_ = json.Unmarshal(raw, &v)
	seen := map[string]bool{}
	var walk func(any)
	walk = func(x any) {
		switch t := x.(type) {
		case map[string]any:
			if props, ok := t["properties"].(map[string]any); ok {
				for k := range props {
					seen[k] = true
				}
			}
			for _, v := range t {
				walk(v)
			}
		case []any:
			for _, v := range t {
				walk(v)
			}
		}
	}
	walk(v)
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return append(out, "result", "extra")
}

func randomValue(rng *rand.Rand, keys []string, depth int) any {
	n := 8
	if depth > 4 {
		n = 5 // leaves only
	}
	switch rng.IntN(n) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return rng.IntN(100) - 10
	case 3:
		return float64(rng.IntN(1000)) / 8
	case 4:
		return fmt.Sprintf("s%d", rng.IntN(10))
	case 5, 6:
		m := map[string]any{}
		for range rng.IntN(5) {
			m[keys[rng.IntN(len(keys))]] = randomValue(rng, keys, depth+1)
		}
		return m
	default:
		var a []any
		for range rng.IntN(4) {
			a = append(a, randomValue(rng, keys, depth+1))
		}
		return a
	}
}

// The fast check validates the JSON as it walks (a body it passes gets no
// other scan): nothing that is not JSON fits, whatever the schema.
func TestShapeCheckRefusesWhatIsNotJSON(t *testing.T) {
	schemas := []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"a":{"type":"integer"},"s":{"type":"string"},"l":{"type":"array","items":{"type":"number"}}}}`,
		`{"type":"object","properties":{"a":{}},"additionalProperties":{"description":"any"}}`,
	}
	bodies := []string{
		`{"a":1,}`, `{"a":1`, `{"a":1}}`, `{"a" 1}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":tru}`, `{"a":nul}`,
		`{"s":"bad \x escape"}`, "{\"s\":\"raw \x01 control\"}", `{"s":"unterminated}`, `{"l":[1,2,]}`, `{"l":[1 2]}`,
		`{"z":{"x":[1,{]}}`, `{"z":"\ud800x"x}`, `{a:1}`, `{"a":1} trailing`, `{"a":+1}`, `{"l":[.5]}`,
	}
	for _, sc := range schemas {
		check := compileOutput(json.RawMessage(sc))
		require.NotNil(t, check.fast, sc)
		for _, b := range bodies {
			require.False(t, json.Valid([]byte(b)), "the case %q must not be JSON", b)
			require.False(t, check.fast.fits([]byte(b)), "%q fits %s", b, sc)
			require.False(t, check.fitsObject([]byte(b), false), "%q", b)
		}
	}
	// Deep data under a recursive schema is "not sure", not a crash.
	check := compileOutput(json.RawMessage(`{"$ref":"#/$defs/N","$defs":{"N":{"type":"array","items":{"$ref":"#/$defs/N"}}}}`))
	deep := strings.Repeat("[", 200000) + strings.Repeat("]", 200000)
	require.False(t, check.fast.fits([]byte(deep)))
	// The nesting bound is jsonlex.Valid's, counted from the top, also
	// where the walk hands a deep value to the scanner: half the depth
	// walked through the schema, half skipped.
	check = compileOutput(json.RawMessage(`{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"a":{"$ref":"#/$defs/N"}}}}}`))
	for _, total := range []int{jsonlex.MaxDepth - 1, jsonlex.MaxDepth, jsonlex.MaxDepth + 1, 2 * jsonlex.MaxDepth} {
		walked := total / 2
		body := strings.Repeat(`{"a":`, walked-1) + `{"b":` + strings.Repeat("[", total-walked) + strings.Repeat("]", total-walked) + "}" + strings.Repeat("}", walked-1)
		require.Equal(t, jsonlex.Valid([]byte(body)), check.fast.fits([]byte(body)), "nesting %d", total)
		require.Equal(t, total <= jsonlex.MaxDepth, check.fast.fits([]byte(body)), "nesting %d", total)
	}
}

// FuzzShapeCheckIsAValidator: whatever the fast check passes is JSON.
func FuzzShapeCheckIsAValidator(f *testing.F) {
	for _, s := range []string{`{"a":1,"s":"x","l":[1.5,2],"z":{"q":[true,null]}}`, `{"a":"\u00e9\"","l":[]}`, `{}`, `{"l":[1,2,3]}`} {
		f.Add([]byte(s))
	}
	check := compileOutput(json.RawMessage(`{"type":"object","properties":{"a":{"type":["integer","string"]},"s":{"type":"string"},"l":{"type":"array","items":{"type":"number"}},"z":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if check.fast.fits(data) && !json.Valid(data) {
			t.Fatalf("fits but is not JSON: %q", data)
		}
	})
}
