package resources

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp/mcptest"
	"github.com/mcp-gateway/mcp-gateway/openapi"
)

func text(s string) *string { return &s }

// conformance are the resources the MCP conformance suite reads.
var conformance = []Declared{
	{URI: "test://static-text", Name: "static-text", Text: text("This is the content of the static text resource.")},
	{URI: "test://static-binary", Name: "static-binary", MIMEType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G', 0}},
	{URITemplate: "test://template/{id}/data", Name: "template", MIMEType: "application/json",
		Text:   text(`{"id":"{{.id}}","templateTest":true,"data":"Data for ID: {{.id}}"}`),
		Values: map[string][]string{"id": {"123", "456"}}},
}

const petstore = `openapi: 3.0.3
info:
  title: Pets
  version: "1.2.3"
paths:
  /pets/{id}:
    get:
      operationId: getPet
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: A pet
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Pet"}
components:
  schemas:
    Pet:
      type: object
      required: [name]
      properties:
        name: {type: string}
        owner: {$ref: "#/components/schemas/Owner"}
    Owner:
      type: object
      properties:
        email: {type: string, format: email}
`

func newFeature(t *testing.T, cfg Config) (*Feature, mcptest.Table) {
	t.Helper()
	f, err := New(cfg, Deps{})
	require.NoError(t, err)
	tab := mcptest.Table{}
	f.Register(tab)
	return f, tab
}

func petCatalog(t *testing.T) Catalog {
	t.Helper()
	doc, err := openapi.LoadData(context.Background(), []byte(petstore), "", openapi.LoadOptions{})
	require.NoError(t, err)
	return Catalog{Doc: doc, ServerName: "mcp-gateway", ServerVersion: "1.0.0", Tools: 1, Prompts: 2}
}

// callMethod runs method in era and returns its result encoded as the wire
// carries it.
func callMethod(t *testing.T, tab mcptest.Table, era mcp.Era, method, params string) (string, error) {
	t.Helper()
	res, err := tab.Call(method, mcptest.Request(era, params))
	if err != nil {
		return "", err
	}
	b, err := mcp.Marshal(res)
	require.NoError(t, err)
	return string(b), nil
}

func TestRegistersThreeMethods(t *testing.T) {
	_, tab := newFeature(t, Config{})
	require.Len(t, tab, 3)
	for _, m := range []string{"resources/list", "resources/templates/list", "resources/read"} {
		require.Equal(t, mcp.EraBoth, tab[m].Eras, m)
	}
}

func TestNewRefuses(t *testing.T) {
	ok := Declared{URI: "test://ok", Text: text("ok")}
	for _, tc := range []struct {
		name string
		d    Declared
		want string
	}{
		{"neither uri nor template", Declared{Text: text("x")}, "exactly one of uri and uriTemplate"},
		{"uri and template", Declared{URI: "test://a", URITemplate: "test://{a}", Text: text("x")}, "exactly one of uri and uriTemplate"},
		{"neither text nor blob", Declared{URI: "test://a"}, "exactly one of text and blob"},
		{"text and blob", Declared{URI: "test://a", Text: text("x"), Blob: []byte("x")}, "exactly one of text and blob"},
		{"gateway scheme", Declared{URI: "gateway://about", Text: text("x")}, "scheme gateway: is reserved"},
		{"scheme case", Declared{URI: "GateWay://x", Text: text("x")}, "is reserved"},
		{"http", Declared{URI: "http://example.com/", Text: text("x")}, "scheme http: is reserved"},
		{"https template", Declared{URITemplate: "HTTPS://example.com/{id}", Text: text("x")}, "scheme HTTPS: is reserved"},
		{"gateway template", Declared{URITemplate: "gateway://schema/{x}", Text: text("x")}, "is reserved"},
		{"no scheme", Declared{URI: "static-text", Text: text("x")}, "absolute URI with a scheme"},
		{"unparsable uri", Declared{URI: "test://%zz", Text: text("x")}, "absolute URI with a scheme"},
		{"unparsable template", Declared{URITemplate: "test://{id", Text: text("x")}, "uriTemplate:"},
		{"template without scheme", Declared{URITemplate: "{scheme}://x", Text: text("x")}, "literal scheme"},
		{"level 3 operator", Declared{URITemplate: "test://x{/id}", Text: text("x")}, "level 3 operator"},
		{"several variables", Declared{URITemplate: "test://x/{a,b}", Text: text("x")}, "level 3 or 4"},
		{"explode", Declared{URITemplate: "test://x/{id*}", Text: text("x")}, "level 3 or 4"},
		{"prefix", Declared{URITemplate: "test://x/{id:3}", Text: text("x")}, "level 3 or 4"},
		{"variable twice", Declared{URITemplate: "test://{id}/{id}", Text: text("x")}, `"id" appears twice`},
		{"bad text template", Declared{URITemplate: "test://{id}", Text: text("{{.id")}, "text:"},
		{"fixed text names a variable", Declared{URI: "test://a", Text: text("{{.id}}")}, "text:"},
		{"duplicate uri", Declared{URI: "test://ok", Blob: []byte{}}, "same uri"},
		{"values on a fixed resource", Declared{URI: "test://b", Text: text("x"), Values: map[string][]string{"id": nil}}, "fixed resource has none"},
		{"values of no variable", Declared{URITemplate: "test://{id}", Text: text("x"), Values: map[string][]string{"idd": nil}}, `"idd", which is not a variable`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Config{Declared: []Declared{ok, tc.d}}, Deps{})
			require.ErrorContains(t, err, tc.want)
			target := tc.d.URI
			if target == "" {
				target = tc.d.URITemplate
			}
			require.ErrorContains(t, err, `entry 1 ("`+target+`")`, "names the entry")
		})
	}
	t.Run("duplicate template", func(t *testing.T) {
		for _, second := range []string{"test://t/{id}", "test://t/{other}"} {
			_, err := New(Config{Declared: []Declared{
				{URITemplate: "test://t/{id}", Text: text("x")},
				{URITemplate: second, Text: text("y")},
			}}, Deps{})
			require.ErrorContains(t, err, "entry 1 ")
			require.ErrorContains(t, err, "entry 0 has the same template", second)
		}
	})
	_, err := New(Config{Declared: conformance}, Deps{})
	require.NoError(t, err)
}

