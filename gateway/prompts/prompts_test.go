package prompts

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp/mcptest"
)

func ptr(s string) *string { return &s }

func text(role, s string) Message { return Message{Role: role, Text: ptr(s)} }

// feature registers a feature made from cfg and deps on a fresh table.
func feature(t *testing.T, cfg Config, deps Deps) (*Feature, mcptest.Table) {
	t.Helper()
	f, err := New(cfg, deps)
	require.NoError(t, err)
	tab := mcptest.Table{}
	f.Register(tab)
	return f, tab
}

// wire is v as the transport encodes it.
func wire(t *testing.T, v any) string {
	t.Helper()
	b, err := mcp.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func requireInvalidParams(t *testing.T, err error, message string) {
	t.Helper()
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, mcp.CodeInvalidParams, rerr.Code)
	require.Equal(t, message, rerr.Message)
}

func TestNewValidation(t *testing.T) {
	ok := []Message{text("user", "hi")}
	png := &Media{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"}
	cases := []struct {
		name     string
		declared []Declared
		err      string
	}{
		{"no name", []Declared{{Messages: ok}}, "prompts[0]: needs a name"},
		{"twice", []Declared{{Name: "p", Messages: ok}, {Name: "p", Messages: ok}}, `prompt "p": declared twice`},
		{"no messages", []Declared{{Name: "p"}}, `prompt "p": needs at least one message`},
		{"bad role", []Declared{{Name: "p", Messages: []Message{ok[0], text("system", "x")}}},
			`prompt "p": messages[1]: role must be "user" or "assistant", not "system"`},
		{"no content", []Declared{{Name: "p", Messages: []Message{{Role: "user"}}}},
			`prompt "p": messages[0]: needs exactly one of text, resource, image, audio and operation`},
		{"two contents", []Declared{{Name: "p", Messages: []Message{{Role: "user", Text: ptr("x"), Image: png}}}},
			`prompt "p": messages[0]: needs exactly one of text, resource, image, audio and operation`},
		{"bad template", []Declared{{Name: "p", Messages: []Message{text("user", "{{.a")}}},
			`prompt "p": messages[0]: template: text:1: unclosed action`},
		{"bad resource template", []Declared{{Name: "p", Messages: []Message{{Role: "user", ResourceURI: "x://{{if}}"}}}},
			`prompt "p": messages[0]: template: resource:1: missing value for if`},
		{"undeclared field", []Declared{{Name: "p", Arguments: []Argument{{Name: "arg1"}},
			Messages: []Message{text("user", "{{.arg1}} {{if .arg1}}{{.arg}}{{end}}")}}},
			`prompt "p": messages[0]: template names "arg", which is not an argument`},
		{"undeclared root in range", []Declared{{Name: "p", Arguments: []Argument{{Name: "a"}},
			Messages: []Message{text("user", "{{range .a}}{{.x}}{{$.b}}{{end}}")}}},
			`prompt "p": messages[0]: template names "b", which is not an argument`},
		{"undeclared in resource URI", []Declared{{Name: "p", Messages: []Message{{Role: "user", ResourceURI: "x://{{.id}}"}}}},
			`prompt "p": messages[0]: template names "id", which is not an argument`},
		{"argument without name", []Declared{{Name: "p", Arguments: []Argument{{Description: "d"}}, Messages: ok}},
			`prompt "p": arguments[0]: needs a name`},
		{"argument twice", []Declared{{Name: "p", Arguments: []Argument{{Name: "a"}, {Name: "a"}}, Messages: ok}},
			`prompt "p": argument "a": declared twice`},
		{"image without MIME type", []Declared{{Name: "p", Messages: []Message{{Role: "user", Image: &Media{Data: []byte{1}}}}}},
			`prompt "p": messages[0]: image needs a MIME type`},
		{"audio without data", []Declared{{Name: "p", Messages: []Message{{Role: "user", Audio: &Media{MIMEType: "audio/wav"}}}}},
			`prompt "p": messages[0]: audio has no data`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Config{Declared: tc.declared}, Deps{})
			require.EqualError(t, err, tc.err)
		})
	}

	t.Run("valid", func(t *testing.T) {
		_, err := New(Config{Declared: []Declared{{Name: "p", Arguments: []Argument{{Name: "a"}, {Name: "b-c"}},
			Messages: []Message{
				text("user", ""), // an empty text is a text
				text("assistant", `{{with .a}}{{.}}{{end}}{{range $i, $c := .a}}{{$c}}{{end}}{{index . "b-c"}}{{$.a}}{{/* x */}}`),
				{Role: "user", ResourceURI: "x://{{.a}}"},
				{Role: "user", Image: png},
			}}}}, Deps{})
		require.NoError(t, err)
	})
}

