package call

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fast acceptance of primitive arguments (wireArgsValid) must never
// accept what openapi3filter, validating the serialized request, refuses.
// This runs both over every pairing of schema, location and value below.
func TestWireArgsValidNeverAcceptsWhatOpenapi3filterRefuses(t *testing.T) {
	schemas := []string{
		`{type: string}`,
		`{type: string, enum: [a, b, "1k"]}`,
		`{type: string, minLength: 2, maxLength: 4}`,
		`{type: string, pattern: "^[a-z]+$"}`,
		`{type: string, format: date}`,
		`{type: string, format: uuid}`,
		`{type: integer}`,
		`{type: integer, minimum: 1, maximum: 10}`,
		`{type: integer, format: int32}`,
		`{type: integer, multipleOf: 3}`,
		`{type: number, exclusiveMinimum: true, minimum: 0}`,
		`{type: number, maximum: 2.5}`,
		`{type: boolean}`,
		`{type: string, nullable: true}`,
		`{type: integer, enum: [1, 2]}`,
	}
	values := []string{
		`"a"`, `"b"`, `"1k"`, `"ab"`, `"abcde"`, `"ABC"`, `"a b"`, `"a,b"`, `""`, `"2024-01-31"`, `"2024-13-45"`,
		`"123e4567-e89b-12d3-a456-426614174000"`, `"not-a-uuid"`, `"5"`, `"true"`, `"é/?#&="`, `" padded "`,
		`0`, `1`, `3`, `5`, `10`, `11`, `-1`, `2.5`, `2.6`, `1.0`, `1e2`, `2147483648`, `99999999999999999999`,
		`true`, `false`, `null`,
	}
	for _, version := range []string{"3.0.3", "3.1.0"} {
		accepted := 0
		for _, in := range []string{"query", "path", "header"} {
			for si, schema := range schemas {
				if version == "3.1.0" {
					schema = strings.Replace(schema, "exclusiveMinimum: true, minimum: 0", "exclusiveMinimum: 0", 1)
					schema = strings.Replace(schema, ", nullable: true", "", 1)
				}
				path := "/items"
				if in == "path" {
					path = "/items/{v}"
				}
				doc := ctDoc(t, fmt.Sprintf(`
openapi: %s
info: {title: t, version: "1"}
paths:
  %s:
    get:
      operationId: op
      parameters:
        - {name: v, in: %s, required: true, schema: %s}
      responses: {"200": {description: ok}}
`, version, path, in, schema))
				caller := ctCaller(t, doc, Config{BaseURL: "http://127.0.0.1:1"})
				tool := ctTool(t, doc, "GET", path)
				p, err := caller.plan(tool.Binding)
				require.NoError(t, err)
				require.NotEmpty(t, p.params[0].primitive, "schema %s", schema)
				// The same plan without the fast path: openapi3filter decides.
				slow := *p
				slow.params = append([]paramPlan(nil), p.params...)
				for i := range slow.params {
					slow.params[i].primitive = ""
				}
				for _, v := range values {
					args, aerr := p.decodeArgs(json.RawMessage(`{"v":` + v + `}`))
					require.Nil(t, aerr)
					if _, _, aerr := caller.buildRequest(context.Background(), p, args); aerr != nil && p.wireArgsValid(args) {
						t.Fatalf("%s %s schema #%d %s, value %s: fast path accepts, the request is refused: %s", version, in, si, schema, v, aerr.msg)
					}
					_, _, slowErr := caller.buildRequest(context.Background(), &slow, args)
					if p.wireArgsValid(args) {
						accepted++
						require.Nil(t, slowErr, "%s %s schema %s value %s: openapi3filter refuses what the fast path accepts", version, in, schema, v)
					}
				}
			}
		}
		// The fast path is taken for ordinary values, or this test checks nothing.
		require.Greater(t, accepted, 100, version)
	}
}

// Two parameters that reach the wire under one key: openapi3filter judges
// the first value under it, so the fast path must step aside.
func TestWireArgsValidStepsAsideForSharedWireKeys(t *testing.T) {
	cases := []struct{ name, params, args string }{
		{"an exploded form object writes a primitive parameter's name", `
        - {name: o, in: query, style: form, explode: true, schema: {type: object, properties: {v: {type: string}}}}
        - {name: v, in: query, schema: {type: integer}}`, `{"o":{"v":"abc"},"v":1}`},
		{"header names differing only in case", `
        - {name: X-Mode, in: header, schema: {type: string, enum: [a]}}
        - {name: x-mode, in: header, schema: {type: string, enum: [b]}}`, `{"X-Mode":"a","x-mode":"b"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := ctDoc(t, `
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /x:
    get:
      parameters:`+tc.params+`
      responses: {"200": {description: ok}}
`)
			caller := ctCaller(t, doc, Config{BaseURL: "http://127.0.0.1:1"})
			p, err := caller.plan(ctTool(t, doc, "GET", "/x").Binding)
			require.NoError(t, err)
			in, aerr := p.decodeArgs(json.RawMessage(tc.args))
			require.Nil(t, aerr)
			require.False(t, p.wireArgsValid(in))
			_, _, aerr = caller.buildRequest(context.Background(), p, in)
			require.NotNil(t, aerr, "openapi3filter refuses the request")
		})
	}
}