func TestListsPaginate(t *testing.T) {
	decl := append([]Declared{
		{URI: "test://third", Title: "Third", Description: "The third", Text: text("3")},
		{URITemplate: "test://files/{+path}", Text: text("{{.path}}")},
	}, conformance...)
	f, tab := newFeature(t, Config{PageSize: 2, Declared: decl})
	f.SetCatalog(petCatalog(t))

	pages := func(method, member string) (items []map[string]any, cursors []string) {
		cursor := ""
		for n := 0; ; n++ {
			require.Less(t, n, 10)
			params := ""
			if cursor != "" {
				params = `{"cursor":"` + cursor + `"}`
			}
			out, err := callMethod(t, tab, mcp.EraSession, method, params)
			require.NoError(t, err)
			var page map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &page))
			got := page[member].([]any)
			require.NotEmpty(t, got)
			require.LessOrEqual(t, len(got), 2)
			for _, it := range got {
				items = append(items, it.(map[string]any))
			}
			next, _ := page["nextCursor"].(string)
			if next == "" {
				return items, cursors
			}
			cursor = next
			cursors = append(cursors, next)
		}
	}

	res, cursors := pages("resources/list", "resources")
	var uris []string
	for _, r := range res {
		uris = append(uris, r["uri"].(string))
	}
	require.Equal(t, []string{aboutURI, openapiURI, "test://third", "test://static-text", "test://static-binary"}, uris)
	require.Len(t, cursors, 2)
	require.Equal(t, map[string]any{"uri": "test://third", "name": "test://third", "title": "Third",
		"description": "The third", "mimeType": "text/plain"}, res[2], "name defaults to the uri")
	require.Equal(t, "image/png", res[4]["mimeType"])

	tmpls, tcursors := pages("resources/templates/list", "resourceTemplates")
	var raws []string
	for _, r := range tmpls {
		raws = append(raws, r["uriTemplate"].(string))
	}
	require.Equal(t, []string{schemaTemplate, "test://files/{+path}", "test://template/{id}/data"}, raws)
	require.Equal(t, "application/json", tmpls[2]["mimeType"])
	require.Equal(t, "template", tmpls[2]["name"])

	badCursor := func(method, cursor string) {
		t.Helper()
		_, err := callMethod(t, tab, mcp.EraSession, method, `{"cursor":"`+cursor+`"}`)
		var rerr *mcp.Error
		require.ErrorAs(t, err, &rerr)
		require.Equal(t, mcp.CodeInvalidParams, rerr.Code)
	}
	badCursor("resources/templates/list", cursors[0]) // another list's
	badCursor("resources/list", "bm9wZTox")
	// The same catalog again: the lists, and so the cursors, are unchanged.
	f.SetCatalog(petCatalog(t))
	_, err := callMethod(t, tab, mcp.EraSession, "resources/list", `{"cursor":"`+cursors[0]+`"}`)
	require.NoError(t, err)
	// No document: gateway://openapi and the schema template go, and with
	// them every cursor of the old lists.
	f.SetCatalog(Catalog{ServerName: "x"})
	badCursor("resources/list", cursors[0])
	badCursor("resources/templates/list", tcursors[0])

	// Lists are cacheable in the stateless era.
	out, err := callMethod(t, tab, mcp.EraStateless, "resources/list", "")
	require.NoError(t, err)
	require.Contains(t, out, `"resultType":"complete"`)
	require.Contains(t, out, `"cacheScope":"public"`)
	require.Contains(t, out, `"ttlMs":`)
	out, err = callMethod(t, tab, mcp.EraSession, "resources/templates/list", "")
	require.NoError(t, err)
	require.NotContains(t, out, "resultType")
}

