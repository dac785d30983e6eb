package openapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

func load(t *testing.T, location string) *openapi.Document {
	t.Helper()
	doc, err := openapi.Load(context.Background(), location, openapi.LoadOptions{})
	require.NoError(t, err)
	return doc
}

func schemaOf(t *testing.T, mt *openapi3.MediaType) *openapi3.Schema {
	t.Helper()
	require.NotNil(t, mt, "media type")
	require.NotNil(t, mt.Schema, "schema")
	require.NotNil(t, mt.Schema.Value, "schema value (unresolved $ref %q?)", mt.Schema.Ref)
	return mt.Schema.Value
}

func TestLoadVersionsAndFormats(t *testing.T) {
	for _, tc := range []struct {
		file, version string
	}{
		{"testdata/petstore.yaml", "3.0.3"},
		{"testdata/petstore.json", "3.0.3"},
		{"testdata/swagger.yaml", "2.0"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			doc := load(t, tc.file)
			require.Equal(t, tc.version, doc.SourceVersion)
			require.Equal(t, tc.file, doc.Location)
			require.True(t, strings.HasPrefix(doc.T.OpenAPI, "3."), "converted to OpenAPI 3, got %q", doc.T.OpenAPI)

			list := doc.T.Paths.Find("/pets").Get
			require.NotNil(t, list)
			items := schemaOf(t, list.Responses.Status(200).Value.Content.Get("application/json")).Items
			require.NotNil(t, items.Value, "array items resolved")
			require.Contains(t, items.Value.Properties, "name")
		})
	}
}

func TestLoadSwagger2FormData(t *testing.T) {
	doc := load(t, "testdata/swagger.yaml")
	op := doc.T.Paths.Find("/pets/{petId}/photo").Post
	require.NotNil(t, op.RequestBody)
	body := schemaOf(t, op.RequestBody.Value.Content.Get("multipart/form-data"))
	require.Equal(t, "binary", body.Properties["file"].Value.Format)
	require.Equal(t, []string{"file"}, body.Required)
	require.True(t, op.RequestBody.Value.Required, "a required formData parameter makes the body required")

	owner := doc.T.Components.Schemas["Pet"].Value.Properties["owner"].Value
	require.True(t, owner.Nullable, "x-nullable becomes nullable")
}

func TestLoadExternalRefs(t *testing.T) {
	doc := load(t, "testdata/multi/openapi.yaml")

	list := doc.T.Paths.Find("/pets").Get
	require.Len(t, list.Parameters, 1)
	limit := list.Parameters[0].Value
	require.NotNil(t, limit, "parameter from params.yaml resolved")
	require.Equal(t, "limit", limit.Name)
	require.True(t, limit.Schema.Value.Type.Is("integer"))

	pet := schemaOf(t, list.Responses.Status(200).Value.Content.Get("application/json")).Items.Value
	require.Contains(t, pet.Properties, "owner")
	// pet.yaml -> person.yaml -> pet.yaml: a cycle across files.
	owner := pet.Properties["owner"].Value
	require.NotNil(t, owner)
	again := owner.Properties["pets"].Value.Items
	require.NotNil(t, again.Value, "cycle keeps its value")
	require.Contains(t, again.Value.Properties, "owner")

	node := doc.T.Paths.Find("/nodes/{id}")
	require.NotNil(t, node.Get, "path item $ref resolved")
	tree := schemaOf(t, node.Get.Responses.Status(200).Value.Content.Get("application/json"))
	require.NotNil(t, tree.Properties["parent"].Value, "self reference within an external file")
	require.NotEmpty(t, tree.Properties["parent"].Ref)
}

func TestLoadSwagger2ExternalRefs(t *testing.T) {
	for _, file := range []string{"testdata/swagger-multi/swagger.yaml", "testdata/swagger-multi/swagger.json"} {
		t.Run(file, func(t *testing.T) { testSwagger2ExternalRefs(t, file) })
	}
}

