package openapi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"
)

func TestJSONNodeTags(t *testing.T) {
	n, err := jsonNode([]byte(`{"s": "12", "i": 12, "neg": -3, "big": 18446744073709551615, "huge": 123456789012345678901234567890,
		"f": 1.5, "e": 1e3, "t": true, "n": null, "esc": "a\u00e9\n\"b\"", "arr": [1, "x"], "obj": {}}`))
	require.NoError(t, err)
	root := n.Content[0]
	tags := map[string]string{}
	values := map[string]string{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		tags[root.Content[i].Value] = root.Content[i+1].Tag
		values[root.Content[i].Value] = root.Content[i+1].Value
	}
	require.Equal(t, map[string]string{
		"s": "!!str", "i": "!!int", "neg": "!!int", "big": "!!int", "huge": "!!float",
		"f": "!!float", "e": "!!float", "t": "!!bool", "n": "!!null", "esc": "!!str", "arr": "!!seq", "obj": "!!map",
	}, tags)
	require.Equal(t, "a\u00e9\n\"b\"", values["esc"])
	require.Equal(t, 2, n.Content[0].Content[1].Line-n.Content[0].Content[1].Line+2, "lines are counted")
}

func TestJSONNodeRejects(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `"x"`, `{`, `{"a"}`, `{"a":1,}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`,
		`{"a":tru}`, `{"a":"x` + "\x01" + `"}`, `{"a":1} x`, `{"a":1,"a":2}`, `{"a":"\x"}`, "{\"a\":\"\xff\"}",
		`{"a":1e999}`,
	} {
		_, err := jsonNode([]byte(in))
		require.Error(t, err, "%q", in)
	}
}

// The node tree decodes to the same value encoding/json produces, for any
// input the fast reader accepts; and it accepts only valid JSON.
func FuzzJSONNode(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":[1,2.5,-0,1e-7,true,false,null,"x\ty\u0041"]}`, `{"openapi":"3.0.3","paths":{"/a":{"get":{}}}}`,
		`{"a":{"b":{"c":[[[]]]}}}`, `{"n":12345678901234567890}`, `{"k":"2001-12-14"}`, `{"k":"0x10"}`, `{"k":"~"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := jsonNode(data)
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		var fromNode any
		if err := n.Decode(&fromNode); err != nil {
			t.Fatalf("decode node of %q: %v", data, err)
		}
		var fromJSON any
		if err := json.Unmarshal(data, &fromJSON); err != nil {
			t.Fatal(err)
		}
		a, err := json.Marshal(normalize(fromNode))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(fromJSON)
		var av, bv any
		_ = json.Unmarshal(a, &av)
		_ = json.Unmarshal(b, &bv)
		require.Equal(t, bv, av, "input %q", data)
	})
}

// normalize turns what yaml decodes into something encoding/json marshals.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}

var _ = yaml.Node{}
