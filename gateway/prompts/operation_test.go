package prompts

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp/mcptest"
)

// fakeTools is a Deps.CallTool recording each call and answering with
// result (a text result when nil) or err.
type fakeTools struct {
	result *mcp.CallToolResult
	err    error
	calls  []toolCall
}

type toolCall struct {
	name, caller string // caller: the request's era and identity
	args         map[string]string
}

func (ft *fakeTools) call(r *mcp.Request, name string, args map[string]string) (*mcp.CallToolResult, error) {
	if r == nil || r.Ctx == nil {
		return nil, errors.New("no request")
	}
	ft.calls = append(ft.calls, toolCall{name: name, caller: r.Era.Label() + " " + r.Identity(), args: maps.Clone(args)})
	if ft.err != nil {
		return nil, ft.err
	}
	if ft.result != nil {
		return ft.result, nil
	}
	return mcp.TextResult("from " + name), nil
}

// orderPrompt embeds the live result of getOrder between two texts.
var orderPrompt = Declared{Name: "order", Description: "Explain an order",
	Arguments: []Argument{{Name: "id", Required: true}, {Name: "verbose"}},
	Messages: []Message{
		text("user", "Explain order {{.id}}:"),
		{Role: "assistant", Operation: &Operation{Name: "getOrder", Arguments: map[string]string{
			"id":    "{{.id}}",
			"note":  "for {{.id}}{{if .verbose}}, verbosely{{end}}",
			"fixed": "x",
			"flag":  "{{.verbose}}",
		}}},
		text("user", "Thanks."),
	}}

