package call

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ctStyleSpec is a document with one GET operation taking one parameter
// named id in the given place, with the given style and explode, and a
// schema of the given kind (primitive integer, array of integers, or object
// with role and firstName).
func ctStyleSpec(in, style string, explode *bool, kind string, extra string) string {
	schema := map[string]string{
		"primitive": `{type: integer}`,
		"string":    `{type: string}`,
		"array":     `{type: array, items: {type: integer}}`,
		"object":    `{type: object, properties: {role: {type: string}, firstName: {type: string}}}`,
	}[kind]
	path := "/items"
	if in == "path" {
		path = "/items/{id}"
	}
	name := "id"
	if in == "header" {
		name = "X-Id"
	}
	ex := ""
	if explode != nil {
		ex = fmt.Sprintf(", explode: %v", *explode)
	}
	st := ""
	if style != "" {
		st = ", style: " + style
	}
	return fmt.Sprintf(`
openapi: 3.0.3
info: {title: styles, version: "1"}
servers: [{url: "http://placeholder.test/api"}]
paths:
  %s:
    get:
      operationId: getItems
      parameters:
        - {name: %s, in: %s, required: true%s%s%s, schema: %s}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
`, path, name, in, st, ex, extra, schema)
}

var (
	ctTrue  = func() *bool { b := true; return &b }()
	ctFalse = func() *bool { b := false; return &b }()
)

const (
	ctPrimitive = `5`
	ctArray     = `[3,4,5]`
	ctObject    = `{"role":"admin","firstName":"Alex"}`
)

func TestCallParameterStyles(t *testing.T) {
	type tc struct {
		in, style string
		explode   *bool
		kind      string
		arg       string
		want      string // raw path after /api/items, raw query, header or Cookie header
	}
	cases := []tc{
		// Path: OpenAPI 3 style table (keys of objects are sorted).
		{"path", "", nil, "primitive", ctPrimitive, "/5"},
		{"path", "simple", ctFalse, "array", ctArray, "/3,4,5"},
		{"path", "simple", ctTrue, "array", ctArray, "/3,4,5"},
		{"path", "simple", ctFalse, "object", ctObject, "/firstName,Alex,role,admin"},
		{"path", "simple", ctTrue, "object", ctObject, "/firstName=Alex,role=admin"},
		{"path", "label", ctFalse, "primitive", ctPrimitive, "/.5"},
		{"path", "label", ctFalse, "array", ctArray, "/.3,4,5"},
		{"path", "label", ctTrue, "array", ctArray, "/.3.4.5"},
		{"path", "label", ctFalse, "object", ctObject, "/.firstName,Alex,role,admin"},
		{"path", "label", ctTrue, "object", ctObject, "/.firstName=Alex.role=admin"},
		{"path", "matrix", ctFalse, "primitive", ctPrimitive, "/;id=5"},
		{"path", "matrix", ctFalse, "array", ctArray, "/;id=3,4,5"},
		{"path", "matrix", ctTrue, "array", ctArray, "/;id=3;id=4;id=5"},
		{"path", "matrix", ctFalse, "object", ctObject, "/;id=firstName,Alex,role,admin"},
		{"path", "matrix", ctTrue, "object", ctObject, "/;firstName=Alex;role=admin"},
		// Query.
		{"query", "", nil, "primitive", ctPrimitive, "id=5"},
		{"query", "form", ctTrue, "array", ctArray, "id=3&id=4&id=5"},
		{"query", "form", ctFalse, "array", ctArray, "id=3,4,5"},
		{"query", "form", ctTrue, "object", ctObject, "firstName=Alex&role=admin"},
		{"query", "form", ctFalse, "object", ctObject, "id=firstName,Alex,role,admin"},
		{"query", "spaceDelimited", ctFalse, "array", ctArray, "id=3%204%205"},
		{"query", "spaceDelimited", ctTrue, "array", ctArray, "id=3&id=4&id=5"},
		{"query", "spaceDelimited", ctFalse, "object", ctObject, "id=firstName%20Alex%20role%20admin"},
		{"query", "pipeDelimited", ctFalse, "array", ctArray, "id=3%7C4%7C5"},
		{"query", "pipeDelimited", ctTrue, "array", ctArray, "id=3&id=4&id=5"},
		{"query", "pipeDelimited", ctFalse, "object", ctObject, "id=firstName%7CAlex%7Crole%7Cadmin"},
		{"query", "deepObject", ctTrue, "object", ctObject, "id%5BfirstName%5D=Alex&id%5Brole%5D=admin"},
		// Header: simple only.
		{"header", "", nil, "primitive", ctPrimitive, "5"},
		{"header", "simple", ctFalse, "array", ctArray, "3,4,5"},
		{"header", "simple", ctTrue, "array", ctArray, "3,4,5"},
		{"header", "simple", ctFalse, "object", ctObject, "firstName,Alex,role,admin"},
		{"header", "simple", ctTrue, "object", ctObject, "firstName=Alex,role=admin"},
		// Cookie: form.
		{"cookie", "", nil, "primitive", ctPrimitive, "id=5"},
		{"cookie", "form", ctFalse, "array", ctArray, "id=3,4,5"},
		{"cookie", "form", ctTrue, "array", ctArray, "id=3; id=4; id=5"},
		{"cookie", "form", ctFalse, "object", ctObject, "id=firstName,Alex,role,admin"},
		{"cookie", "form", ctTrue, "object", ctObject, "firstName=Alex; role=admin"},
	}
	for _, c := range cases {
		ex := "default"
		if c.explode != nil {
			ex = fmt.Sprint(*c.explode)
		}
		t.Run(fmt.Sprintf("%s/%s/explode=%s/%s", c.in, c.style, ex, c.kind), func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			doc := ctDoc(t, ctStyleSpec(c.in, c.style, c.explode, c.kind, ""))
			path := "/items"
			if c.in == "path" {
				path = "/items/{id}"
			}
			tool := ctTool(t, doc, "GET", path)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL + "/api"})
			argName := "id"
			if c.in == "header" {
				argName = "X-Id"
			}
			res := ctCall(t, caller, tool, fmt.Sprintf(`{%q: %s}`, argName, c.arg))
			ctOK(t, res)
			got := backend.last(t)
			switch c.in {
			case "path":
				require.Equal(t, "/api/items"+c.want, got.RequestURI)
			case "query":
				require.Equal(t, "/api/items?"+c.want, got.RequestURI)
			case "header":
				require.Equal(t, []string{c.want}, got.Header.Values("X-Id"))
			case "cookie":
				require.Equal(t, []string{c.want}, got.Header.Values("Cookie"))
			}
		})
	}
}