func testSwagger2ExternalRefs(t *testing.T, file string) {
	doc := load(t, file)

	list := doc.T.Paths.Find("/pets").Get
	params := map[string]*openapi3.Parameter{}
	for _, p := range list.Parameters {
		require.NotNil(t, p.Value)
		params[p.Value.Name] = p.Value
	}
	require.Contains(t, params, "limit")
	require.NotNil(t, params["limit"].Schema, "a 2.0 parameter in another file keeps its type")
	require.True(t, params["limit"].Schema.Value.Type.Is("integer"))
	require.Equal(t, "int32", params["limit"].Schema.Value.Format)
	require.Contains(t, params, "offset")

	pets := schemaOf(t, list.Responses.Status(200).Value.Content.Get("application/json"))
	pet := pets.Items.Value
	require.True(t, pet.Type.Is("object"), "external Pet, not the root document's string Pet")
	require.Equal(t, []any{"cute", "fierce"}, pet.Properties["tags"].Value.Items.Value.Enum)
	require.NotNil(t, pet.Properties["parent"].Value, "cycle within the external file")

	// The hoisted Pet must not overwrite the root document's own Pet.
	require.True(t, doc.T.Components.Schemas["Pet"].Value.Type.Is("string"))

	get := doc.T.Paths.Find("/pets/{id}").Get
	require.NotNil(t, get, "path item from paths.yaml")
	require.Equal(t, "getPet", get.OperationID)

	errSchema := schemaOf(t, list.Responses.Default().Value.Content.Get("application/json"))
	require.Contains(t, errSchema.Properties, "message")
}

func TestLoadCircular(t *testing.T) {
	done := make(chan struct{})
	var doc *openapi.Document
	var err error
	go func() {
		defer close(done)
		doc, err = openapi.Load(context.Background(), "testdata/circular.yaml", openapi.LoadOptions{})
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("loading circular references did not finish")
	}
	require.NoError(t, err)
	tree := doc.T.Components.Schemas["Tree"].Value
	require.Same(t, tree, tree.Properties["children"].Value.Items.Value, "a self reference points at the same schema")
	forest := doc.T.Components.Schemas["Forest"].Value
	require.Same(t, forest, forest.Properties["next"].Value.AllOf[0].Value)
}

