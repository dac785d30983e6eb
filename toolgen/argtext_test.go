package toolgen

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// argDoc has a parameter of each type a text argument can be sent as, a
// flattened body and a whole body (OpenAPI 3.1, for type arrays).
const argDoc = `openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /items/{id}:
    get:
      operationId: getItem
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
        - {name: price, in: query, schema: {type: number}}
        - {name: active, in: query, schema: {type: boolean}}
        - {name: q, in: query, schema: {type: string}}
        - {name: limit, in: query, schema: {type: [integer, "null"]}}
        - {name: key, in: query, schema: {type: [string, integer]}}
        - {name: size, in: query, schema: {type: [integer, number]}}
        - {name: flag, in: query, schema: {type: [boolean, integer]}}
        - {name: any, in: query}
        - {name: untyped, in: query, schema: {enum: [1, 2]}}
      responses: {'204': {description: ok}}
  /items:
    post:
      operationId: createItem
      parameters:
        - {name: dryRun, in: query, schema: {type: boolean}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string}
                count: {type: integer}
                weight: {type: number}
                gift: {type: boolean}
      responses: {'201': {description: ok}}
  /blobs:
    put:
      operationId: putBlob
      requestBody:
        content: {application/octet-stream: {schema: {type: string, format: binary}}}
      responses: {'204': {description: ok}}
  /ping:
    get: {operationId: ping, responses: {'204': {description: ok}}}
`

func TestArgFromText(t *testing.T) {
	set := genDoc(t, argDoc, Options{})
	get, create := tool(t, set, "getItem"), tool(t, set, "createItem")
	for _, tc := range []struct {
		tool      *Tool
		arg, text string
		want      string
	}{
		{get, "id", "7", `7`},
		{get, "id", "-12", `-12`},
		{get, "id", "abc", `"abc"`},
		{get, "id", "7.5", `"7.5"`},
		{get, "id", "", `""`},
		{get, "id", " 7", `" 7"`},
		{get, "id", "+7", `"+7"`},   // not JSON: sent as text, for validation to refuse
		{get, "id", "007", `"007"`}, // likewise
		{get, "id", "99999999999999999999", `"99999999999999999999"`},
		{get, "price", "9.5", `9.5`},
		{get, "price", "-1e3", `-1e3`},
		{get, "price", "10", `10`},
		{get, "price", "NaN", `"NaN"`},
		{get, "price", "Inf", `"Inf"`},
		{get, "price", "1e400", `"1e400"`},
		{get, "price", "0x10", `"0x10"`},
		{get, "price", ".5", `".5"`},
		{get, "active", "true", `true`},
		{get, "active", "false", `false`},
		{get, "active", "True", `"True"`},
		{get, "active", "1", `"1"`},
		{get, "q", "42", `"42"`},
		{get, "q", `say "hi"`, `"say \"hi\""`},
		{get, "limit", "20", `20`},
		{get, "limit", "null", `"null"`},
		{get, "limit", "many", `"many"`},
		{get, "key", "7", `"7"`}, // a string is what it takes
		{get, "key", "k", `"k"`},
		{get, "size", "3", `3`},
		{get, "size", "1.5", `1.5`}, // not an integer, but a number
		{get, "flag", "true", `true`},
		{get, "flag", "2", `2`},
		{get, "any", "5", `"5"`},     // no schema
		{get, "untyped", "1", `"1"`}, // no type
		{get, "nope", "5", `"5"`},    // no such argument
		{create, "dryRun", "true", `true`},
		{create, "count", "3", `3`}, // flattened body properties take their types too
		{create, "weight", "2.5", `2.5`},
		{create, "gift", "false", `false`},
		{create, "name", "12", `"12"`},
		{create, "count", "x", `"x"`},
		{nil, "id", "7", `"7"`},
		{&Tool{Name: "bare"}, "id", "7", `"7"`},
	} {
		name := "<nil>"
		if tc.tool != nil {
			name = tc.tool.Name
		}
		got := tc.tool.ArgFromText(tc.arg, tc.text)
		require.True(t, json.Valid(got), "%s %s=%q: %s is not JSON", name, tc.arg, tc.text, got)
		require.JSONEq(t, tc.want, string(got), "%s %s=%q", name, tc.arg, tc.text)
		require.Equal(t, tc.want, string(got), "%s %s=%q: the text as it is", name, tc.arg, tc.text)
	}
}

func TestTakesArg(t *testing.T) {
	set := genDoc(t, argDoc, Options{})
	get, create, blob, ping := tool(t, set, "getItem"), tool(t, set, "createItem"), tool(t, set, "putBlob"), tool(t, set, "ping")
	require.NotNil(t, create.Binding.Body)
	require.True(t, create.Binding.Body.Flattened, "the body object's properties are arguments")
	require.NotNil(t, blob.Binding.Body)
	require.False(t, blob.Binding.Body.Flattened)
	for _, tc := range []struct {
		tool *Tool
		arg  string
		want bool
	}{
		{get, "id", true},
		{get, "limit", true},
		{get, "any", true},
		{get, "nope", false},
		{get, "body", false},
		{create, "dryRun", true},
		{create, "name", true},
		{create, "count", true},
		{create, "body", false}, // flattened: no whole-body argument
		{create, "id", false},
		{blob, blob.Binding.Body.Arg, true},
		{blob, "name", false},
		{ping, "id", false},
		{ping, "", false},
		{nil, "id", false},
		{&Tool{Name: "bare"}, "id", false},
	} {
		name := "<nil>"
		if tc.tool != nil {
			name = tc.tool.Name
		}
		require.Equal(t, tc.want, tc.tool.TakesArg(tc.arg), "%s %q", name, tc.arg)
	}
	require.Equal(t, "body", blob.Binding.Body.Arg)
}
