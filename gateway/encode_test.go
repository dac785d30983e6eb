package gateway

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// The hand-written encoder must say exactly what encoding/json says.
func TestCallResponseEncodingMatchesEncodingJSON(t *testing.T) {
	ttl := int64(5)
	cases := map[string]*callToolResult{
		"json": {Result: &toolgen.Result{
			Content:           []toolgen.Content{{Type: "text", Text: `{"a": "x\ny", "b": [1, 2.50, -3e2]}`}},
			StructuredContent: json.RawMessage("{\"a\": \"x\\ny\",\n \"b\": [1, 2.50, -3e2]}"),
		}},
		"awkward text": {Result: &toolgen.Result{
			Content: []toolgen.Content{{Type: "text", Text: "quote\" back\\slash \t tab \x01 ctl <html>&amp; \u2028\u2029 é 😀 bad:\xff\xfe end"}},
			IsError: true,
		}},
		"all content kinds": {Result: &toolgen.Result{Content: []toolgen.Content{
			{Type: "image", Data: "aGVsbG8=", MimeType: "image/png"},
			{Type: "audio", Data: "UklGRg==", MimeType: "audio/wav"},
			{Type: "resource", Resource: &toolgen.ResourceContents{URI: "http://b/x?y=1&z=<2>", MimeType: "application/pdf", Blob: "JVBERg=="}},
			{Type: "resource", Resource: &toolgen.ResourceContents{URI: "http://b/t", Text: "line1\nline2"}},
		}}},
		"empty": {Result: &toolgen.Result{Content: []toolgen.Content{}}},
		"stateless meta": {Result: &toolgen.Result{Content: []toolgen.Content{{Type: "text", Text: "ok"}}},
			resultMeta: resultMeta{ResultType: "complete", Meta: map[string]any{"io.modelcontextprotocol/serverInfo": implementation{Name: "gw", Version: "1"}}}},
		"cache hints": {Result: &toolgen.Result{Content: []toolgen.Content{{Type: "text", Text: "ok"}}},
			resultMeta: resultMeta{ResultType: "complete", TTLMs: &ttl, CacheScope: "public"}},
	}
	for name, res := range cases {
		t.Run(name, func(t *testing.T) {
			for _, id := range []string{`1`, `"req-7"`, `-2.5`} {
				got, err := appendResponse(nil, json.RawMessage(id), res, nil)
				require.NoError(t, err)
				want, err := json.Marshal(response{JSONRPC: "2.0", ID: json.RawMessage(id), Result: res})
				require.NoError(t, err)
				require.Equal(t, string(want), string(got))
				require.False(t, bytes.ContainsAny(got, "\r\n"), "SSE data lines cannot hold line breaks")
			}
		})
	}
}

// structuredContent passes through as the backend sent it (compacted when it
// spans lines); encoding/json would also escape <, > and & inside it, which
// changes the bytes but not the value.
func TestCallResponseKeepsStructuredContentValue(t *testing.T) {
	res := &callToolResult{Result: &toolgen.Result{
		Content:           []toolgen.Content{{Type: "text", Text: `{"html":"<b>&</b>"}`}},
		StructuredContent: json.RawMessage("{\n \"html\": \"<b>&</b>\"\n}"),
	}}
	got, err := appendResponse(nil, json.RawMessage(`1`), res, nil)
	require.NoError(t, err)
	want, err := json.Marshal(response{JSONRPC: "2.0", ID: json.RawMessage(`1`), Result: res})
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
	require.False(t, bytes.ContainsAny(got, "\r\n"))
}