func TestLoadData(t *testing.T) {
	data, err := os.ReadFile("testdata/multi/openapi.yaml")
	require.NoError(t, err)
	doc, err := openapi.LoadData(context.Background(), data, "testdata/multi/openapi.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	require.NotNil(t, doc.T.Paths.Find("/pets").Get.Parameters[0].Value, "relative refs resolve against location")

	data, err = os.ReadFile("testdata/petstore.yaml")
	require.NoError(t, err)
	doc, err = openapi.LoadData(context.Background(), data, "", openapi.LoadOptions{})
	require.NoError(t, err)
	require.Equal(t, "3.0.3", doc.SourceVersion)
}

// The fast JSON reader must produce exactly what kin-openapi's own decoding
// produces.
func TestJSONFastPathMatchesKin(t *testing.T) {
	for _, file := range []string{"testdata/petstore.json"} {
		compareWithKin(t, file)
	}
}

func compareWithKin(t *testing.T, file string) {
	t.Helper()
	doc := load(t, file)
	abs, err := filepath.Abs(file)
	require.NoError(t, err)
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = true
	want, err := loader.LoadFromFile(abs)
	require.NoError(t, err)
	got, err := json.Marshal(doc.T)
	require.NoError(t, err)
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	require.JSONEq(t, string(wantJSON), string(got))
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

const minimalPaths = `
paths:
  /a:
    get:
      summary: A
      responses:
        "200":
          description: ok
`

func TestLoadErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"syntax.yaml":   "openapi: 3.0.3\ninfo:\n  title: x\n   version: '1'\npaths: {}\n",
		"syntax.json":   "{\"openapi\": \"3.0.3\",\n \"info\": {\"title\": \"x\", \"version\": \"1\"}\n \"paths\": {}}\n",
		"badref.yaml":   "openapi: 3.0.3\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              schema:\n                $ref: '#/components/schemas/Nope'\n",
		"nofile.yaml":   "openapi: 3.0.3\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    get:\n      parameters:\n        - $ref: 'missing.yaml#/p'\n      responses:\n        '200':\n          description: ok\n",
		"nofile2.yaml":  "swagger: '2.0'\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    get:\n      parameters:\n        - $ref: 'missing.yaml#/p'\n      responses:\n        '200':\n          description: ok\n",
		"badfrag2.yaml": "swagger: '2.0'\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    get:\n      parameters:\n        - $ref: 'params.yaml#/nope'\n      responses:\n        '200':\n          description: ok\n",
		"params.yaml":   "p:\n  name: p\n  in: query\n  type: string\n",
		"loop2.yaml":    "swagger: '2.0'\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    $ref: 'loop.yaml#/x'\n",
		"loop.yaml":     "x:\n  $ref: '#/x'\n",
		"notoas.yaml":   "hello: world\n",
		"version.yaml":  "openapi: 4.0.0\ninfo: {title: x, version: '1'}\n" + minimalPaths,
		"big.yaml":      "openapi: 3.0.3\ninfo: {title: x, version: '1'}\n" + minimalPaths + "# " + strings.Repeat("x", 4096) + "\n",
	})
	for _, tc := range []struct {
		file     string
		opts     openapi.LoadOptions
		contains []string
		is       error
	}{
		{file: "syntax.yaml", contains: []string{"syntax.yaml", "line 4"}},
		{file: "syntax.json", contains: []string{"syntax.json", "line 3"}},
		{file: "badref.yaml", contains: []string{"badref.yaml", "#/components/schemas/Nope"}},
		{file: "nofile.yaml", contains: []string{"nofile.yaml", "missing.yaml"}},
		{file: "nofile2.yaml", contains: []string{"nofile2.yaml", "missing.yaml#/p", "line 7"}},
		{file: "badfrag2.yaml", contains: []string{"params.yaml#/nope", "nothing at \"/nope\""}},
		{file: "loop2.yaml", contains: []string{"loop2.yaml", `$ref "#/x" in `, "loop.yaml", "a cycle?"}},
		{file: "notoas.yaml", contains: []string{"notoas.yaml", `no top-level "openapi" or "swagger"`}},
		{file: "version.yaml", contains: []string{`unsupported openapi version "4.0.0"`}},
		{file: "big.yaml", opts: openapi.LoadOptions{MaxBytes: 1024}, contains: []string{"big.yaml"}, is: openapi.ErrTooLarge},
		{file: "absent.yaml", contains: []string{"absent.yaml"}, is: os.ErrNotExist},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := openapi.Load(context.Background(), filepath.Join(dir, tc.file), tc.opts)
			require.Error(t, err)
			var le *openapi.LoadError
			require.ErrorAs(t, err, &le)
			for _, s := range tc.contains {
				require.Contains(t, err.Error(), s)
			}
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
		})
	}
}