func TestEmptyListsBeforeCatalog(t *testing.T) {
	f, tab := newFeature(t, Config{})
	for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
		out, err := callMethod(t, tab, era, "resources/list", "")
		require.NoError(t, err)
		require.Contains(t, out, `"resources":[]`, "an empty list, not null")
		out, err = callMethod(t, tab, era, "resources/templates/list", "")
		require.NoError(t, err)
		require.Contains(t, out, `"resourceTemplates":[]`)
		_, err = callMethod(t, tab, era, "resources/templates/list", `{"cursor":"x"}`)
		var rerr *mcp.Error
		require.ErrorAs(t, err, &rerr)
		require.Equal(t, mcp.CodeInvalidParams, rerr.Code)
	}
	_, err := f.Read(mcptest.Request(mcp.EraSession, `{}`), aboutURI)
	requireNotFound(t, err, mcp.EraSession, aboutURI)
	_, ok := f.VariableValues(mcptest.Request(mcp.EraSession, ""), schemaTemplate, "name")
	require.False(t, ok, "no document, no schema template")
}

func TestReadConformance(t *testing.T) {
	f, tab := newFeature(t, Config{Declared: conformance})
	for _, tc := range []struct{ params, want string }{
		{`{"uri":"test://static-text"}`,
			`{"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}]}`},
		{`{"uri":"test://static-binary"}`,
			`{"contents":[{"uri":"test://static-binary","mimeType":"image/png","blob":"iVBORwA="}]}`},
		{`{"uri":"test://template/123/data"}`,
			`{"contents":[{"uri":"test://template/123/data","mimeType":"application/json","text":"{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"}]}`},
		{`{"uri":"test://template/a%20b/data"}`,
			`{"contents":[{"uri":"test://template/a%20b/data","mimeType":"application/json","text":"{\"id\":\"a b\",\"templateTest\":true,\"data\":\"Data for ID: a b\"}"}]}`},
	} {
		out, err := callMethod(t, tab, mcp.EraSession, "resources/read", tc.params)
		require.NoError(t, err, tc.params)
		require.JSONEq(t, tc.want, out, tc.params)
	}
	blob, err := base64.StdEncoding.DecodeString("iVBORwA=")
	require.NoError(t, err)
	require.Equal(t, conformance[1].Blob, blob)

	// An empty text or blob is still sent: each member is required.
	f2, tab2 := newFeature(t, Config{Declared: []Declared{
		{URI: "test://empty-text", Text: text("")}, {URI: "test://empty-blob", Blob: []byte{}}}})
	out, err := callMethod(t, tab2, mcp.EraSession, "resources/read", `{"uri":"test://empty-text"}`)
	require.NoError(t, err)
	require.JSONEq(t, `{"contents":[{"uri":"test://empty-text","mimeType":"text/plain","text":""}]}`, out)
	out, err = callMethod(t, tab2, mcp.EraSession, "resources/read", `{"uri":"test://empty-blob"}`)
	require.NoError(t, err)
	require.JSONEq(t, `{"contents":[{"uri":"test://empty-blob","mimeType":"application/octet-stream","blob":""}]}`, out)
	_ = f2

	// Read is not cacheable, but stamped.
	out, err = callMethod(t, tab, mcp.EraStateless, "resources/read", `{"uri":"test://static-text"}`)
	require.NoError(t, err)
	require.Contains(t, out, `"resultType":"complete"`)
	require.NotContains(t, out, "ttlMs")

	// The uri the transport already read is used as is.
	r := mcptest.Request(mcp.EraSession, `{"uri":"test://static-text"}`)
	r.Meta = mcp.Meta{URI: text("test://static-binary"), OK: true}
	res, err := tab.Call("resources/read", r)
	require.NoError(t, err)
	require.Equal(t, "test://static-binary", res.(*readResult).Contents[0].URI)

	// Read, for other features.
	got, err := f.Read(mcptest.Request(mcp.EraStateless, `{}`), "test://template/9/data")
	require.NoError(t, err)
	require.Equal(t, []mcp.ResourceContents{{URI: "test://template/9/data", MimeType: "application/json",
		Text: `{"id":"9","templateTest":true,"data":"Data for ID: 9"}`}}, got)
	got, err = f.Read(mcptest.Request(mcp.EraSession, `{}`), "test://static-binary")
	require.NoError(t, err)
	require.Equal(t, "iVBORwA=", got[0].Blob)
}