// TestCallParameterStylesValidate checks that wrongly typed values are
// caught for every location, both where openapi3filter decodes the wire
// form and where the JSON value is validated.
func TestCallParameterStylesValidate(t *testing.T) {
	cases := []struct {
		in, style string
		explode   *bool
		kind      string
		arg       string
		wantMsg   string
	}{
		{"path", "", nil, "primitive", `"abc"`, `invalid argument "id": "abc" is not a valid integer`},
		{"path", "label", ctTrue, "array", `[1,"x"]`, `invalid argument "id": "x" is not a valid integer`},
		{"query", "", nil, "primitive", `"1.5"`, `invalid argument "id": "1.5" is not a valid integer`},
		{"query", "form", ctFalse, "array", `[1,"x"]`, `invalid argument "id": "x" is not a valid integer (at /1)`},
		{"header", "", nil, "primitive", `"abc"`, `invalid argument "X-Id": "abc" is not a valid integer`},
		{"cookie", "", nil, "primitive", `true`, `invalid argument "id": "true" is not a valid integer`},
		// Validated as JSON: form-exploded objects and exploded cookie arrays.
		{"query", "form", ctTrue, "array", `["x"]`, `invalid argument "id": "x" is not a valid integer`},
		{"cookie", "form", ctTrue, "array", `[1,"x"]`, `invalid argument "id": value must be an integer (at /1)`},
		{"query", "form", ctTrue, "object", `{"role":5}`, `invalid argument "id": value must be a string (at /role)`},
		{"query", "deepObject", ctTrue, "object", `{"role":{"a":1}}`, `invalid argument "id": {"a":"1"} path is not convertible to primitive (at /role)`},
		// Shapes that a style would serialize differently.
		{"query", "", nil, "primitive", `[1,2]`, `invalid argument "id": must be a single integer, not an array`},
		{"header", "", nil, "primitive", `{"a":1}`, `invalid argument "X-Id": must be a single integer, not an object`},
		{"path", "", nil, "array", `"x"`, `invalid argument "id": must be an array`},
		{"cookie", "form", ctFalse, "object", `[1]`, `invalid argument "id": must be an object`},
	}
	for _, c := range cases {
		t.Run(c.in+"/"+c.style+"/"+c.kind+"/"+c.arg, func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			doc := ctDoc(t, ctStyleSpec(c.in, c.style, c.explode, c.kind, ""))
			path := "/items"
			if c.in == "path" {
				path = "/items/{id}"
			}
			argName := "id"
			if c.in == "header" {
				argName = "X-Id"
			}
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			res := ctCall(t, caller, ctTool(t, doc, "GET", path), fmt.Sprintf(`{%q: %s}`, argName, c.arg))
			require.True(t, res.IsError)
			require.Contains(t, ctText(res), c.wantMsg)
			require.Empty(t, backend.requests(), "nothing may reach the backend")
		})
	}
}

