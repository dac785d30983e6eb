package call

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// bodies by the id argument: what a drifting backend sends.
var driftBodies = map[string]string{
	"ok":         `{"id":1,"name":"Rex","status":"sold"}`,
	"enum":       `{"id":1,"name":"Rex","status":"adopted"}`,
	"required":   `{"id":1,"name":"Rex"}`,
	"extra":      `{"id":1,"name":"Rex","status":"sold","color":"brown"}`,
	"pattern":    `{"id":1,"name":"Rex-2","status":"sold"}`,
	"length":     `{"id":1,"name":"","status":"sold"}`,
	"items":      `{"id":1,"name":"Rex","status":"sold","tags":["a","b","c"]}`,
	"format":     `{"id":1,"name":"Rex","status":"sold","born":"last spring"}`,
	"type":       `{"id":"one","name":"Rex","status":"sold"}`,
	"array":      `[{"id":1}]`,
	"negative":   `-3`,
	"countnotok": `"many"`,
}

func driftCaller(t *testing.T) (*Caller, *toolgen.Set) {
	t.Helper()
	data, err := os.ReadFile("testdata/drift.yaml")
	require.NoError(t, err)
	doc, err := openapi.LoadData(context.Background(), data, "drift.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	set, err := toolgen.Generate(doc, toolgen.Options{})
	require.NoError(t, err)
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		i := strings.LastIndexByte(r.URL.Path, '/')
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(driftBodies[r.URL.Path[i+1:]]))
	})
	return ctCaller(t, doc, Config{BaseURL: backend.URL}), set
}

// Lenient schemas accept what real backends drift into; whatever does not
// fit the declared schema (lenient or strict) is never sent as
// structuredContent: the fallback is a tool error that carries the body.
func TestStructuredContentAlwaysFitsTheDeclaredSchema(t *testing.T) {
	c, set := driftCaller(t)
	lookup := func(name string) *toolgen.Tool {
		tl, ok := set.Lookup(name)
		require.True(t, ok)
		return tl
	}
	for _, tc := range []struct {
		tool, id string
		fits     bool
		where    string
	}{
		{"getPet", "ok", true, ""},
		{"getPet", "enum", true, ""},
		{"getPet", "required", true, ""},
		{"getPet", "extra", true, ""},
		{"getPet", "pattern", true, ""},
		{"getPet", "length", true, ""},
		{"getPet", "items", true, ""},
		{"getPet", "format", true, ""},
		{"getPet", "type", false, "at /id: got string, want integer"},
		{"getPetStrict", "ok", true, ""},
		{"getPetStrict", "enum", false, "at /status: value must be one of"},
		{"getPetStrict", "required", false, "missing property 'status'"},
		{"getPetStrict", "extra", true, ""}, // output schemas never forbid extra fields
		{"getPetStrict", "pattern", false, "at /name: "},
		{"getPetStrict", "items", false, "at /tags: "},
		{"getPetStrict", "format", false, "at /born: "},
		{"countPets", "negative", true, ""},
		{"countPets", "countnotok", false, "at /: got string, want integer"},
	} {
		t.Run(tc.tool+"/"+tc.id, func(t *testing.T) {
			tl := lookup(tc.tool)
			res := ctCall(t, c, tl, `{"id":"`+tc.id+`"}`)
			if tc.fits {
				require.False(t, res.IsError, ctText(res))
				require.NotEmpty(t, res.StructuredContent)
				// What was sent fits the declared schema, by the library alone.
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.StructuredContent))
				require.NoError(t, err)
				require.NoError(t, compileOutput(tl.OutputSchema).schema.Validate(inst))
				return
			}
			require.True(t, res.IsError)
			require.Nil(t, res.StructuredContent, "a result that does not fit carries no structuredContent")
			text := ctText(res)
			require.Contains(t, text, "does not match the response schema its own API document declares")
			require.Contains(t, text, tc.where)
			require.Contains(t, text, strings.Trim(driftBodies[tc.id], `"`), "the model still gets the data")
		})
	}
}

// output_schema off: no declared schema; an object is structuredContent,
// anything else text only.
func TestOutputOffStructuredObjectsOnly(t *testing.T) {
	c, set := driftCaller(t)
	tl, ok := set.Lookup("getPetOff")
	require.True(t, ok)
	require.Nil(t, tl.OutputSchema)
	res := ctCall(t, c, tl, `{"id":"enum"}`)
	require.False(t, res.IsError)
	require.JSONEq(t, driftBodies["enum"], string(res.StructuredContent))
	res = ctCall(t, c, tl, `{"id":"array"}`)
	require.False(t, res.IsError)
	require.Nil(t, res.StructuredContent)
	require.Equal(t, driftBodies["array"], ctText(res))
}