func TestTemplateSegments(t *testing.T) {
	f, _ := newFeature(t, Config{Declared: []Declared{
		{URITemplate: "test://template/{id}/data", Text: text("id={{.id}}")},
		{URITemplate: "test://files/{+path}", Text: text("path={{.path}}")},
		{URITemplate: "test://doc{#frag}", Text: text("frag={{.frag}}")},
	}})
	read := func(uri string) (string, error) {
		got, err := f.Read(mcptest.Request(mcp.EraSession, `{}`), uri)
		if err != nil {
			return "", err
		}
		return got[0].Text, nil
	}
	for _, seg := range []string{"a/b", "a%2Fb", "a%2fb", `a\b`, "a%5Cb", "a%5cb", "a%252Fb", "a%255Cb",
		".", "..", "%2E", "%2e%2E", "%252e%252e", "", "a?b", "a#b"} {
		uri := "test://template/" + seg + "/data"
		_, err := read(uri)
		requireNotFound(t, err, mcp.EraSession, uri)
	}
	for seg, want := range map[string]string{
		"123": "123", "a%20b": "a b", "a,b": "a,b", "a%2Cb": "a,b", "a.b": "a.b", "...": "...",
		"%E2%82%AC": "€", "a%25b": "a%b", "~_-": "~_-",
	} {
		got, err := read("test://template/" + seg + "/data")
		require.NoError(t, err, seg)
		require.Equal(t, "id="+want, got, seg)
	}
	for uri, want := range map[string]string{
		"test://files/a/b/c.txt": "path=a/b/c.txt",
		"test://files/a%2Fb":     "path=a/b",
		"test://files/x":         "path=x",
		"test://doc#sec/1":       "frag=sec/1",
	} {
		got, err := read(uri)
		require.NoError(t, err, uri)
		require.Equal(t, want, got, uri)
	}
	for _, uri := range []string{"test://files/", "test://template/123/data/", "test://template/123", "test://doc",
		"test://template/" + strings.Repeat("1", maxMatched) + "/data"} {
		_, err := read(uri)
		requireNotFound(t, err, mcp.EraSession, uri)
	}
}