func TestCallQueryAllowReserved(t *testing.T) {
	for _, c := range []struct {
		reserved bool
		value    string
		want     string
	}{
		{false, "a/b?c:d", "q=a%2Fb%3Fc%3Ad"},
		{true, "a/b?c:d[e]@!$'()*,", "q=a/b?c:d[e]@!$'()*,"},
		// Characters that would split the query stay encoded.
		{true, "a&b=c+d#e%;", "q=a%26b%3Dc%2Bd%23e%25%3B"},
		{false, "x y", "q=x%20y"},
	} {
		t.Run(fmt.Sprint(c.reserved, c.value), func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			extra := ""
			if c.reserved {
				extra = ", allowReserved: true"
			}
			spec := strings.Replace(ctStyleSpec("query", "", nil, "string", extra), "{name: id,", "{name: q,", 1)
			doc := ctDoc(t, spec)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
			res := ctCall(t, caller, ctTool(t, doc, "GET", "/items"), fmt.Sprintf(`{"q": %q}`, c.value))
			ctOK(t, res)
			got := backend.last(t)
			require.Equal(t, c.want, got.RawQuery)
			q, err := url.ParseQuery(got.RawQuery)
			require.NoError(t, err)
			require.Equal(t, c.value, q.Get("q"), "the backend decodes the value it was given")
		})
	}
}

// TestCallPathEscaping: no path argument can change the request path or
// query; each arrives as one segment that the backend decodes literally.
func TestCallPathEscaping(t *testing.T) {
	const spec = `
openapi: 3.0.3
info: {title: files, version: "1"}
paths:
  /files/{name}:
    get:
      operationId: getFile
      parameters:
        - {name: name, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
  /files/{dir}/{name}.txt:
    get:
      operationId: getText
      parameters:
        - {name: dir, in: path, required: true, schema: {type: string}}
        - {name: name, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
`
	cases := []struct{ value, wantURI string }{
		{"../admin", "/base/files/..%2Fadmin"},
		{"..", "/base/files/%2E%2E"},
		{".", "/base/files/%2E"},
		{"a/b", "/base/files/a%2Fb"},
		{"%2F", "/base/files/%252F"},
		{"x?y=1", "/base/files/x%3Fy%3D1"},
		{"#frag", "/base/files/%23frag"},
		{"a;b=c,d", "/base/files/a%3Bb%3Dc%2Cd"},
		{"..\\admin", "/base/files/..%5Cadmin"},
		{"héllo wörld", "/base/files/h%C3%A9llo%20w%C3%B6rld"},
		{"report.v2.pdf", "/base/files/report.v2.pdf"},
	}
	doc := ctDoc(t, spec)
	for _, c := range cases {
		t.Run(c.value, func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL + "/base/"})
			res := ctCall(t, caller, ctTool(t, doc, "GET", "/files/{name}"), fmt.Sprintf(`{"name": %q}`, c.value))
			ctOK(t, res)
			got := backend.last(t)
			require.Equal(t, c.wantURI, got.RequestURI)
			require.Equal(t, "/base/files/"+c.value, got.Path, "decoded, the value is the whole last segment")
			require.Empty(t, got.RawQuery)
		})
	}
	t.Run("two values cannot combine into a dot segment", func(t *testing.T) {
		backend := ctNewBackend(t, nil)
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		res := ctCall(t, caller, ctTool(t, doc, "GET", "/files/{dir}/{name}.txt"), `{"dir": "..", "name": "../../etc/passwd"}`)
		ctOK(t, res)
		require.Equal(t, "/files/%2E%2E/..%2F..%2Fetc%2Fpasswd.txt", backend.last(t).RequestURI)
	})
	t.Run("empty value", func(t *testing.T) {
		backend := ctNewBackend(t, nil)
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		res := ctCall(t, caller, ctTool(t, doc, "GET", "/files/{name}"), `{"name": ""}`)
		require.True(t, res.IsError)
		require.Equal(t, `invalid argument "name": must not be empty: it is part of the URL path`, ctText(res))
		require.Empty(t, backend.requests())
	})
}

func TestCallHeaderInjection(t *testing.T) {
	doc := ctDoc(t, ctStyleSpec("header", "", nil, "string", ""))
	backend := ctNewBackend(t, nil)
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	res := ctCall(t, caller, ctTool(t, doc, "GET", "/items"), `{"X-Id": "a\r\nX-Admin: 1"}`)
	require.True(t, res.IsError)
	require.Contains(t, ctText(res), `invalid argument "X-Id": must not contain control characters`)
	require.Empty(t, backend.requests())
}

