package call

import (
	"context"
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// A 3.0 document written with 3.1 constructs (type arrays, type "null")
// is called as its author meant: null is accepted where 3.1 accepts it,
// and the other types still are checked.
func TestNewerConstructsInAnOlderDocument(t *testing.T) {
	data, err := os.ReadFile("testdata/mixed31.yaml")
	require.NoError(t, err)
	doc, err := openapi.LoadData(context.Background(), data, "mixed31.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	set, err := toolgen.Generate(doc, toolgen.Options{})
	require.NoError(t, err)
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"a":null}`))
	})
	c := ctCaller(t, doc, Config{BaseURL: backend.URL})
	tool, ok := set.Lookup("postX")
	require.True(t, ok)
	for args, want := range map[string]string{
		`{"a":null,"b":null,"c":null}`:  "",
		`{"a":"x","b":1,"c":{"d":"e"}}`: "",
		`{"b":"str"}`:                   `invalid argument "b": value must be one of integer, null`,
		`{"a":5}`:                       `invalid argument "a"`,
	} {
		res := ctCall(t, c, tool, args)
		if want == "" {
			require.False(t, res.IsError, "%s: %s", args, ctText(res))
			continue
		}
		require.True(t, res.IsError, args)
		require.Contains(t, ctText(res), want)
	}
}
