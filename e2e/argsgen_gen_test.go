package e2e

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestArgsGen(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string
	}{
		{
			name:   "required only, optional without a value left out",
			schema: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`,
			want:   `{"a":"example"}`,
		},
		{
			name:   "optional with example, default, const",
			schema: `{"type":"object","properties":{"a":{"type":"string","examples":["x1"]},"b":{"type":"integer","default":7},"c":{"const":"k"},"d":{"type":"string"}}}`,
			want:   `{"a":"x1","b":7,"c":"k"}`,
		},
		{
			name:   "an example that breaks its schema is passed over",
			schema: `{"type":"object","properties":{"n":{"type":"integer","minimum":10,"examples":[3]}},"required":["n"]}`,
			want:   `{"n":10}`,
		},
		{
			name:   "formats",
			schema: `{"type":"object","required":["t","e","u","id","ip"],"properties":{"t":{"type":"string","format":"date-time"},"e":{"type":"string","format":"email"},"u":{"type":"string","format":"uri"},"id":{"type":"string","format":"uuid"},"ip":{"type":"string","format":"ipv4"}}}`,
			want:   `{"t":"2024-01-02T03:04:05Z","e":"user@example.com","u":"https://example.com/x","id":"123e4567-e89b-12d3-a456-426614174000","ip":"192.0.2.1"}`,
		},
		{
			name:   "bounds, lengths, multipleOf",
			schema: `{"type":"object","required":["i","x","s","m","n"],"properties":{"i":{"type":"integer","minimum":5,"maximum":9},"x":{"type":"integer","exclusiveMinimum":0},"s":{"type":"string","minLength":10,"maxLength":12},"m":{"type":"number","multipleOf":0.5,"minimum":1.2},"n":{"type":"integer","maximum":-3}}}`,
			want:   `{"i":5,"x":1,"s":"examplexxx","m":1.5,"n":-3}`,
		},
		{
			name:   "pattern",
			schema: `{"type":"object","required":["p","q"],"properties":{"p":{"type":"string","pattern":"^[A-Z]{2}-\\d{3}$"},"q":{"type":"string","pattern":"^(foo|bar)[a-f0-9]+$","minLength":6}}}`,
			want:   `{"p":"AA-111","q":"fooaaaaaa"}`,
		},
		{
			name:   "$ref into $defs, allOf merged, enum",
			schema: `{"type":"object","required":["pet"],"properties":{"pet":{"$ref":"#/$defs/Pet"}},"$defs":{"Pet":{"allOf":[{"$ref":"#/$defs/Base"},{"type":"object","required":["kind"],"properties":{"kind":{"enum":["dog","cat"]}}}]},"Base":{"type":"object","required":["name"],"properties":{"name":{"type":"string","maxLength":3}}}}}`,
			want:   `{"pet":{"kind":"dog","name":"exa"}}`,
		},
		{
			name:   "oneOf: the first branch that validates",
			schema: `{"type":"object","required":["v"],"properties":{"v":{"oneOf":[{"type":"string","format":"uuid"},{"type":"string"}]}}}`,
			want:   `{"v":"example"}`,
		},
		{
			name:   "anyOf with null, nullable type array",
			schema: `{"type":"object","required":["a","b"],"properties":{"a":{"anyOf":[{"type":"null"},{"type":"integer","minimum":2}]},"b":{"type":["null","boolean"]}}}`,
			want:   `{"a":2,"b":true}`,
		},
		{
			name:   "arrays: minItems, unique enum items",
			schema: `{"type":"object","required":["a"],"properties":{"a":{"type":"array","minItems":2,"uniqueItems":true,"items":{"enum":["x","y","z"]}}}}`,
			want:   `{"a":["x","y"]}`,
		},
		{
			name:   "binary as base64",
			schema: `{"type":"object","required":["body"],"properties":{"body":{"type":"string","contentEncoding":"base64"}}}`,
			want:   `{"body":"ZXhhbXBsZQ=="}`,
		},
		{
			name:   "recursive schema: optional recursion without a value is left out",
			schema: `{"type":"object","required":["n"],"properties":{"n":{"$ref":"#/$defs/N"}},"$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"},"v":{"type":"integer","default":1}}}}}`,
			want:   `{"n":{"v":1}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, err := argsFor(json.RawMessage(tc.schema))
			require.NoError(t, err)
			got, err := json.Marshal(args)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(got))
		})
	}
}

func TestArgsGenBranch(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["id"],"properties":{"id":{"oneOf":[{"type":"integer"},{"type":"string"}]}}}`)
	args, err := argsWith(schema, argsOptions{})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"id": json.Number("1")}, args)
	args, err = argsWith(schema, argsOptions{branch: 1})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"id": "example"}, args)
}

func TestArgsGenReportsUnsatisfiableSchemas(t *testing.T) {
	_, err := argsFor(json.RawMessage(`{"type":"object","required":["a"],"properties":{"a":{"type":"string","minLength":5,"maxLength":2}}}`))
	require.ErrorContains(t, err, "do not validate")
}