func TestEmptyList(t *testing.T) {
	_, tab := feature(t, Config{}, Deps{})
	res, err := tab.Call("prompts/list", mcptest.Request(mcp.EraSession, ""))
	require.NoError(t, err)
	require.JSONEq(t, `{"prompts":[]}`, wire(t, res))

	_, err = tab.Call("prompts/get", mcptest.Request(mcp.EraStateless, `{"name":"p"}`))
	requireInvalidParams(t, err, `Unknown prompt: "p"`)
}

func TestListPagination(t *testing.T) {
	var declared []Declared
	for i := range 5 {
		declared = append(declared, Declared{Name: fmt.Sprintf("p%d", i), Description: "d", Messages: []Message{text("user", "x")}})
	}
	declared[1].Title = "Second"
	declared[1].Arguments = []Argument{{Name: "a", Description: "first", Required: true, Values: []string{"v"}}, {Name: "b"}}
	_, tab := feature(t, Config{PageSize: 2, Declared: declared}, Deps{})

	var names []string
	cursor := ""
	for page := 0; ; page++ {
		params := ""
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		res, err := tab.Call("prompts/list", mcptest.Request(mcp.EraSession, params))
		require.NoError(t, err)
		lr := res.(*listResult)
		require.LessOrEqual(t, len(lr.Prompts), 2)
		for _, p := range lr.Prompts {
			names = append(names, p.Name)
		}
		if page == 0 {
			require.JSONEq(t, fmt.Sprintf(`{"prompts":[
				{"name":"p0","description":"d"},
				{"name":"p1","title":"Second","description":"d","arguments":[
					{"name":"a","description":"first","required":true},{"name":"b","required":false}]}],
				"nextCursor":%q}`, lr.NextCursor), wire(t, res))
		}
		if lr.NextCursor == "" {
			break
		}
		cursor = lr.NextCursor
	}
	require.Equal(t, []string{"p0", "p1", "p2", "p3", "p4"}, names)

	// A cursor this list never issued, or one of another prompt set.
	_, other := feature(t, Config{PageSize: 2, Declared: declared[1:]}, Deps{})
	res, err := other.Call("prompts/list", mcptest.Request(mcp.EraSession, ""))
	require.NoError(t, err)
	for _, c := range []string{"nope", res.(*listResult).NextCursor, mcp.EncodeCursor("x", 1)} {
		_, err = tab.Call("prompts/list", mcptest.Request(mcp.EraSession, fmt.Sprintf(`{"cursor":%q}`, c)))
		requireInvalidParams(t, err, mcp.ErrBadCursor().Message)
	}
}

func TestGetArguments(t *testing.T) {
	_, tab := feature(t, Config{Declared: []Declared{{
		Name: "greet", Description: "Greets someone",
		Arguments: []Argument{{Name: "who", Required: true}, {Name: "tone"}},
		Messages: []Message{
			text("user", "Say hello to {{.who}}{{if .tone}} in a {{.tone}} tone{{end}}; tone={{.tone}}."),
			text("assistant", "<b>{{.who}}</b> & {{index . \"tone\"}}"),
		},
	}}}, Deps{})
	get := func(params string) (any, error) {
		return tab.Call("prompts/get", mcptest.Request(mcp.EraSession, params))
	}

	res, err := get(`{"name":"greet","arguments":{"who":"Ada","tone":"warm"}}`)
	require.NoError(t, err)
	require.JSONEq(t, `{"description":"Greets someone","messages":[
		{"role":"user","content":{"type":"text","text":"Say hello to Ada in a warm tone; tone=warm."}},
		{"role":"assistant","content":{"type":"text","text":"<b>Ada</b> & warm"}}]}`, wire(t, res))

	// A missing optional argument renders as "", never "<no value>".
	res, err = get(`{"name":"greet","arguments":{"who":"Ada"}}`)
	require.NoError(t, err)
	require.JSONEq(t, `{"description":"Greets someone","messages":[
		{"role":"user","content":{"type":"text","text":"Say hello to Ada; tone=."}},
		{"role":"assistant","content":{"type":"text","text":"<b>Ada</b> & "}}]}`, wire(t, res))

	errs := []struct{ params, message string }{
		{`{"name":"greet"}`, `Invalid params for prompts/get: prompt "greet" requires argument "who"`},
		{`{"name":"greet","arguments":{"tone":"x"}}`, `Invalid params for prompts/get: prompt "greet" requires argument "who"`},
		{`{"name":"greet","arguments":{"who":"a","zz":"1","mood":"2"}}`, `Invalid params for prompts/get: prompt "greet" has no argument "mood"`},
		{`{"name":"greet","arguments":{"who":1}}`, `Invalid params for prompts/get: arguments must be an object of strings`},
		{`{"name":"greet","arguments":["who"]}`, `Invalid params for prompts/get: arguments must be an object of strings`},
		{`{"name":"nope","arguments":{"who":"a"}}`, `Unknown prompt: "nope"`},
		{`{"arguments":{}}`, `Invalid params for prompts/get: name is required`},
		{`{"name":7}`, `Invalid params for prompts/get: "name" must be a string`},
		{`[]`, `Invalid params for prompts/get: params must be an object`},
	}
	for _, e := range errs {
		t.Run(e.params, func(t *testing.T) {
			_, err := get(e.params)
			requireInvalidParams(t, err, e.message)
		})
	}
}