func TestLoadWarnings(t *testing.T) {
	dir := writeFiles(t, map[string]string{"odd.yaml": `
openapi: 3.0.3
info:
  title: Odd but usable
  version: "1"
paths:
  /a:
    get:
      operationId: same
      responses:
        "200":
          description: ok
    post:
      operationId: same
      summary: Post XML
      requestBody:
        content:
          application/vnd.acme.pet:
            schema:
              type: object
      responses:
        "200":
          description: ok
  /b:
    put:
      summary: Two bodies
      requestBody:
        content:
          application/json:
            schema:
              type: object
          multipart/mixed:
            schema:
              type: object
      responses:
        "200":
          description: ok
    get:
      summary: kin-openapi rejects a pattern Go cannot compile
      parameters:
        - name: q
          in: query
          schema:
            type: string
            pattern: "(?<=a)b"
      responses:
        "200":
          description: ok
`})
	doc := load(t, filepath.Join(dir, "odd.yaml"))
	byLoc := map[string][]string{}
	for _, w := range doc.Warnings {
		byLoc[w.Location] = append(byLoc[w.Location], w.Message)
	}
	require.Contains(t, byLoc, "paths./a.get")
	require.Contains(t, strings.Join(byLoc["paths./a.get"], "\n"), `operationId "same" is used by 2 operations: GET /a, POST /a`)
	require.Contains(t, strings.Join(byLoc["paths./a.get"], "\n"), "neither summary nor description")
	require.NotContains(t, byLoc, "paths./a.post.requestBody", "the only media type is unsupported: generation warns, knowing how the body is sent")
	require.Equal(t, []string{"request media type multipart/mixed is not supported; the tool uses application/json instead"}, byLoc["paths./b.put.requestBody"])
	require.Contains(t, byLoc, "paths./b.get", "validation error demoted to a warning with its location: %v", doc.Warnings)

	n := 0
	for _, w := range doc.Warnings {
		if strings.Contains(w.Message, `"same"`) {
			n++
		}
	}
	require.Equal(t, 1, n, "a duplicate operationId is reported once")

	// Deferred, the validation findings come from Validate instead; the
	// rest stays in Warnings.
	deferred, err := openapi.Load(context.Background(), filepath.Join(dir, "odd.yaml"), openapi.LoadOptions{DeferValidation: true})
	require.NoError(t, err)
	validation := openapi.Validate(context.Background(), deferred)
	require.NotEmpty(t, validation)
	require.Equal(t, doc.Warnings, append(validation, deferred.Warnings...))
}

func TestLoadHTTP(t *testing.T) {
	files := map[string]string{
		"/api/openapi.yaml": `
openapi: 3.0.3
info: {title: Remote, version: "1"}
paths:
  /pets:
    get:
      summary: List
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                $ref: "schemas/pet.yaml"
`,
		"/api/schemas/pet.yaml": "type: object\nproperties:\n  name:\n    type: string\n",
		"/api/local.yaml": `
openapi: 3.0.3
info: {title: Remote, version: "1"}
paths:
  /pets:
    get:
      summary: List
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                $ref: "/etc/hostname"
`,
	}
	block := make(chan struct{})
	defer close(block)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow.yaml" {
			select {
			case <-r.Context().Done():
			case <-block:
			}
			return
		}
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	ctx := context.Background()

	doc, err := openapi.Load(ctx, srv.URL+"/api/openapi.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	s := schemaOf(t, doc.T.Paths.Find("/pets").Get.Responses.Status(200).Value.Content.Get("application/json"))
	require.Contains(t, s.Properties, "name", "relative ref resolved against the URL")

	_, err = openapi.Load(ctx, srv.URL+"/api/missing.yaml", openapi.LoadOptions{})
	require.ErrorContains(t, err, "404")

	_, err = openapi.Load(ctx, srv.URL+"/api/local.yaml", openapi.LoadOptions{})
	require.ErrorContains(t, err, "may not refer to local files")

	_, err = openapi.Load(ctx, srv.URL+"/slow.yaml", openapi.LoadOptions{Timeout: 100 * time.Millisecond})
	require.Error(t, err)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	_, err = openapi.Load(ctx, srv.URL+"/api/openapi.yaml", openapi.LoadOptions{MaxBytes: 100})
	require.ErrorIs(t, err, openapi.ErrTooLarge)
}