func TestFixedBeforeTemplates(t *testing.T) {
	f, _ := newFeature(t, Config{Declared: []Declared{
		{URITemplate: "test://t/{id}", Text: text("first {{.id}}")},
		{URITemplate: "test://{+any}", Text: text("second {{.any}}")},
		{URI: "test://t/fixed", Text: text("fixed")},
	}})
	for uri, want := range map[string]string{"test://t/fixed": "fixed", "test://t/1": "first 1", "test://t/1/2": "second t/1/2"} {
		got, err := f.Read(mcptest.Request(mcp.EraSession, `{}`), uri)
		require.NoError(t, err)
		require.Equal(t, want, got[0].Text, uri)
	}
}

func TestRenderFailureIsInternal(t *testing.T) {
	f, tab := newFeature(t, Config{Declared: []Declared{
		{URITemplate: "test://t/{id}", Text: text(`{{template "missing" .}}`)},
		{URITemplate: "test://u/{id}", Text: text(`{{.idd}}`)},
	}})
	for _, uri := range []string{"test://t/1", "test://u/1"} {
		_, err := callMethod(t, tab, mcp.EraSession, "resources/read", `{"uri":"`+uri+`"}`)
		require.Error(t, err)
		var rerr *mcp.Error
		require.False(t, errors.As(err, &rerr), "not an *mcp.Error: the transport logs it and answers -32603 Internal error")
		_, err = f.Read(mcptest.Request(mcp.EraStateless, `{}`), uri)
		require.Error(t, err)
	}
}

func TestBuiltins(t *testing.T) {
	f, tab := newFeature(t, Config{Declared: conformance})
	f.SetCatalog(petCatalog(t))

	openapiText := readText(t, tab, openapiURI, "application/json")
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(openapiText), &doc))
	require.Equal(t, "3.0.3", doc["openapi"])
	require.Equal(t, "Pets", doc["info"].(map[string]any)["title"])
	sum := sha256.Sum256([]byte(openapiText))

	var about map[string]any
	require.NoError(t, json.Unmarshal([]byte(readText(t, tab, aboutURI, "application/json")), &about))
	require.Equal(t, map[string]any{
		"gateway":           map[string]any{"name": "mcp-gateway", "version": "1.0.0"},
		"protocolRevisions": []any{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"},
		"capabilities": map[string]any{
			"tools":     map[string]any{"count": 1.0},
			"resources": map[string]any{"count": 4.0, "templates": 2.0},
			"prompts":   map[string]any{"count": 2.0},
		},
		"document": map[string]any{"title": "Pets", "version": "1.2.3", "openapi": "3.0.3", "sourceVersion": "3.0.3",
			"contentHash": hex.EncodeToString(sum[:8])},
	}, about)

	var pet map[string]any
	require.NoError(t, json.Unmarshal([]byte(readText(t, tab, "gateway://schema/Pet", "application/json")), &pet))
	require.Equal(t, "object", pet["type"])
	require.Equal(t, map[string]any{"$ref": "#/components/schemas/Owner"}, pet["properties"].(map[string]any)["owner"])
	require.Contains(t, readText(t, tab, "gateway://schema/Owner", "application/json"), `"format":"email"`)

	for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
		for _, uri := range []string{"gateway://schema/Nope", "gateway://schema/Pet/x", "gateway://schema/Pet%2Fx", "gateway://schema/", "gateway://other"} {
			_, err := callMethod(t, tab, era, "resources/read", `{"uri":"`+uri+`"}`)
			requireNotFound(t, err, era, uri)
		}
	}

	values, ok := f.VariableValues(mcptest.Request(mcp.EraSession, ""), schemaTemplate, "name")
	require.True(t, ok)
	require.Equal(t, []string{"Owner", "Pet"}, values)
	values[0] = "changed"
	values, _ = f.VariableValues(mcptest.Request(mcp.EraSession, ""), schemaTemplate, "name")
	require.Equal(t, []string{"Owner", "Pet"}, values, "callers get a copy")

	// A reload: the built-ins describe the new document.
	c := petCatalog(t)
	c.Doc.T.Info.Title = "Pets v2"
	c.Revisions = []string{mcp.Version20260728}
	f.SetCatalog(c)
	require.NoError(t, json.Unmarshal([]byte(readText(t, tab, aboutURI, "application/json")), &about))
	require.Equal(t, "Pets v2", about["document"].(map[string]any)["title"])
	require.Equal(t, []any{"2026-07-28"}, about["protocolRevisions"])
	require.NotEqual(t, hex.EncodeToString(sum[:8]), about["document"].(map[string]any)["contentHash"])
}