func TestCallContentParameter(t *testing.T) {
	const spec = `
openapi: 3.0.3
info: {title: content, version: "1"}
paths:
  /search:
    get:
      operationId: search
      parameters:
        - name: filter
          in: query
          content:
            application/json:
              schema: {type: object, properties: {name: {type: string}}, additionalProperties: false}
      responses: {"200": {description: ok}}
`
	doc := ctDoc(t, spec)
	backend := ctNewBackend(t, nil)
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	tool := ctTool(t, doc, "GET", "/search")
	ctOK(t, ctCall(t, caller, tool, `{"filter": {"name": "a b"}}`))
	q, err := url.ParseQuery(backend.last(t).RawQuery)
	require.NoError(t, err)
	require.Equal(t, `{"name":"a b"}`, q.Get("filter"))

	res := ctCall(t, caller, tool, `{"filter": {"nick": "x"}}`)
	require.True(t, res.IsError)
	require.Contains(t, ctText(res), `invalid argument "filter"`)
}

func TestCallAcceptAndNulls(t *testing.T) {
	const spec = `
openapi: 3.0.3
info: {title: accept, version: "1"}
paths:
  /report:
    get:
      operationId: report
      parameters:
        - {name: from, in: query, schema: {type: string}}
        - {name: X-Mode, in: header, schema: {type: string}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}, text/csv: {schema: {type: string}}}}
        "206": {description: part, content: {application/octet-stream: {}}}
        "404": {description: missing, content: {application/problem+json: {}}}
    head:
      operationId: reportHead
      responses: {"200": {description: ok}}
`
	doc := ctDoc(t, spec)
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Length", "99999999")
			w.WriteHeader(http.StatusOK)
			return
		}
		ctReply(200, "application/json", []byte(`{}`))(w, r)
	})
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL, MaxResponseBytes: 10})

	res := ctCall(t, caller, ctTool(t, doc, "HEAD", "/report"), `{}`)
	ctOK(t, res)
	require.Equal(t, "200 OK", ctText(res))

	// Optional parameters given as null are left out.
	ctOK(t, ctCall(t, caller, ctTool(t, doc, "GET", "/report"), `{"from": null, "X-Mode": null}`))
	reqs := backend.requests()
	require.Len(t, reqs, 2)
	require.Equal(t, "application/json, */*;q=0.5", reqs[0].Header.Get("Accept"))
	require.Equal(t, "application/json, text/csv, application/octet-stream, */*;q=0.1", reqs[1].Header.Get("Accept"))
	require.Equal(t, "/report", reqs[1].RequestURI)
	require.Empty(t, reqs[1].Header.Values("X-Mode"))
}

// FuzzCallPathArgument: whatever string a path argument holds, the request
// has exactly the template's segments, the value decodes back to itself,
// and a query argument stays one query pair.
func FuzzCallPathArgument(f *testing.F) {
	for _, s := range []string{"../admin", "a/b", "%2F", "x?y=1", "#frag", "..", ".", "a;b", "é", "\x00", "a b+c&d=e"} {
		f.Add(s)
	}
	doc := ctDoc(f, `
openapi: 3.0.3
info: {title: fuzz, version: "1"}
paths:
  /files/{name}/raw:
    get:
      parameters:
        - {name: name, in: path, required: true, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
`)
	caller := ctCaller(f, doc, Config{BaseURL: "http://backend.test/base"})
	p, err := caller.plan(ctTool(f, doc, "GET", "/files/{name}/raw").Binding)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, s string) {
		args, err := json.Marshal(map[string]string{"name": s, "q": s})
		require.NoError(t, err)
		var back map[string]string
		require.NoError(t, json.Unmarshal(args, &back))
		value := back["name"] // invalid UTF-8 was replaced by json.Marshal
		in, aerr := p.decodeArgs(args)
		require.Nil(t, aerr)
		req, _, aerr := caller.buildRequest(context.Background(), p, in)
		if value == "" {
			require.NotNil(t, aerr)
			return
		}
		require.Nil(t, aerr, "value %q", value)
		raw := req.URL.EscapedPath()
		rest, ok := strings.CutPrefix(raw, "/base/files/")
		require.True(t, ok, raw)
		seg, ok := strings.CutSuffix(rest, "/raw")
		require.True(t, ok, raw)
		require.NotContains(t, seg, "/")
		require.NotContains(t, seg, "?")
		require.NotContains(t, seg, "#")
		require.NotEqual(t, "..", seg)
		require.NotEqual(t, ".", seg)
		decoded, err := url.PathUnescape(seg)
		require.NoError(t, err)
		require.Equal(t, value, decoded)
		q, err := url.ParseQuery(req.URL.RawQuery)
		require.NoError(t, err)
		require.Equal(t, url.Values{"q": {value}}, q)
		require.Equal(t, "backend.test", req.URL.Host)
	})
}
