package call

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCallArgumentsShape(t *testing.T) {
	doc := ctDocFile(t, "bodies.yaml")
	cases := []struct{ args, want string }{
		{`[1]`, `invalid arguments: arguments must be a JSON object, got an array`},
		{`"x"`, `invalid arguments: arguments must be a JSON object, got a string`},
		{`42`, `invalid arguments: arguments must be a JSON object, got a number`},
		{`{"name": `, `invalid arguments: arguments are not valid JSON`},
		{`{"name": "Rex", "colour": "red"}`, `invalid arguments: unknown argument "colour"; this tool accepts: age, id, name, nickname, owner, status`},
		{`{"b": 1, "a": 2, "name": "Rex"}`, `invalid arguments: unknown arguments "a", "b"; this tool accepts: age, id, name, nickname, owner, status`},
	}
	for _, c := range cases {
		t.Run(c.args, func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			res := ctCall(t, caller, ctTool(t, doc, "POST", "/pets"), c.args)
			require.True(t, res.IsError)
			require.Equal(t, c.want, ctText(res))
			require.Empty(t, backend.requests())
		})
	}
	t.Run("empty and null mean no arguments", func(t *testing.T) {
		spec := ctStyleSpec("query", "", nil, "primitive", "")
		spec = strings.Replace(spec, "required: true", "required: false", 1)
		doc := ctDoc(t, spec)
		for _, args := range []string{``, `null`, ` {} `} {
			backend := ctNewBackend(t, nil)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			ctOK(t, ctCall(t, caller, ctTool(t, doc, "GET", "/items"), args))
			require.Equal(t, "/items", backend.last(t).RequestURI)
		}
	})
	t.Run("no arguments accepted", func(t *testing.T) {
		doc := ctDoc(t, `
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /ping:
    get:
      responses: {"200": {description: ok}}
`)
		caller := ctCaller(t, doc, Config{BaseURL: "http://127.0.0.1:1"})
		res := ctCall(t, caller, ctTool(t, doc, "GET", "/ping"), `{"x": 1}`)
		require.Equal(t, `invalid arguments: unknown argument "x"; this tool takes no arguments`, ctText(res))
	})
}

// ctValidationSpec is the same operation in OpenAPI 3.0 and 3.1, whose
// validators word their errors differently.
const ctValidationSpec = `
openapi: VERSION
info: {title: validation, version: "1"}
paths:
  /pets/{id}:
    put:
      operationId: putPet
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer, minimum: 1}}
        - {name: mode, in: query, schema: {type: string, enum: [fast, safe]}}
        - {name: X-Trace, in: header, required: true, schema: {type: string, pattern: "^[a-f0-9]{4}$"}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                id: {type: integer, readOnly: true}
                name: {type: string, pattern: "^[A-Za-z]+$"}
                tags: {type: array, items: {type: integer}}
                owner:
                  type: object
                  required: [email]
                  properties:
                    email: {type: string, format: email}
      responses: {"204": {description: ok}}
  /batch:
    post:
      operationId: batch
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: array, items: {type: integer}, maxItems: 2}
      responses: {"204": {description: ok}}
`

func TestCallValidationMessages(t *testing.T) {
	const valid = `"id": 3, "X-Trace": "ab12", "name": "Rex"`
	cases := []struct {
		name, path, args string
		want30, want31   string
	}{
		{"missing path argument", "/pets/{id}", `{"X-Trace": "ab12", "name": "Rex"}`,
			`invalid argument "id": a value is required`, ``},
		{"missing header argument", "/pets/{id}", `{"id": 3, "name": "Rex"}`,
			`invalid argument "X-Trace": a value is required`, ``},
		{"path below minimum", "/pets/{id}", `{` + valid + `, "id": 0}`,
			`invalid argument "id": number must be at least 1`, `invalid argument "id": minimum: got 0, want 1`},
		{"path wrong type", "/pets/{id}", `{` + valid + `, "id": "three"}`,
			`invalid argument "id": "three" is not a valid integer`, ``},
		{"enum", "/pets/{id}", `{` + valid + `, "mode": "slow"}`,
			`invalid argument "mode": value is not one of the allowed values ["fast","safe"]`, `invalid argument "mode": value must be one of 'fast', 'safe'`},
		{"header pattern", "/pets/{id}", `{` + valid + `, "X-Trace": "zz"}`,
			`invalid argument "X-Trace": string doesn't match the regular expression "^[a-f0-9]{4}$"`, `invalid argument "X-Trace": 'zz' does not match pattern '^[a-f0-9]{4}$'`},
		{"body required property", "/pets/{id}", `{"id": 3, "X-Trace": "ab12"}`,
			`invalid argument "name": a value is required`, ``},
		{"body pattern", "/pets/{id}", `{` + valid + `, "name": "R2D2"}`,
			`invalid argument "name": string doesn't match the regular expression "^[A-Za-z]+$"`, `invalid argument "name": 'R2D2' does not match pattern '^[A-Za-z]+$'`},
		{"body item type", "/pets/{id}", `{` + valid + `, "tags": [1, "x"]}`,
			`invalid argument "tags": value must be an integer (at /1)`, `invalid argument "tags": got string, want integer (at /1)`},
		{"nested required", "/pets/{id}", `{` + valid + `, "owner": {}}`,
			`invalid argument "owner": property "email" is required`, ``},
		{"whole body", "/batch", `{"body": [1, 2, 3]}`,
			`invalid argument "body": maximum number of items is 2`, `invalid argument "body": maxItems: got 3, want 2`},
		{"whole body missing", "/batch", `{}`,
			`invalid argument "body": a value is required: it is the request body`, ``},
		{"whole body wrong type", "/batch", `{"body": {"a": 1}}`,
			`invalid argument "body": value must be an array`, `invalid argument "body": got object, want array`},
	}
	for _, version := range []string{"3.0.3", "3.1.0"} {
		doc := ctDoc(t, strings.Replace(ctValidationSpec, "VERSION", version, 1))
		for _, c := range cases {
			t.Run(version+"/"+c.name, func(t *testing.T) {
				backend := ctNewBackend(t, nil)
				caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
				method := "PUT"
				if c.path == "/batch" {
					method = "POST"
				}
				res := ctCall(t, caller, ctTool(t, doc, method, c.path), c.args)
				require.True(t, res.IsError, "result: %s", ctText(res))
				want := c.want30
				if version == "3.1.0" && c.want31 != "" {
					want = c.want31
				}
				require.Equal(t, want, ctText(res))
				require.Empty(t, backend.requests(), "nothing may reach the backend")
			})
		}
		t.Run(version+"/valid", func(t *testing.T) {
			backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			res := ctCall(t, caller, ctTool(t, doc, "PUT", "/pets/{id}"), `{`+valid+`, "mode": "safe", "tags": [1], "owner": {"email": "a@b.co"}}`)
			ctOK(t, res)
			require.Equal(t, "204 No Content", ctText(res))
		})
	}
}