func TestGetOperation(t *testing.T) {
	ft := &fakeTools{}
	_, tab := feature(t, Config{Declared: []Declared{orderPrompt}}, Deps{CallTool: ft.call})
	get := func(era mcp.Era, args string) (any, error) {
		return tab.Call("prompts/get", mcptest.Request(era, `{"name":"order","arguments":`+args+`}`))
	}

	// The arguments are rendered over the prompt's; one rendering empty (a
	// missing optional argument) is left out.
	_, err := get(mcp.EraSession, `{"id":"42"}`)
	require.NoError(t, err)
	_, err = get(mcp.EraStateless, `{"id":"7","verbose":"yes"}`)
	require.NoError(t, err)
	require.Equal(t, []toolCall{
		{name: "getOrder", caller: "session addr:", args: map[string]string{"id": "42", "note": "for 42", "fixed": "x"}},
		{name: "getOrder", caller: "2026-07-28 addr:", args: map[string]string{"id": "7", "note": "for 7, verbosely", "fixed": "x", "flag": "yes"}},
	}, ft.calls)

	around := func(content string) string {
		return `{"description":"Explain an order","messages":[
			{"role":"user","content":{"type":"text","text":"Explain order 42:"}},` + content + `,
			{"role":"user","content":{"type":"text","text":"Thanks."}}]}`
	}
	for _, tc := range []struct {
		name   string
		result *mcp.CallToolResult
		want   string
	}{
		{"structured", &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: `{"total": 3}`}},
			StructuredContent: json.RawMessage(`{"total":3}`)},
			`{"role":"assistant","content":{"type":"text","text":"{\"total\":3}"}}`},
		{"text blocks", &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: "one"}, {Type: "text", Text: ""}}},
			`{"role":"assistant","content":{"type":"text","text":"one"}},
			 {"role":"assistant","content":{"type":"text","text":""}}`},
		{"image and audio", &mcp.CallToolResult{Content: []mcp.Content{
			{Type: "image", Data: "iVBORw==", MimeType: "image/png"}, {Type: "audio", Data: "AAEC", MimeType: "audio/wav"}}},
			`{"role":"assistant","content":{"type":"image","data":"iVBORw==","mimeType":"image/png"}},
			 {"role":"assistant","content":{"type":"audio","data":"AAEC","mimeType":"audio/wav"}}`},
		{"embedded resources", &mcp.CallToolResult{Content: []mcp.Content{
			{Type: "resource", Resource: &mcp.ResourceContents{URI: "x://a", MimeType: "text/markdown", Text: "# A"}},
			{Type: "resource", Resource: &mcp.ResourceContents{URI: "x://b", Blob: "AA=="}}}},
			`{"role":"assistant","content":{"type":"resource","resource":{"uri":"x://a","mimeType":"text/markdown","text":"# A"}}},
			 {"role":"assistant","content":{"type":"resource","resource":{"uri":"x://b","blob":"AA=="}}}`},
		{"nothing", &mcp.CallToolResult{}, `{"role":"assistant","content":{"type":"text","text":""}}`},
		{"only unknown blocks", &mcp.CallToolResult{Content: []mcp.Content{{Type: "resource_link"}}},
			`{"role":"assistant","content":{"type":"text","text":""}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft.result = tc.result
			res, err := get(mcp.EraSession, `{"id":"42"}`)
			require.NoError(t, err)
			require.JSONEq(t, around(tc.want), wire(t, res))
		})
	}
}

func TestGetOperationFailures(t *testing.T) {
	ft := &fakeTools{}
	_, tab := feature(t, Config{Declared: []Declared{orderPrompt}}, Deps{CallTool: ft.call})
	get := func(era mcp.Era) error {
		_, err := tab.Call("prompts/get", mcptest.Request(era, `{"name":"order","arguments":{"id":"1"}}`))
		return err
	}

	// A tool error is the prompts/get error, with the tool's text.
	ft.result = mcp.ErrorResult("the backend answered 404 Not Found")
	for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
		var rerr *mcp.Error
		require.ErrorAs(t, get(era), &rerr)
		require.Equal(t, mcp.CodeInternalError, rerr.Code)
		require.Equal(t, `Getting prompt "order" failed: its operation getOrder answered: the backend answered 404 Not Found`, rerr.Message)
		require.Equal(t, map[string]any{"kind": "tool_error"}, rerr.Data)
	}

	// CallTool's own error (a refusal) is the answer as is.
	refusal := mcp.NewError(mcp.CodeInvalidParams, "Forbidden").WithStatus(403)
	ft.err = fmt.Errorf("admit: %w", refusal)
	var rerr *mcp.Error
	require.ErrorAs(t, get(mcp.EraSession), &rerr)
	require.Same(t, refusal, rerr)

	// No tool caller is the gateway's fault: not an *mcp.Error.
	_, noTools := feature(t, Config{Declared: []Declared{orderPrompt}}, Deps{})
	_, err := noTools.Call("prompts/get", mcptest.Request(mcp.EraSession, `{"name":"order","arguments":{"id":"1"}}`))
	require.EqualError(t, err, `prompt "order": messages[1] calls a tool, but the gateway has no tool caller`)
	require.False(t, errors.As(err, &rerr))
}

func TestNewValidatesOperations(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Declared
		err  string
	}{
		{"no name", Declared{Name: "p", Messages: []Message{{Role: "user", Operation: &Operation{}}}},
			`prompt "p": messages[0]: operation needs a name`},
		{"and text", Declared{Name: "p", Messages: []Message{{Role: "user", Text: ptr("x"), Operation: &Operation{Name: "op"}}}},
			`prompt "p": messages[0]: needs exactly one of text, resource, image, audio and operation`},
		{"undeclared argument", Declared{Name: "p", Arguments: []Argument{{Name: "id"}},
			Messages: []Message{{Role: "user", Operation: &Operation{Name: "op", Arguments: map[string]string{"id": "{{.idd}}"}}}}},
			`prompt "p": messages[0]: template names "idd", which is not an argument`},
		{"bad argument template", Declared{Name: "p",
			Messages: []Message{{Role: "user", Operation: &Operation{Name: "op", Arguments: map[string]string{"id": "{{"}}}}},
			`prompt "p": messages[0]: template: operation.arguments.id:1: unclosed action`},
		{"values and valuesFrom", Declared{Name: "p", Arguments: []Argument{{Name: "a", Values: []string{"x"},
			ValuesFrom: &ValuesFrom{Operation: "list", Field: "id"}}}, Messages: []Message{text("user", "x")}},
			`prompt "p": argument "a": values come from a list or from {operation, field}, both named`},
		{"valuesFrom without field", Declared{Name: "p", Arguments: []Argument{{Name: "a",
			ValuesFrom: &ValuesFrom{Operation: "list"}}}, Messages: []Message{text("user", "x")}},
			`prompt "p": argument "a": values come from a list or from {operation, field}, both named`},
		{"valuesFrom without operation", Declared{Name: "p", Arguments: []Argument{{Name: "a",
			ValuesFrom: &ValuesFrom{Field: "id"}}}, Messages: []Message{text("user", "x")}},
			`prompt "p": argument "a": values come from a list or from {operation, field}, both named`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Config{Declared: []Declared{tc.d}}, Deps{})
			require.EqualError(t, err, tc.err)
		})
	}
	_, err := New(Config{Declared: []Declared{orderPrompt}}, Deps{})
	require.NoError(t, err)
}

// pickPrompt's argument "order" takes its candidates from listOrders.
var pickPrompt = Declared{Name: "pick",
	Arguments: []Argument{
		{Name: "customer", Values: []string{"ada", "bob"}},
		{Name: "order", ValuesFrom: &ValuesFrom{Operation: "listOrders", Field: "id"}},
	},
	Messages: []Message{text("user", "{{.customer}} {{.order}}")}}

func TestArgumentValuesFrom(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result *mcp.CallToolResult
		want   []string
	}{
		{"array of objects", &mcp.CallToolResult{StructuredContent: json.RawMessage(
			`[{"id":"a"},{"id":"b"},{"id":"a"},{"name":"x"},{"id":3},{"id":2.5},{"id":true},{"id":null},{"id":""},{"id":{"x":1}},{"id":["y"]}]`)},
			[]string{"a", "b", "3", "2.5", "true"}},
		{"wrapped", &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"total":2,"items":[{"id":"o-1"},{"id":"o-2"}]}`)},
			[]string{"o-1", "o-2"}},
		{"the first array member by name", &mcp.CallToolResult{StructuredContent: json.RawMessage(
			`{"z":[{"id":"late"}],"result":[{"id":"r"}],"meta":{"id":"m"}}`)},
			[]string{"r"}},
		{"scalars", &mcp.CallToolResult{StructuredContent: json.RawMessage(`["x","y","x",1.5,false,null,""]`)},
			[]string{"x", "y", "1.5", "false"}},
		{"large integers stay whole", &mcp.CallToolResult{StructuredContent: json.RawMessage(
			`[{"id":9007199254740993},{"id":12345678901234567890},{"id":1e21}]`)},
			[]string{"9007199254740993", "12345678901234567890", "1e21"}},
		{"JSON text", mcp.TextResult(`[{"id":"t1"},{"id":"t2"}]`), []string{"t1", "t2"}},
		{"plain text", mcp.TextResult("no JSON here"), nil},
		{"two values", mcp.TextResult(`[{"id":"a"}] [{"id":"b"}]`), nil},
		{"an object without arrays", &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"id":"solo"}`)}, nil},
		{"a scalar", &mcp.CallToolResult{StructuredContent: json.RawMessage(`"a"`)}, nil},
		{"nothing", &mcp.CallToolResult{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTools{result: tc.result}
			f, _ := feature(t, Config{Declared: []Declared{pickPrompt}}, Deps{CallTool: ft.call})
			got, ok, err := f.ArgumentValues(mcptest.Request(mcp.EraSession, ""), "pick", "order", nil)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, tc.want, got)
			require.Len(t, ft.calls, 1)
		})
	}
}

func TestArgumentValuesFromCache(t *testing.T) {
	ft := &fakeTools{result: &mcp.CallToolResult{StructuredContent: json.RawMessage(`[{"id":"o-1"}]`)}}
	f, _ := feature(t, Config{Declared: []Declared{pickPrompt}}, Deps{CallTool: ft.call})
	values := func(r *mcp.Request, chosen map[string]string) []string {
		t.Helper()
		got, ok, err := f.ArgumentValues(r, "pick", "order", chosen)
		require.NoError(t, err)
		require.True(t, ok)
		return got
	}
	anon := mcptest.Request(mcp.EraSession, "")
	ada := map[string]string{"customer": "ada"}

	require.Equal(t, []string{"o-1"}, values(anon, ada))
	require.Equal(t, []toolCall{{name: "listOrders", caller: "session addr:", args: ada}}, ft.calls, "called with the chosen arguments")

	// Within the TTL the same caller and arguments are answered from the
	// cache, whatever the era or map.
	ft.result = &mcp.CallToolResult{StructuredContent: json.RawMessage(`[{"id":"o-2"}]`)}
	require.Equal(t, []string{"o-1"}, values(anon, map[string]string{"customer": "ada"}))
	require.Equal(t, []string{"o-1"}, values(mcptest.Request(mcp.EraStateless, ""), ada))
	require.Len(t, ft.calls, 1)

	// Other arguments, or another caller, are another call.
	require.Equal(t, []string{"o-2"}, values(anon, map[string]string{"customer": "bob"}))
	require.Equal(t, []string{"o-2"}, values(anon, nil))
	require.Equal(t, []string{"o-2"}, values(anon, map[string]string{"customer": "ada", "order": "o"}))
	alice := mcptest.Request(mcp.EraSession, "")
	alice.Principal = &mcp.Principal{Subject: "alice"}
	require.Equal(t, []string{"o-2"}, values(alice, ada))
	other := mcptest.Request(mcp.EraSession, "")
	other.Client = "192.0.2.1"
	require.Equal(t, []string{"o-2"}, values(other, ada))
	require.Len(t, ft.calls, 6)
	require.Equal(t, "session sub:alice", ft.calls[4].caller)
	require.Equal(t, "session addr:192.0.2.1", ft.calls[5].caller)

	// A name and value that would run together in a naive key are not
	// the same arguments.
	require.Equal(t, []string{"o-2"}, values(anon, map[string]string{"customer": "ada\x00order"}))
	require.Len(t, ft.calls, 7)

	// Declared values never call the tool.
	got, ok, err := f.ArgumentValues(anon, "pick", "customer", nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []string{"ada", "bob"}, got)
	require.Len(t, ft.calls, 7)
}

func TestArgumentValuesFromFailures(t *testing.T) {
	ft := &fakeTools{result: mcp.ErrorResult("the backend answered 500 Internal Server Error")}
	f, _ := feature(t, Config{Declared: []Declared{pickPrompt}}, Deps{CallTool: ft.call})
	r := mcptest.Request(mcp.EraSession, "")

	_, ok, err := f.ArgumentValues(r, "pick", "order", nil)
	require.True(t, ok)
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, mcp.CodeInternalError, rerr.Code)
	require.Equal(t, "Completing failed: the operation listOrders answered: the backend answered 500 Internal Server Error", rerr.Message)
	require.Equal(t, map[string]any{"kind": "tool_error"}, rerr.Data)

	// A failure is not cached.
	ft.result = &mcp.CallToolResult{StructuredContent: json.RawMessage(`["o-1"]`)}
	got, _, err := f.ArgumentValues(r, "pick", "order", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"o-1"}, got)
	require.Len(t, ft.calls, 2)

	refusal := mcp.NewError(mcp.CodeInvalidParams, "Forbidden")
	ft.err = refusal
	_, _, err = f.ArgumentValues(r, "pick", "order", map[string]string{"customer": "x"})
	require.ErrorAs(t, err, &rerr)
	require.Same(t, refusal, rerr)

	noTools, _ := feature(t, Config{Declared: []Declared{pickPrompt}}, Deps{})
	_, ok, err = noTools.ArgumentValues(r, "pick", "order", nil)
	require.True(t, ok)
	require.ErrorContains(t, err, "no tool caller")
	require.False(t, errors.As(err, &rerr))
}

// The cache holds at most maxCached entries.
func TestArgumentValuesFromCacheBound(t *testing.T) {
	ft := &fakeTools{result: &mcp.CallToolResult{StructuredContent: json.RawMessage(`["v"]`)}}
	f, _ := feature(t, Config{Declared: []Declared{pickPrompt}}, Deps{CallTool: ft.call})
	r := mcptest.Request(mcp.EraSession, "")
	for i := range maxCached + 10 {
		got, _, err := f.ArgumentValues(r, "pick", "order", map[string]string{"customer": fmt.Sprint(i)})
		require.NoError(t, err)
		require.Equal(t, []string{"v"}, got)
	}
	require.Len(t, ft.calls, maxCached+10)
	f.values.mu.Lock()
	n := len(f.values.entries)
	f.values.mu.Unlock()
	require.LessOrEqual(t, n, maxCached)
	// The newest is kept.
	_, _, err := f.ArgumentValues(r, "pick", "order", map[string]string{"customer": fmt.Sprint(maxCached + 9)})
	require.NoError(t, err)
	require.Len(t, ft.calls, maxCached+10)
}