func TestOperationsOrder(t *testing.T) {
	dir := writeFiles(t, map[string]string{"order.yaml": `
openapi: 3.0.3
info: {title: Order, version: "1"}
paths:
  /b:
    delete: {summary: d, responses: {"204": {description: ok}}}
    get: {summary: g, responses: {"200": {description: ok}}}
    post: {summary: p, responses: {"200": {description: ok}}}
  /a:
    patch: {summary: p, responses: {"200": {description: ok}}}
    put: {summary: p, responses: {"200": {description: ok}}}
`})
	doc := load(t, filepath.Join(dir, "order.yaml"))
	var got []string
	for _, op := range openapi.Operations(doc.T) {
		got = append(got, op.Method+" "+op.Path)
	}
	require.Equal(t, []string{"PUT /a", "PATCH /a", "GET /b", "POST /b", "DELETE /b"}, got)
	require.Equal(t, "paths./a.put", openapi.Operations(doc.T)[0].Location())
}

func TestClassifyMediaType(t *testing.T) {
	for mt, want := range map[string]openapi.MediaClass{
		"application/json":                  openapi.MediaJSON,
		"Application/JSON; charset=utf-8":   openapi.MediaJSON,
		"application/vnd.github+json":       openapi.MediaJSON,
		"application/merge-patch+json":      openapi.MediaJSON,
		"*/*":                               openapi.MediaJSON,
		"application/x-www-form-urlencoded": openapi.MediaForm,
		"multipart/form-data":               openapi.MediaMultipart,
		"text/plain":                        openapi.MediaText,
		"text/csv; header=present":          openapi.MediaText,
		"application/octet-stream":          openapi.MediaBinary,
		"image/png":                         openapi.MediaBinary,
		"application/xml":                   openapi.MediaText,
		"application/atom+xml":              openapi.MediaText,
		"application/vnd.acme.pet":          openapi.MediaUnsupported,
		"multipart/mixed":                   openapi.MediaUnsupported,
		"nonsense":                          openapi.MediaUnsupported,
	} {
		require.Equal(t, want, openapi.ClassifyMediaType(mt), "%q", mt)
	}
}

func TestLoadError(t *testing.T) {
	inner := errors.New("boom")
	err := &openapi.LoadError{Location: "x.yaml", Err: inner}
	require.Equal(t, "openapi: load x.yaml: boom", err.Error())
	require.ErrorIs(t, err, inner)
}

// One warning per 3.1 construct in a 3.0 document, at its place, and none
// of kin-openapi's vaguer ones for the same constructs.
func TestNewerConstructsWarnOncePerPlace(t *testing.T) {
	doc, err := openapi.LoadData(context.Background(), []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
components:
  schemas:
    Maybe: {type: [string, "null"]}
paths:
  /x:
    parameters:
      - {name: p, in: query, schema: {type: [boolean, "null"]}}
    post:
      operationId: postX
      summary: x
      parameters:
        - {name: q, in: query, schema: {anyOf: [{type: integer}, {type: "null"}]}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                m: {$ref: '#/components/schemas/Maybe'}
                b: {type: [integer, "null"]}
      responses:
        "200":
          description: ok
          headers:
            X-Next: {schema: {type: [string, "null"]}}
`), "mixed.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	var got []string
	for _, w := range doc.Warnings {
		require.NotContains(t, w.Message, "an array of types is for OpenAPI", "kin-openapi's own warning is replaced")
		require.NotContains(t, w.Message, `unsupported 'type' value`, "kin-openapi's own warning is replaced")
		if strings.Contains(w.Message, "OpenAPI 3.1 construct") {
			got = append(got, w.Location)
		}
	}
	require.Equal(t, []string{
		"components.schemas.Maybe",
		"paths./x.parameters.p.schema",
		"paths./x.post.parameters.q.schema.anyOf[1]",
		"paths./x.post.requestBody.content.application/json.schema.properties.b",
		"paths./x.post.responses.200.headers.X-Next.schema",
	}, got)

	// 3.1 documents use them as they are: no warning.
	doc, err = openapi.LoadData(context.Background(), []byte(`openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /x:
    get:
      operationId: getX
      summary: x
      parameters:
        - {name: q, in: query, schema: {type: [integer, "null"]}}
      responses:
        "200": {description: ok}
`), "ok31.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	for _, w := range doc.Warnings {
		require.NotContains(t, w.Message, "3.1 construct")
	}
}