func TestVariableValues(t *testing.T) {
	f, _ := newFeature(t, Config{Declared: append([]Declared{
		{URITemplate: "test://files/{+path}", Text: text("x")}}, conformance...)})
	values, ok := f.VariableValues(mcptest.Request(mcp.EraSession, ""), "test://template/{id}/data", "id")
	require.True(t, ok)
	require.Equal(t, []string{"123", "456"}, values)
	values, ok = f.VariableValues(mcptest.Request(mcp.EraSession, ""), "test://files/{+path}", "path")
	require.True(t, ok, "a variable without candidates")
	require.Empty(t, values)
	_, ok = f.VariableValues(mcptest.Request(mcp.EraSession, ""), "test://template/{id}/data", "nope")
	require.False(t, ok)
	_, ok = f.VariableValues(mcptest.Request(mcp.EraSession, ""), "test://template/{other}/data", "other")
	require.False(t, ok)
	_, ok = f.VariableValues(mcptest.Request(mcp.EraSession, ""), "test://static-text", "")
	require.False(t, ok, "a fixed resource is no template")
}

func TestNotFoundPerEra(t *testing.T) {
	f, tab := newFeature(t, Config{Declared: conformance})
	f.SetCatalog(petCatalog(t))
	long := "x://" + strings.Repeat("y", 100)
	for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
		for _, uri := range []string{"x://y", "test://static-text/", "TEST://static-text", long} {
			_, err := callMethod(t, tab, era, "resources/read", `{"uri":"`+uri+`"}`)
			requireNotFound(t, err, era, uri)
			_, err = f.Read(mcptest.Request(era, `{}`), uri)
			requireNotFound(t, err, era, uri)
		}
		for _, params := range []string{"", `{}`, `{"uri":null}`, `{"uri":7}`, `[]`} {
			_, err := callMethod(t, tab, era, "resources/read", params)
			var rerr *mcp.Error
			require.ErrorAs(t, err, &rerr, params)
			require.Equal(t, mcp.CodeInvalidParams, rerr.Code, params)
			require.NotContains(t, rerr.Message, "not found", params)
		}
	}
}

func requireNotFound(t *testing.T, err error, era mcp.Era, uri string) {
	t.Helper()
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr, uri)
	want := mcp.CodeResourceNotFound
	if era == mcp.EraStateless {
		want = mcp.CodeInvalidParams
	}
	require.Equal(t, want, rerr.Code, uri)
	require.Equal(t, map[string]string{"uri": mcp.Truncate(uri)}, rerr.Data, uri)
	require.True(t, strings.HasPrefix(rerr.Message, "Resource not found: "), rerr.Message)
}

// readText reads uri through resources/read and returns its text,
// checking its mimeType.
func readText(t *testing.T, tab mcptest.Table, uri, mimeType string) string {
	t.Helper()
	res, err := tab.Call("resources/read", mcptest.Request(mcp.EraSession, `{"uri":"`+uri+`"}`))
	require.NoError(t, err, uri)
	c := res.(*readResult).Contents
	require.Len(t, c, 1)
	require.Equal(t, uri, c[0].URI)
	require.Equal(t, mimeType, c[0].MIMEType)
	require.NotNil(t, c[0].Text, uri)
	return *c[0].Text
}

