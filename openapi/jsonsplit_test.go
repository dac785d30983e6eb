package openapi

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/specs"
)

// requireSplitDecodeEqual holds the split decode to what node.Decode gives
// on the whole tree: the same T, deep down.
func requireSplitDecodeEqual(t *testing.T, data []byte) {
	t.Helper()
	node, err := jsonNode(data)
	require.NoError(t, err)
	want := &openapi3.T{}
	require.NoError(t, node.Decode(want))

	jdoc, err := scanJSON(data)
	require.NoError(t, err)
	got, err := jdoc.decodeOpenAPI3()
	require.NoError(t, err)
	require.True(t, reflect.DeepEqual(want, got), "the split decode differs from the whole one")

	// What is not decoded reads back as the whole tree.
	jdoc, err = scanJSON(data)
	require.NoError(t, err)
	whole, err := jdoc.document()
	require.NoError(t, err)
	require.True(t, reflect.DeepEqual(node, whole), "the shallow scan's tree differs from jsonNode's")
}

func TestSplitDecodeSmall(t *testing.T) {
	defer func(n int) { chunkBytes = n }(chunkBytes)
	for _, size := range []int{1, 40, 1 << 20} {
		chunkBytes = size
		for _, doc := range []string{
			`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{}}`,
			`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{}}`,
			`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"x-a":1},"components":{"schemas":{},"examples":{}}}`,
			`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}},
			  "x-b": {"n": 2}, "/b/{id}": {"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}]}},
			  "components":{"schemas":{"A":{"type":"object","properties":{"n":{"type":"integer","default":1,"enum":[1,2]}}},
			  "B":{"$ref":"#/components/schemas/A"}, "x-ext": {"type":"string"}},
			  "parameters":{"p":{"name":"p","in":"query"}},"x-c":[1,"2",null],
			  "responses":{"R":{"description":"r"}},"securitySchemes":{"s":{"type":"http","scheme":"bearer"}},
			  "examples":{"e":{"value":{"a":[1,2.5,true]}}},"headers":{"h":{"schema":{"type":"string"}}},
			  "requestBodies":{"b":{"content":{"application/json":{}}}},"links":{"l":{"operationId":"x"}},
			  "callbacks":{"c":{"{$url}":{"post":{}}}}},
			  "x-webhooks":{"w":{"post":{}}}, "tags":[{"name":"t"}]}`,
		} {
			requireSplitDecodeEqual(t, []byte(doc))
		}
	}
}

func TestSplitDecodeRejectsWhatJSONNodeRejects(t *testing.T) {
	defer func(n int) { chunkBytes = n }(chunkBytes)
	chunkBytes = 1
	for _, doc := range []string{
		`{"openapi":"3.0.3","paths":{"/a":{},"/a":{}}}`,
		`{"openapi":"3.0.3","paths":{"/a":{},}}`,
		`{"openapi":"3.0.3","paths":{"/a":{]}}`,
		`{"openapi":"3.0.3","paths":{"/a":{"get":{"x":01}}}}`,
		`{"openapi":"3.0.3","paths":{"/a":"x` + "\n" + `"}}`,
		`{"openapi":"3.0.3","components":{"schemas":{"A":{},"A":{}}}}`,
		`{"openapi":"3.0.3","components":{"schemas":{"A":{"type":"string"}"B":{}}}}`,
		`{"openapi":"3.0.3","components":{"schemas":{"A":tru}}}`,
	} {
		_, err := jsonNode([]byte(doc))
		require.Error(t, err, doc)
		jdoc, err := scanJSON([]byte(doc))
		if err == nil {
			_, err = jdoc.decodeOpenAPI3()
		}
		require.Error(t, err, doc)
	}
}

func TestSplitDecodeCorpus(t *testing.T) {
	dir := specs.Dir(t)
	files := []string{filepath.Join(dir, "github-api.github.com.json"), "testdata/petstore.json"}
	err := filepath.WalkDir(filepath.Join(dir, "oai"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return err
	})
	require.NoError(t, err)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			jdoc, err := scanJSON(data)
			require.NoError(t, err)
			if field, v, ok := versionFromNode(jdoc.root); !ok || field != "openapi" || !isOpenAPI3(v) {
				t.Skip("not OpenAPI 3")
			}
			requireSplitDecodeEqual(t, data)
		})
	}
}

// skipValue (jsonlex's scanner) leaves the parser where the strict reader
// would: same offset, same line and line start.
func TestSkipValueKeepsPosition(t *testing.T) {
	for _, doc := range []string{
		"{\"a\": [1,\n 2],\n \"b\": \"x\\\"\\n\"\n}  ", "\"s\"\n", "[\n\n]", "123 ", "{\n\"a\":{\"b\":\"}\"}\n}",
	} {
		skip := jsonParser{data: []byte(doc)}
		require.NoError(t, skip.skipValue(), doc)
		read := jsonParser{data: []byte(doc)}
		_, err := read.value(0)
		require.NoError(t, err, doc)
		require.Equal(t, read.mark(), skip.mark(), "%q", doc)
	}
	for _, doc := range []string{`{"a":1,}`, `[1 2]`, `"x`, `{"a":tru}`, `{"a":01}`} {
		p := jsonParser{data: []byte(doc)}
		require.Error(t, p.skipValue(), doc)
	}
}
