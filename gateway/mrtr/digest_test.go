package mrtr

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParamsDigestIgnoresKeyOrderAndSpelling(t *testing.T) {
	base := `{"name":"deploy","arguments":{"env":"prod","tags":["a","b"],"opts":{"z":1,"a":{"y":null,"x":true}}}}`
	for _, same := range []string{
		`{"arguments":{"opts":{"a":{"x":true,"y":null},"z":1},"tags":["a","b"],"env":"prod"},"name":"deploy"}`,
		"{ \"name\" : \"deploy\" ,\n\t\"arguments\": {\"env\": \"prod\", \"tags\": [ \"a\", \"b\" ], \"opts\": {\"z\": 1, \"a\": {\"y\": null, \"x\": true}}} }",
		`{"name":"d\u0065ploy","arguments":{"env":"prod","tags":["a","b"],"opts":{"z":1,"a":{"y":null,"x":true}}}}`,
		`{"name":"deploy","arguments":{"env":"prod","tags":["a","b"],"opts":{"z":1,"a":{"y":null,"x":true}}},"_meta":{"progressToken":"p1"}}`,
		`{"requestState":"abc","name":"deploy","inputResponses":{"q":{"action":"accept"}},"arguments":{"env":"prod","tags":["a","b"],"opts":{"z":1,"a":{"y":null,"x":true}}}}`,
		`{"inputResponses":null,"requestState":7,"_meta":[],"name":"deploy","arguments":{"opts":{"a":{"y":null,"x":true},"z":1},"env":"prod","tags":["a","b"]}}`,
	} {
		require.Equal(t, digest(t, base), digest(t, same), "%s", same)
	}
}

func TestParamsDigestTellsParamsApart(t *testing.T) {
	seen := map[[32]byte]string{}
	for _, p := range []string{
		`{"name":"deploy","arguments":{"n":1}}`,
		`{"name":"deploy","arguments":{"n":1.0}}`, // numbers as written
		`{"name":"deploy","arguments":{"n":1e0}}`,
		`{"name":"deploy","arguments":{"n":"1"}}`,
		`{"name":"deploy","arguments":{"n":[1]}}`,
		`{"name":"deploy","arguments":{"n":1,"_meta":{}}}`, // only top-level keys are ignored
		`{"name":"deploy","arguments":{"n":1,"requestState":"x"}}`,
		`{"name":"deploy","arguments":{}}`,
		`{"name":"deploy"}`,
		`{"name":"Deploy","arguments":{"n":1}}`,
		`{"name":"deploy","arguments":{"m":1}}`,
		`{"name":"deploy","arguments":{"a":[1,2]}}`,
		`{"name":"deploy","arguments":{"a":[2,1]}}`, // array order matters
		`{}`,
		`[]`,
		`null`,
		`""`,
		`0`,
		`false`,
	} {
		d := digest(t, p)
		require.NotContains(t, seen, d, "%s has the digest of %s", p, seen[d])
		seen[d] = p
	}
	require.Equal(t, digest(t, `null`), digest(t, ``), "absent params are null")
	require.Equal(t, digest(t, `[{"b":1,"a":2}]`), digest(t, `[{"a":2,"b":1}]`), "sorted inside arrays too")
	require.Equal(t, digest(t, `{"_meta":1}`), digest(t, `{}`))
	require.NotEqual(t, digest(t, `[{"_meta":1}]`), digest(t, `[{}]`), "ignored only at the top level")
}

func TestParamsDigestRefusesInvalidJSON(t *testing.T) {
	for _, p := range []string{
		`{`, `}`, `{"a":1,}`, `[1,]`, `[1 2]`, `1 2`, `{"a":1}x`, `{"a":1}{}`, `nul`, `"open`,
		`{"a" 1}`, `{a:1}`, `{"a":01}`, `[.5]`, `'x'`, " ", "\t\n", `{"a":1,"a":2}`,
		`{"a":1,"\u0061":2}`, `{"x":{"k":[],"k":[]}}`, `[{"k":1,"k":1}]`, `{"_meta":1,"_meta":2}`,
	} {
		_, err := ParamsDigest(json.RawMessage(p))
		require.Error(t, err, "%q", p)
		require.ErrorContains(t, err, "mrtr: params: ")
	}
}

func TestParamsDigestNestingLimitIsEncodingJSONs(t *testing.T) {
	nested := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	var v any
	require.NoError(t, json.Unmarshal([]byte(nested(maxDepth)), &v))
	require.Error(t, json.Unmarshal([]byte(nested(maxDepth+1)), &v))
	_, err := ParamsDigest(json.RawMessage(nested(maxDepth)))
	require.NoError(t, err)
	_, err = ParamsDigest(json.RawMessage(nested(maxDepth + 1)))
	require.True(t, errors.Is(err, errTooDeep), "%v", err)
}