// FuzzMatchAgreesWithLibrary checks match against the library's own
// Template.Match (values joined as match joins a list), and that a {name}
// value is always one segment.
func FuzzMatchAgreesWithLibrary(f *testing.F) {
	for _, s := range []string{"123", "a%2Fb", "a%5cb", "%2e%2E", "a,b", "a%252Fb", "%", "%zz", "€", "a/b", "x/b/y/z", "#f", "a+b"} {
		f.Add(s)
	}
	var tmpls []*uriTemplate
	for _, raw := range []string{"test://t/{id}/d", "test://f/{+path}", "test://doc{#frag}", "test://a/{x}/b/{+y}"} {
		tmpl, err := parseTemplate(raw)
		require.NoError(f, err)
		tmpls = append(tmpls, tmpl)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tmpl := range tmpls {
			uri := tmpl.prefix + s
			if tmpl.tmpl.Raw() == "test://t/{id}/d" {
				uri += "/d"
			}
			vars, ok := tmpl.match(uri)
			lib := tmpl.tmpl.Match(uri)
			libOK := lib != nil
			for _, name := range tmpl.vars {
				v := strings.Join(lib.Get(name).V, ",")
				if v == "" || tmpl.segment[name] && !oneSegment(v) {
					libOK = false
				}
				if ok {
					require.Equal(t, v, vars[name], "%s %q", tmpl.tmpl.Raw(), uri)
				}
			}
			require.Equal(t, libOK, ok, "%s %q", tmpl.tmpl.Raw(), uri)
			for name, v := range vars {
				if tmpl.segment[name] {
					require.NotContains(t, v, "/")
					require.NotContains(t, v, `\`)
				}
			}
		}
	})
}

// The built-ins that show the whole document are for callers that may use
// every operation: to others they are neither listed nor read.
func TestWholeDocumentNeedsEveryOperation(t *testing.T) {
	allowed := false
	f, err := New(Config{}, Deps{Permits: func(_ *mcp.Request, name string) bool {
		return name != AllOperations || allowed
	}})
	require.NoError(t, err)
	tab := mcptest.Table{}
	f.Register(tab)
	f.SetCatalog(petCatalog(t))

	listed := func() (uris, templates []string) {
		out, err := callMethod(t, tab, mcp.EraSession, "resources/list", "")
		require.NoError(t, err)
		var l struct{ Resources []struct{ URI string } }
		require.NoError(t, json.Unmarshal([]byte(out), &l))
		for _, r := range l.Resources {
			uris = append(uris, r.URI)
		}
		out, err = callMethod(t, tab, mcp.EraSession, "resources/templates/list", "")
		require.NoError(t, err)
		var tl struct {
			ResourceTemplates []struct{ URITemplate string }
		}
		require.NoError(t, json.Unmarshal([]byte(out), &tl))
		for _, r := range tl.ResourceTemplates {
			templates = append(templates, r.URITemplate)
		}
		return uris, templates
	}
	uris, templates := listed()
	require.Equal(t, []string{aboutURI}, uris)
	require.Empty(t, templates)
	for _, uri := range []string{openapiURI, "gateway://schema/Pet"} {
		_, err := callMethod(t, tab, mcp.EraSession, "resources/read", `{"uri":"`+uri+`"}`)
		requireNotFound(t, err, mcp.EraSession, uri)
		_, _, err = f.Known(mcptest.Request(mcp.EraSession, ""), uri)
		require.Error(t, err, uri)
	}

	allowed = true
	uris, templates = listed()
	require.Equal(t, []string{aboutURI, openapiURI}, uris)
	require.Equal(t, []string{schemaTemplate}, templates)
	_, err = callMethod(t, tab, mcp.EraSession, "resources/read", `{"uri":"gateway://schema/Pet"}`)
	require.NoError(t, err)
}