func TestCallReadOnlyPropertyRejected(t *testing.T) {
	doc := ctDoc(t, strings.Replace(ctValidationSpec, "VERSION", "3.0.3", 1))
	backend := ctNewBackend(t, nil)
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	tool := ctTool(t, doc, "PUT", "/pets/{id}")
	require.Equal(t, "id", tool.Binding.Body.Props["body_id"])
	res := ctCall(t, caller, tool, `{"id": 3, "X-Trace": "ab12", "name": "Rex"}`)
	ctOK(t, res) // the path id is not the body id
	res = ctCall(t, caller, tool, `{"id": 3, "X-Trace": "ab12", "name": "Rex", "body_id": 9}`)
	require.True(t, res.IsError)
	require.Equal(t, `invalid argument "body_id": readOnly property "id" in request`, ctText(res))
}

// TestCallParameterCompositions: a parameter whose schema is a oneOf,
// anyOf, allOf or not is validated as the argument's JSON value.
// openapi3filter decodes a oneOf/anyOf from the wire with every alternative
// and keeps the last (oneOf) or first (anyOf) that decodes, so GitHub's
// dependabot/list-alerts-for-repo `has=example` (oneOf: string, or array of
// enum [patch]) came back as ["example"] and was refused, though the string
// alternative takes it; an allOf came back empty when its last member has
// no type; a not was not decoded at all.
func TestCallParameterCompositions(t *testing.T) {
	for _, version := range []string{"3.0.3", "3.1.0"} {
		doc := ctDoc(t, `
openapi: `+version+`
info: {title: alternatives, version: "1"}
paths:
  /alerts/{id}:
    get:
      parameters:
        - name: id
          in: path
          required: true
          schema:
            oneOf: [{type: integer}, {type: string}]
        - name: has
          in: query
          schema:
            oneOf:
              - type: string
              - type: array
                items: {type: string, enum: [patch]}
        - name: scope
          in: query
          schema:
            anyOf:
              - type: array
                items: {type: string, enum: [runtime, development]}
              - type: string
                maxLength: 5
        - name: X-Mode
          in: header
          schema:
            oneOf: [{type: boolean}, {type: string, enum: [auto]}]
        - name: limit
          in: query
          schema:
            allOf: [{type: integer, minimum: 2}, {description: at least two}]
        - name: user
          in: query
          schema: {type: string, not: {enum: [admin]}}
      responses: {"200": {description: ok}}
`)
		cases := []struct{ args, wantURI, wantErr string }{
			{`{"id": 7, "has": "example"}`, "/alerts/7?has=example", ""},
			{`{"id": "wf.yml", "has": ["patch"]}`, "/alerts/wf.yml?has=patch", ""},
			{`{"id": 7, "scope": "dev"}`, "/alerts/7?scope=dev", ""},
			{`{"id": 7, "scope": ["runtime", "development"]}`, "/alerts/7?scope=runtime&scope=development", ""},
			{`{"id": 7, "X-Mode": "auto"}`, "/alerts/7", ""},
			{`{"id": 7, "X-Mode": true}`, "/alerts/7", ""},
			{`{"id": 7, "has": ["other"]}`, "", `invalid argument "has"`},
			{`{"id": 7, "scope": "development"}`, "", `invalid argument "scope"`},
			{`{"id": 7, "X-Mode": "manual"}`, "", `invalid argument "X-Mode"`},
			{`{"id": true}`, "", `invalid argument "id"`},
			{`{"id": 7, "limit": 5}`, "/alerts/7?limit=5", ""},
			{`{"id": 7, "limit": 1}`, "", `invalid argument "limit"`},
			{`{"id": 7, "user": "ann"}`, "/alerts/7?user=ann", ""},
			{`{"id": 7, "user": "admin"}`, "", `invalid argument "user"`},
		}
		for _, c := range cases {
			t.Run(version+"/"+c.args, func(t *testing.T) {
				backend := ctNewBackend(t, nil)
				caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
				res := ctCall(t, caller, ctTool(t, doc, "GET", "/alerts/{id}"), c.args)
				if c.wantErr != "" {
					require.True(t, res.IsError, "result: %s", ctText(res))
					require.True(t, strings.HasPrefix(ctText(res), c.wantErr), "result: %s", ctText(res))
					require.Empty(t, backend.requests())
					return
				}
				ctOK(t, res)
				require.Equal(t, c.wantURI, backend.last(t).RequestURI)
			})
		}
	}
}
