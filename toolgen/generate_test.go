package toolgen

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// genYAML generates the tools of an inline OpenAPI 3.0 document whose paths
// are given (indented two spaces under "paths:").
func genYAML(t *testing.T, paths string, opts Options) *Set {
	t.Helper()
	return genDoc(t, "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n"+paths, opts)
}

func genDoc(t *testing.T, doc string, opts Options) *Set {
	t.Helper()
	d, err := openapi.LoadData(context.Background(), []byte(doc), "", openapi.LoadOptions{})
	require.NoError(t, err)
	set, err := Generate(d, opts)
	require.NoError(t, err)
	return set
}

func tool(t *testing.T, set *Set, name string) *Tool {
	t.Helper()
	tl, ok := set.Lookup(name)
	var names []string
	for _, x := range set.Tools() {
		names = append(names, x.Name)
	}
	require.True(t, ok, "no tool %q; have %v", name, names)
	return tl
}

// schemaOf decodes a generated schema for assertions.
func schemaOf(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

func props(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	p, _ := schemaOf(t, raw)["properties"].(map[string]any)
	return p
}

func required(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var s struct {
		Required []string `json:"required"`
	}
	require.NoError(t, json.Unmarshal(raw, &s))
	return s.Required
}

const okResponse = "responses: {'204': {description: ok}}"

func TestGenerateSelection(t *testing.T) {
	paths := `
  /pets:
    get: {operationId: listPets, tags: [pets], ` + okResponse + `}
    post: {operationId: createPet, tags: [pets, write], ` + okResponse + `}
  /pets/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    delete: {operationId: deletePet, tags: [pets, write], ` + okResponse + `}
  /users:
    get: {operationId: listUsers, tags: [users], ` + okResponse + `}
  /hidden:
    get: {operationId: hidden, x-mcp: false, ` + okResponse + `}
`
	for _, tc := range []struct {
		name    string
		opts    Options
		want    []string
		comment string
	}{
		{"all", Options{}, []string{"listPets", "createPet", "deletePet", "listUsers"}, "x-mcp: false is never a tool"},
		{"include by tag", Options{Include: []string{"users"}}, []string{"listUsers"}, ""},
		{"include by operationId glob", Options{Include: []string{"list*"}}, []string{"listPets", "listUsers"}, ""},
		{"include by path glob", Options{Include: []string{"/pets/*"}}, []string{"deletePet"}, "* does not cross /"},
		{"exclude by tag", Options{Exclude: []string{"write"}}, []string{"listPets", "listUsers"}, ""},
		{"exclude wins over include", Options{Include: []string{"pets"}, Exclude: []string{"deletePet"}}, []string{"listPets", "createPet"}, ""},
		{"include cannot bring back x-mcp false", Options{Include: []string{"hidden"}}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := genYAML(t, paths, tc.opts)
			var got []string
			for _, tl := range set.Tools() {
				got = append(got, tl.Name)
			}
			require.Equal(t, tc.want, got, tc.comment)
			require.Equal(t, len(tc.want), set.Len())
		})
	}

	d, err := openapi.LoadData(context.Background(), []byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n"), "", openapi.LoadOptions{})
	require.NoError(t, err)
	_, err = Generate(d, Options{Include: []string{"[unclosed"}})
	require.ErrorContains(t, err, `glob "[unclosed"`)
	_, err = Generate(nil, Options{})
	require.Error(t, err)
}

func TestGenerateNames(t *testing.T) {
	long := strings.Repeat("abcdefghij", 8) // 80 characters
	set := genYAML(t, `
  /a:
    get: {operationId: "repos/get content", `+okResponse+`}
    put: {operationId: `+long+`, `+okResponse+`}
    post: {operationId: same, `+okResponse+`}
    delete: {operationId: same, `+okResponse+`}
  /b:
    get: {operationId: same, x-mcp-name: "custom name!", `+okResponse+`}
    post: {operationId: "日本語", `+okResponse+`}
  /users/{user}/repos/{owner}/{repo}:
    parameters:
      - {name: user, in: path, required: true, schema: {type: string}}
      - {name: owner, in: path, required: true, schema: {type: string}}
      - {name: repo, in: path, required: true, schema: {type: string}}
    get: {`+okResponse+`}
`, Options{})
	var names []string
	for _, tl := range set.Tools() {
		names = append(names, tl.Name)
	}
	require.Len(t, names, 7)
	require.Equal(t, "repos_get_content", names[0], "invalid characters become one underscore")
	require.Len(t, names[1], 64, "a long operationId is cut to 64 characters")
	require.Equal(t, long[:57]+"_"+shortHash(long), names[1], "…ending in a hash of the whole name")
	require.Equal(t, "same", names[2], "the first operation with an operationId keeps it")
	require.Equal(t, "same_"+shortHash("DELETE /a"), names[3], "the next gets a hash of its method and path")
	require.Equal(t, "custom_name", names[4], "x-mcp-name wins over operationId, sanitized")
	require.Equal(t, "post_b", names[5], "an operationId with no valid character falls back to method and path")
	require.Equal(t, "get_users_by_user_repos_by_owner_and_repo", names[6])
}

func TestGenerateExplicitNameWins(t *testing.T) {
	set := genYAML(t, `
  /a:
    get: {operationId: taken, `+okResponse+`}
  /b:
    get: {operationId: other, x-mcp-name: taken, `+okResponse+`}
`, Options{})
	require.Equal(t, "GET /b", method(tool(t, set, "taken")), "x-mcp-name is claimed before operationIds")
	require.Equal(t, "GET /a", method(tool(t, set, "taken_"+shortHash("GET /a"))))
}

func method(tl *Tool) string { m, p := tl.Binding.Method, tl.Binding.Path; return m + " " + p }

func TestGenerateDescription(t *testing.T) {
	set := genYAML(t, `
  /a:
    get: {operationId: both, summary: Short., description: Longer text here., `+okResponse+`}
    put: {operationId: prefix, summary: List pets, description: "List pets, newest first.", `+okResponse+`}
    post: {operationId: none, `+okResponse+`}
    delete: {operationId: old, summary: Old, deprecated: true, `+okResponse+`}
    patch: {operationId: long, description: "`+strings.Repeat("é", 50)+`", `+okResponse+`}
  /b:
    get: {operationId: custom, summary: S, x-mcp-description: "  From the extension.  ", `+okResponse+`}
`, Options{MaxDescription: 20})
	for name, want := range map[string]string{
		"both":   "Short.\n\nLonger text…",
		"prefix": "List pets, newest f…",
		"none":   "POST /a",
		"old":    "Deprecated. Old",
		"long":   strings.Repeat("é", 19) + "…",
		"custom": "From the extension.",
	} {
		d := tool(t, set, name).Description
		require.Equal(t, want, d, name)
		require.LessOrEqual(t, utf8.RuneCountInString(d), 20, "%s: MaxDescription counts characters", name)
	}
	require.Equal(t, "Short.", tool(t, set, "both").Title, "title is the summary")
	require.Equal(t, "None", tool(t, set, "none").Title, "without summary the title is the name made readable")
}

func TestAnnotations(t *testing.T) {
	type hints struct{ readOnly, destructive, idempotent bool }
	for method, want := range map[string]hints{
		http.MethodGet:     {true, false, true},
		http.MethodHead:    {true, false, true},
		http.MethodOptions: {true, false, true},
		http.MethodPost:    {false, false, false},
		http.MethodPut:     {false, true, true},
		http.MethodPatch:   {false, true, false},
		http.MethodDelete:  {false, true, true},
	} {
		a := annotations(method, "T")
		require.Equal(t, want, hints{*a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint}, method)
		require.True(t, *a.OpenWorldHint, method)
		require.Equal(t, "T", a.Title)
	}
}

func TestParameterArguments(t *testing.T) {
	set := genYAML(t, `
  /items/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string}, description: from the path item}
      - {name: trace, in: header, schema: {type: string}}
    get:
      operationId: get
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}, description: overrides the path item}
        - {name: id, in: query, schema: {type: string}}
        - {name: id, in: header, schema: {type: string}}
        - {name: id, in: cookie, schema: {type: string}}
        - {name: Accept, in: header, schema: {type: string}}
        - {name: AUTHORIZATION, in: header, schema: {type: string}}
        - {name: q, in: query, required: true, schema: {type: string}}
      `+okResponse+`
`, Options{})
	tl := tool(t, set, "get")
	var args []string
	for _, p := range tl.Binding.Params {
		args = append(args, p.Arg+"="+p.Param.In+":"+p.Param.Name)
	}
	require.Equal(t, []string{"id=path:id", "id_query=query:id", "q=query:q", "id_header=header:id", "trace=header:trace", "id_cookie=cookie:id"}, args,
		"path wins a shared name, others get their location; Accept and Authorization headers are not arguments")
	p := props(t, tl.InputSchema)
	require.Equal(t, "integer", p["id"].(map[string]any)["type"], "the operation's parameter overrides the path item's")
	require.Equal(t, "overrides the path item", p["id"].(map[string]any)["description"])
	require.Equal(t, []string{"id", "q"}, required(t, tl.InputSchema), "path parameters and required ones")
}

func TestBodyPlacement(t *testing.T) {
	for _, tc := range []struct {
		name      string
		op        string
		flattened bool
		arg       string
		media     string
		required  []string
	}{
		{"required object is flattened", `
      requestBody: {required: true, content: {application/json: {schema: {type: object, required: [a], properties: {a: {type: string}, b: {type: integer}}}}}}`,
			true, "", "application/json", []string{"a"}},
		{"optional object without required members is flattened", `
      requestBody: {content: {application/json: {schema: {type: object, properties: {a: {type: string}}}}}}`,
			true, "", "application/json", nil},
		{"optional object with required members is one argument", `
      requestBody: {content: {application/json: {schema: {type: object, required: [a], properties: {a: {type: string}}}}}}`,
			false, "body", "application/json", nil},
		{"property colliding with a parameter keeps the body whole", `
      parameters: [{name: a, in: query, schema: {type: string}}]
      requestBody: {required: true, content: {application/json: {schema: {type: object, properties: {a: {type: string}}}}}}`,
			false, "body", "application/json", []string{"body"}},
		{"a readOnly property does not collide", `
      parameters: [{name: id, in: query, schema: {type: string}}]
      requestBody: {required: true, content: {application/json: {schema: {type: object, properties: {id: {type: string, readOnly: true}, a: {type: string}}}}}}`,
			true, "", "application/json", nil},
		{"body argument name avoids parameters", `
      parameters: [{name: body, in: query, schema: {type: string}}]
      requestBody: {required: true, content: {application/json: {schema: {type: array, items: {type: string}}}}}`,
			false, "body_", "application/json", []string{"body_"}},
		{"additionalProperties schema keeps the body whole", `
      requestBody: {required: true, content: {application/json: {schema: {type: object, properties: {a: {type: string}}, additionalProperties: {type: string}}}}}`,
			false, "body", "application/json", []string{"body"}},
		{"anyOf keeps the body whole", `
      requestBody: {required: true, content: {application/json: {schema: {anyOf: [{type: object, properties: {a: {type: string}}}]}}}}`,
			false, "body", "application/json", []string{"body"}},
		{"nullable object keeps the body whole", `
      requestBody: {required: true, content: {application/json: {schema: {type: object, nullable: true, properties: {a: {type: string}}}}}}`,
			false, "body", "application/json", []string{"body"}},
		{"JSON preferred over form and XML", `
      requestBody: {required: true, content: {application/xml: {schema: {type: object, properties: {x: {type: string}}}}, application/x-www-form-urlencoded: {schema: {type: object, properties: {f: {type: string}}}}, application/vnd.api+json: {schema: {type: object, properties: {j: {type: string}}}}}}`,
			true, "", "application/vnd.api+json", nil},
		{"form preferred over multipart", `
      requestBody: {required: true, content: {multipart/form-data: {schema: {type: object, properties: {m: {type: string}}}}, application/x-www-form-urlencoded: {schema: {type: object, properties: {f: {type: string}}}}}}`,
			true, "", "application/x-www-form-urlencoded", nil},
		{"text body is a string argument", `
      requestBody: {required: true, content: {text/plain: {schema: {type: string}}}}`,
			false, "body", "text/plain", []string{"body"}},
		{"binary body is a base64 argument", `
      requestBody: {required: true, content: {image/png: {schema: {type: string, format: binary}}}}`,
			false, "body", "image/png", []string{"body"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := genYAML(t, "  /x:\n    post:\n      operationId: op"+tc.op+"\n      "+okResponse+"\n", Options{})
			tl := tool(t, set, "op")
			b := tl.Binding.Body
			require.NotNil(t, b)
			require.Equal(t, tc.flattened, b.Flattened, "flattened")
			require.Equal(t, tc.arg, b.Arg, "body argument")
			require.Equal(t, tc.media, b.MediaType)
			require.Equal(t, tc.required, required(t, tl.InputSchema), "required")
			if tc.flattened {
				for arg := range b.Props {
					require.Contains(t, props(t, tl.InputSchema), arg)
				}
			} else {
				require.Contains(t, props(t, tl.InputSchema), tc.arg)
			}
		})
	}
}

func TestBinaryAndTextArguments(t *testing.T) {
	set := genYAML(t, `
  /bin:
    put:
      operationId: bin
      requestBody: {required: true, content: {application/octet-stream: {schema: {type: string, format: binary}}}}
      `+okResponse+`
  /txt:
    put:
      operationId: txt
      requestBody: {required: true, description: The CSV., content: {text/csv: {schema: {type: object}}}}
      `+okResponse+`
`, Options{})
	bin := props(t, tool(t, set, "bin").InputSchema)["body"].(map[string]any)
	require.Equal(t, "base64", bin["contentEncoding"])
	require.Equal(t, "string", bin["type"])
	txt := props(t, tool(t, set, "txt").InputSchema)["body"].(map[string]any)
	require.Equal(t, map[string]any{"type": "string", "description": "The CSV."}, txt, "a text body is a string whatever its schema")
}

func TestReadOnlyWriteOnly(t *testing.T) {
	set := genYAML(t, `
  /u:
    post:
      operationId: create
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/User'}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/User'}
components:
  schemas:
    User:
      type: object
      required: [id, name, secret]
      properties:
        id: {type: string, readOnly: true}
        name: {type: string}
        secret: {type: string, writeOnly: true}
`, Options{OutputSchema: OutputStrict})
	tl := tool(t, set, "create")
	in := props(t, tl.InputSchema)
	require.NotContains(t, in, "id", "readOnly is not an argument")
	require.Contains(t, in, "secret")
	require.Equal(t, []string{"name", "secret"}, required(t, tl.InputSchema), "nor required")
	out := props(t, tl.OutputSchema)
	require.NotContains(t, out, "secret", "writeOnly is not in the output")
	require.Equal(t, []string{"id", "name"}, required(t, tl.OutputSchema))
}

// output_schema: lenient keeps the response's shape and annotations and
// drops the constraints backends break; off declares none; an operation's
// x-mcp-output-schema wins over the option.
func TestOutputSchemaModes(t *testing.T) {
	const doc = `
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /pets/{id}:
    get:
      operationId: getPet
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                additionalProperties: false
                required: [id, status]
                properties:
                  id: {type: integer, format: int64, minimum: 1, description: The id}
                  status: {type: string, enum: [available, sold], examples: [sold]}
                  tags: {type: array, minItems: 1, maxItems: 3, uniqueItems: true, items: {type: string, pattern: "^[a-z]+$", maxLength: 9}}
                  owner:
                    oneOf:
                      - {type: object, required: [name], properties: {name: {type: string, const: x}}}
                      - {type: string, minLength: 2}
  /strict:
    get:
      operationId: getStrict
      x-mcp-output-schema: strict
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object, required: [a], properties: {a: {type: string, enum: [x]}}}}}}
  /off:
    get:
      operationId: getOff
      x-mcp-output-schema: "off"
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object, properties: {a: {type: string}}}}}}
`
	set := genDoc(t, doc, Options{})
	got := string(tool(t, set, "getPet").OutputSchema)
	for _, gone := range []string{`"required"`, `"enum"`, `"format"`, `"minimum"`, `"minItems"`, `"maxItems"`, `"uniqueItems"`, `"pattern"`, `"maxLength"`, `"minLength"`, `"const"`, `"additionalProperties"`, `"oneOf"`} {
		require.NotContains(t, got, gone, "lenient drops %s", gone)
	}
	for _, kept := range []string{`"type":"object"`, `"description":"The id"`, `"examples":["sold"]`, `"items":{"type":"string"}`, `"anyOf":[`, `"properties":{"name":{"type":"string"}}`} {
		require.Contains(t, got, kept, "lenient keeps %s", kept)
	}
	require.Contains(t, string(tool(t, set, "getStrict").OutputSchema), `"enum":["x"]`, "x-mcp-output-schema: strict")
	off := tool(t, set, "getOff")
	require.Nil(t, off.OutputSchema, "x-mcp-output-schema: off")
	require.True(t, off.Binding.OutputOff)

	set = genDoc(t, doc, Options{OutputSchema: OutputStrict})
	require.Contains(t, string(tool(t, set, "getPet").OutputSchema), `"enum":["available","sold"]`)
	set = genDoc(t, doc, Options{OutputSchema: OutputOff})
	require.Nil(t, tool(t, set, "getPet").OutputSchema)
	require.Contains(t, string(tool(t, set, "getStrict").OutputSchema), `"required":["a"]`, "the operation's own mode wins")

	d, err := openapi.LoadData(context.Background(), []byte(doc), "", openapi.LoadOptions{})
	require.NoError(t, err)
	_, err = Generate(d, Options{OutputSchema: "loose"})
	require.ErrorContains(t, err, `OutputSchema must be lenient, strict or off, got "loose"`)
}

func TestOutputSchemas(t *testing.T) {
	set := genYAML(t, `
  /o:
    get:
      operationId: object
      responses: {'200': {description: ok, content: {application/json: {schema: {type: object, additionalProperties: false, properties: {a: {type: string}}}}}}}
    put:
      operationId: array
      responses: {'201': {description: ok, content: {application/json: {schema: {type: array, items: {type: string}}}}}}
    post:
      operationId: mixed
      responses: {'200': {description: ok, content: {application/json: {schema: {type: object}}}}, '204': {description: none}}
    delete:
      operationId: noJSON
      responses: {'200': {description: ok, content: {text/plain: {schema: {type: string}}}}}
    patch:
      operationId: lowest
      responses:
        '202': {description: ok, content: {application/problem+json: {schema: {type: string}}}}
        '400': {description: bad, content: {application/json: {schema: {type: object}}}}
`, Options{})
	obj := tool(t, set, "object")
	require.True(t, obj.Binding.HasOutputSchema)
	require.False(t, obj.Binding.OutputIsWrapped)
	require.NotContains(t, schemaOf(t, obj.OutputSchema), "additionalProperties", "outputs stay permissive")

	arr := tool(t, set, "array")
	require.True(t, arr.Binding.OutputIsWrapped)
	require.Equal(t, []string{"result"}, required(t, arr.OutputSchema))
	require.Equal(t, map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, props(t, arr.OutputSchema)["result"])

	require.Nil(t, tool(t, set, "mixed").OutputSchema, "a 204 beside the 200 would break the output contract")
	require.False(t, tool(t, set, "mixed").Binding.HasOutputSchema)
	require.Nil(t, tool(t, set, "noJSON").OutputSchema)
	low := tool(t, set, "lowest")
	require.True(t, low.Binding.OutputIsWrapped, "the only 2xx, with a +json type")
}

func TestNullable(t *testing.T) {
	set := genYAML(t, `
  /n:
    post:
      operationId: n
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                typed: {type: string, nullable: true}
                enum: {type: string, enum: [a, b], nullable: true}
                untyped: {nullable: true, allOf: [{$ref: '#/components/schemas/X'}], description: d}
                plain: {type: integer}
      `+okResponse+`
components:
  schemas:
    X: {type: object}
`, Options{})
	p := props(t, tool(t, set, "n").InputSchema)
	require.Equal(t, []any{"string", "null"}, p["typed"].(map[string]any)["type"])
	require.Equal(t, []any{"a", "b", nil}, p["enum"].(map[string]any)["enum"], "null joins the enum")
	require.Equal(t, map[string]any{
		"description": "d",
		"anyOf": []any{
			map[string]any{"allOf": []any{map[string]any{"$ref": "#/$defs/X"}}},
			map[string]any{"type": "null"},
		},
	}, p["untyped"])
	require.Equal(t, "integer", p["plain"].(map[string]any)["type"])
}

func TestBindingFilled(t *testing.T) {
	set := genDoc(t, `
openapi: 3.0.3
info: {title: t, version: '1'}
security: [{key: []}]
paths:
  /a/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    get:
      operationId: inherits
      `+okResponse+`
    put:
      operationId: public
      security: []
      `+okResponse+`
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
`, Options{})
	inh := tool(t, set, "inherits").Binding
	require.Equal(t, "GET", inh.Method)
	require.Equal(t, "/a/{id}", inh.Path)
	require.NotNil(t, inh.PathItem)
	require.NotNil(t, inh.Operation)
	require.Len(t, inh.Params, 1)
	require.Equal(t, "id", inh.Params[0].Arg)
	require.Len(t, inh.Security, 1, "the document's security applies")
	require.NotNil(t, tool(t, set, "public").Binding.Security)
	require.Empty(t, tool(t, set, "public").Binding.Security, "an empty operation security overrides the document's")
}

func TestNoArgumentTool(t *testing.T) {
	set := genYAML(t, "  /ping:\n    get: {operationId: ping, "+okResponse+"}\n", Options{})
	require.JSONEq(t, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false}`, string(tool(t, set, "ping").InputSchema))
}

// A flattened body reaches the backend as the JSON object its properties
// make: generation and the call path agree end to end.

// A reloaded document may be generated while the previous Set serves calls;
// generation only reads the document.
func TestGenerateConcurrent(t *testing.T) {
	doc := loadDoc(t, "testdata/bodies.yaml")
	want, err := Generate(doc, Options{})
	require.NoError(t, err)
	done := make(chan *Set, 4)
	for range 4 {
		go func() {
			s, _ := Generate(doc, Options{})
			done <- s
		}()
	}
	for range 4 {
		got := <-done
		require.NotNil(t, got)
		require.Equal(t, want.Len(), got.Len())
		for i, tl := range got.Tools() {
			require.Equal(t, string(want.Tools()[i].InputSchema), string(tl.InputSchema))
			require.Equal(t, string(want.Tools()[i].OutputSchema), string(tl.OutputSchema))
		}
	}
}