// The transport has already read name and arguments (Meta.OK): the
// handler uses them rather than decoding params again; otherwise it
// fills Meta in for the middleware.
func TestGetUsesMeta(t *testing.T) {
	_, tab := feature(t, Config{Declared: []Declared{{Name: "p", Arguments: []Argument{{Name: "a"}},
		Messages: []Message{text("user", "a={{.a}}")}}}}, Deps{})
	r := mcptest.Request(mcp.EraSession, `{"name":"ignored"}`)
	r.Meta = mcp.Meta{Name: ptr("p"), Arguments: json.RawMessage(`{"a":"1"}`), OK: true}
	res, err := tab.Call("prompts/get", r)
	require.NoError(t, err)
	require.Equal(t, "a=1", res.(*getResult).Messages[0].Content.(*textContent).Text)

	r = mcptest.Request(mcp.EraSession, `{"name":"p","arguments":{"a":"2"}}`)
	_, err = tab.Call("prompts/get", r)
	require.NoError(t, err)
	require.Equal(t, "p", *r.Meta.Name)
	require.JSONEq(t, `{"a":"2"}`, string(r.Meta.Arguments))
}

func TestGetMedia(t *testing.T) {
	_, tab := feature(t, Config{Declared: []Declared{{Name: "m", Messages: []Message{
		{Role: "user", Image: &Media{Data: []byte("png!"), MIMEType: "image/png"}},
		{Role: "assistant", Audio: &Media{Data: []byte{0, 1, 2}, MIMEType: "audio/wav"}},
	}}}}, Deps{})
	res, err := tab.Call("prompts/get", mcptest.Request(mcp.EraSession, `{"name":"m"}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"messages":[
		{"role":"user","content":{"type":"image","data":"cG5nIQ==","mimeType":"image/png"}},
		{"role":"assistant","content":{"type":"audio","data":"AAEC","mimeType":"audio/wav"}}]}`, wire(t, res))
}

// fakeReader is a Deps.ReadResource over a fixed map, recording calls.
type fakeReader struct {
	contents map[string][]mcp.ResourceContents
	calls    []string // era label and URI
}

func (fr *fakeReader) read(r *mcp.Request, uri string) ([]mcp.ResourceContents, error) {
	if r == nil || r.Ctx == nil {
		return nil, errors.New("no request")
	}
	fr.calls = append(fr.calls, r.Era.Label()+" "+uri)
	c, ok := fr.contents[uri]
	if !ok {
		return nil, mcp.NewError(mcp.CodeResourceNotFound, "Resource not found: %s", uri)
	}
	return c, nil
}

func TestGetEmbeddedResource(t *testing.T) {
	fr := &fakeReader{contents: map[string][]mcp.ResourceContents{
		"docs://guide":  {{URI: "docs://guide", MimeType: "text/markdown", Text: "# Guide"}},
		"docs://logo":   {{URI: "docs://logo", MimeType: "image/png", Blob: "AAEC"}},
		"docs://two":    {{URI: "docs://two/a", Text: "a"}, {URI: "docs://two/b", Text: ""}},
		"docs://hollow": {},
	}}
	declared := []Declared{{Name: "embed", Arguments: []Argument{{Name: "doc", Required: true}},
		Messages: []Message{
			{Role: "user", ResourceURI: "docs://{{.doc}}"},
			text("user", "Please read {{.doc}}."),
		}}}
	_, tab := feature(t, Config{Declared: declared}, Deps{ReadResource: fr.read})
	get := func(era mcp.Era, doc string) (any, error) {
		return tab.Call("prompts/get", mcptest.Request(era, fmt.Sprintf(`{"name":"embed","arguments":{"doc":%q}}`, doc)))
	}

	res, err := get(mcp.EraSession, "guide")
	require.NoError(t, err)
	require.JSONEq(t, `{"messages":[
		{"role":"user","content":{"type":"resource","resource":{"uri":"docs://guide","mimeType":"text/markdown","text":"# Guide"}}},
		{"role":"user","content":{"type":"text","text":"Please read guide."}}]}`, wire(t, res))

	res, err = get(mcp.EraStateless, "logo")
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"resource","resource":{"uri":"docs://logo","mimeType":"image/png","blob":"AAEC"}}`,
		wire(t, res.(*getResult).Messages[0].Content))

	// One message per content read; an empty text is still sent.
	res, err = get(mcp.EraSession, "two")
	require.NoError(t, err)
	require.JSONEq(t, `{"messages":[
		{"role":"user","content":{"type":"resource","resource":{"uri":"docs://two/a","text":"a"}}},
		{"role":"user","content":{"type":"resource","resource":{"uri":"docs://two/b","text":""}}},
		{"role":"user","content":{"type":"text","text":"Please read two."}}]}`, wire(t, res))
	require.Equal(t, []string{"session docs://guide", "2026-07-28 docs://logo", "session docs://two"}, fr.calls)

	// The reader's error is the answer as is.
	_, err = get(mcp.EraSession, "missing")
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, mcp.CodeResourceNotFound, rerr.Code)
	require.Equal(t, "Resource not found: docs://missing", rerr.Message)

	// A read with nothing in it, or no reader at all, is an internal error
	// (not an *mcp.Error: the transport logs it and sends -32603).
	_, err = get(mcp.EraSession, "hollow")
	require.EqualError(t, err, `prompt "embed": messages[0]: resource "docs://hollow" has no contents`)
	require.False(t, errors.As(err, &rerr))

	_, noReader := feature(t, Config{Declared: declared}, Deps{})
	_, err = noReader.Call("prompts/get", mcptest.Request(mcp.EraSession, `{"name":"embed","arguments":{"doc":"guide"}}`))
	require.EqualError(t, err, `prompt "embed": messages[0] embeds a resource, but the gateway has no resource reader`)
	require.False(t, errors.As(err, &rerr))
}

func TestEraStamping(t *testing.T) {
	_, tab := feature(t, Config{Declared: []Declared{{Name: "p", Messages: []Message{text("user", "x")}}}}, Deps{})
	for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
		list := mcptest.Request(era, "")
		list.Stamp.ListTTL = 5000_000_000 // 5s
		list.Stamp.ServerMeta = map[string]any{"k": "v"}
		res, err := tab.Call("prompts/list", list)
		require.NoError(t, err)
		lm := res.(*listResult).ResultMeta

		get := mcptest.Request(era, `{"name":"p"}`)
		get.Stamp = list.Stamp
		res, err = tab.Call("prompts/get", get)
		require.NoError(t, err)
		gm := res.(*getResult).ResultMeta

		if era == mcp.EraSession {
			require.Equal(t, mcp.ResultMeta{}, lm)
			require.Equal(t, mcp.ResultMeta{}, gm)
			continue
		}
		require.Equal(t, "complete", lm.ResultType)
		require.Equal(t, int64(5000), *lm.TTLMs)
		require.Equal(t, "public", lm.CacheScope)
		require.Equal(t, map[string]any{"k": "v"}, lm.Meta)
		require.Equal(t, "complete", gm.ResultType)
		require.Nil(t, gm.TTLMs)
		require.Empty(t, gm.CacheScope)
		require.JSONEq(t, `{"messages":[{"role":"user","content":{"type":"text","text":"x"}}],"resultType":"complete","_meta":{"k":"v"}}`, wire(t, res))
	}
}

func TestArgumentValues(t *testing.T) {
	vals := []string{"red", "green"}
	f, _ := feature(t, Config{Declared: []Declared{{Name: "p",
		Arguments: []Argument{{Name: "color", Values: vals}, {Name: "free"}},
		Messages:  []Message{text("user", "{{.color}}")}}}}, Deps{})
	vals[0] = "changed" // the feature keeps its own copy

	got, ok, _ := f.ArgumentValues(mcptest.Request(mcp.EraSession, ""), "p", "color", nil)
	require.True(t, ok)
	require.Equal(t, []string{"red", "green"}, got)
	got, ok, _ = f.ArgumentValues(mcptest.Request(mcp.EraSession, ""), "p", "free", nil)
	require.True(t, ok)
	require.Empty(t, got)
	_, ok, _ = f.ArgumentValues(mcptest.Request(mcp.EraSession, ""), "p", "nope", nil)
	require.False(t, ok)
	_, ok, _ = f.ArgumentValues(mcptest.Request(mcp.EraSession, ""), "nope", "color", nil)
	require.False(t, ok)
}

// The prompts the conformance suite gets, declared as its configuration
// declares them, and what the suite checks of each.
func TestConformancePrompts(t *testing.T) {
	fr := &fakeReader{contents: map[string][]mcp.ResourceContents{
		"test://example-resource": {{URI: "test://example-resource", MimeType: "text/plain", Text: "Embedded resource content for testing."}},
	}}
	_, tab := feature(t, Config{Declared: []Declared{
		{Name: "test_simple_prompt", Description: "A simple prompt without arguments",
			Messages: []Message{text("user", "This is a simple prompt for testing.")}},
		{Name: "test_prompt_with_arguments", Description: "A prompt with required arguments",
			Arguments: []Argument{{Name: "arg1", Description: "First test argument", Required: true},
				{Name: "arg2", Description: "Second test argument", Required: true}},
			Messages: []Message{text("user", "Prompt with arguments: arg1='{{.arg1}}', arg2='{{.arg2}}'")}},
		{Name: "test_prompt_with_embedded_resource", Description: "A prompt that includes an embedded resource",
			Arguments: []Argument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
			Messages: []Message{{Role: "user", ResourceURI: "{{.resourceUri}}"},
				text("user", "Please process the embedded resource above.")}},
		{Name: "test_prompt_with_image", Description: "A prompt that includes an image",
			Messages: []Message{{Role: "user", Image: &Media{Data: []byte("\x89PNG\r\n\x1a\n"), MIMEType: "image/png"}},
				text("user", "Please analyze the image above.")}},
	}}, Deps{ReadResource: fr.read})
	call := func(method, params string) map[string]any {
		t.Helper()
		res, err := tab.Call(method, mcptest.Request(mcp.EraSession, params))
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(wire(t, res)), &m))
		return m
	}
	messages := func(m map[string]any) []map[string]any {
		var out []map[string]any
		for _, msg := range m["messages"].([]any) {
			out = append(out, msg.(map[string]any))
		}
		require.NotEmpty(t, out)
		return out
	}

	// prompts-list: every prompt has a name and a description.
	for _, p := range call("prompts/list", "")["prompts"].([]any) {
		require.NotEmpty(t, p.(map[string]any)["name"])
		require.NotEmpty(t, p.(map[string]any)["description"])
	}
	// prompts-get-simple: messages non-empty, each with a role and content.
	for _, msg := range messages(call("prompts/get", `{"name":"test_simple_prompt"}`)) {
		require.NotEmpty(t, msg["role"])
		require.NotEmpty(t, msg["content"])
	}
	// prompts-get-with-args: both values appear in the messages.
	got := wire(t, messages(call("prompts/get", `{"name":"test_prompt_with_arguments","arguments":{"arg1":"testValue1","arg2":"testValue2"}}`)))
	require.Contains(t, got, "testValue1")
	require.Contains(t, got, "testValue2")
	// prompts-get-embedded-resource: some content has type resource.
	msgs := messages(call("prompts/get", `{"name":"test_prompt_with_embedded_resource","arguments":{"resourceUri":"test://example-resource"}}`))
	require.Equal(t, "resource", msgs[0]["content"].(map[string]any)["type"])
	require.Equal(t, []string{"session test://example-resource"}, fr.calls)
	// prompts-get-with-image: some content is an image with data and mimeType.
	img := messages(call("prompts/get", `{"name":"test_prompt_with_image"}`))[0]["content"].(map[string]any)
	require.Equal(t, "image", img["type"])
	require.NotEmpty(t, img["data"])
	require.NotEmpty(t, img["mimeType"])
}
