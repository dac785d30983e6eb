package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hand-written encoder must say exactly what encoding/json says.
func TestCallResponseEncodingMatchesEncodingJSON(t *testing.T) {
	ttl := int64(5)
	cases := map[string]*CallToolResult{
		"json": {
			Content:           []Content{{Type: "text", Text: `{"a": "x\ny", "b": [1, 2.50, -3e2]}`}},
			StructuredContent: json.RawMessage("{\"a\": \"x\\ny\",\n \"b\": [1, 2.50, -3e2]}"),
		},
		"awkward text": {
			Content: []Content{{Type: "text", Text: "quote\" back\\slash \t tab \x01 ctl <html>&amp; \u2028\u2029 é 😀 bad:\xff\xfe end"}},
			IsError: true,
		},
		"all content kinds": {Content: []Content{
			{Type: "image", Data: "aGVsbG8=", MimeType: "image/png"},
			{Type: "audio", Data: "UklGRg==", MimeType: "audio/wav"},
			{Type: "resource", Resource: &ResourceContents{URI: "http://b/x?y=1&z=<2>", MimeType: "application/pdf", Blob: "JVBERg=="}},
			{Type: "resource", Resource: &ResourceContents{URI: "http://b/t", Text: "line1\nline2"}},
		}},
		"empty": {Content: []Content{}},
		"stateless meta": {Content: []Content{{Type: "text", Text: "ok"}},
			ResultMeta: ResultMeta{ResultType: "complete", Meta: map[string]any{"io.modelcontextprotocol/serverInfo": Implementation{Name: "gw", Version: "1"}}}},
		"cache hints": {Content: []Content{{Type: "text", Text: "ok"}},
			ResultMeta: ResultMeta{ResultType: "complete", TTLMs: &ttl, CacheScope: "public"}},
	}
	for name, res := range cases {
		t.Run(name, func(t *testing.T) {
			for _, id := range []string{`1`, `"req-7"`, `-2.5`} {
				// encoding/json without HTML escaping: MCP is not HTML.
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(false)
				require.NoError(t, enc.Encode(Response{JSONRPC: "2.0", ID: json.RawMessage(id), Result: res}))
				want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
				for _, result := range []any{res, Pooled(res)} {
					got, err := AppendResponse(nil, json.RawMessage(id), result, nil)
					require.NoError(t, err)
					require.Equal(t, string(want), string(got))
					require.False(t, bytes.ContainsAny(got, "\r\n"), "SSE data lines cannot hold line breaks")
				}
			}
		})
	}
}

// structuredContent passes through as the backend sent it (compacted when it
// spans lines); encoding/json would also escape <, > and & inside it, which
// changes the bytes but not the value.
func TestCallResponseKeepsStructuredContentValue(t *testing.T) {
	res := &CallToolResult{
		Content:           []Content{{Type: "text", Text: `{"html":"<b>&</b>"}`}},
		StructuredContent: json.RawMessage("{\n \"html\": \"<b>&</b>\"\n}"),
	}
	got, err := AppendResponse(nil, json.RawMessage(`1`), res, nil)
	require.NoError(t, err)
	want, err := json.Marshal(Response{JSONRPC: "2.0", ID: json.RawMessage(`1`), Result: res})
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
	require.False(t, bytes.ContainsAny(got, "\r\n"))
}

// A field added to CallToolResult, Content, ResourceContents or ResultMeta
// that the hand-written encoder does not write fails here: every field of
// every type reachable from the result is filled at random (reflection
// finds the new one too), and the encoder's output must decode to what
// encoding/json makes of the same value.
func TestCallResponseEncoderWritesEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		var res CallToolResult
		fillRandom(rng, reflect.ValueOf(&res).Elem(), 0)
		if res.Content == nil {
			// The encoder always writes an array (MCP requires one);
			// encoding/json would write null.
			res.Content = []Content{}
		}
		want, err := json.Marshal(Response{JSONRPC: "2.0", ID: json.RawMessage(`7`), Result: &res})
		require.NoError(t, err)
		got, err := AppendResponse(nil, json.RawMessage(`7`), Pooled(&res), nil)
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got), "case %d", i)
	}
}

// TestFillRandomReachesEveryField keeps the test above honest: the filler
// sets every exported field at least once.
func TestFillRandomReachesEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	seen := map[string]bool{}
	for range 200 {
		var res CallToolResult
		fillRandom(rng, reflect.ValueOf(&res).Elem(), 0)
		markSet(reflect.ValueOf(res), "CallToolResult", seen)
	}
	for _, name := range exportedFields(reflect.TypeFor[CallToolResult](), "CallToolResult") {
		require.True(t, seen[name], "the random filler never set %s", name)
	}
}

var randomText = []string{"", "a", "plain text", "<b>&amp;</b>", "line\nbreak", "tab\tquote\"back\\slash", "é😀", "\u2028\u2029", "\x01ctl"}

// fillRandom sets v (and everything it holds) to random values; about one
// field in four is left zero so that omitempty paths are taken too.
func fillRandom(rng *rand.Rand, v reflect.Value, depth int) {
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		if rng.IntN(3) > 0 {
			k, _ := json.Marshal(randomText[rng.IntN(len(randomText))])
			v.SetBytes(fmt.Appendf(nil, `{"k":%s,"n":[%d,true,null]}`, k, rng.IntN(100)))
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && rng.IntN(4) > 0 {
				fillRandom(rng, v.Field(i), depth+1)
			}
		}
	case reflect.String:
		v.SetString(randomText[rng.IntN(len(randomText))])
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(rng.Int64N(1 << 40))
	case reflect.Float64:
		v.SetFloat(float64(rng.IntN(1000)) / 8)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillRandom(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		n := rng.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fillRandom(rng, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := range rng.IntN(3) + 1 {
			val := reflect.New(v.Type().Elem()).Elem()
			fillRandom(rng, val, depth+1)
			m.SetMapIndex(reflect.ValueOf(fmt.Sprintf("k%d", i)).Convert(v.Type().Key()), val)
		}
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf(randomText[rng.IntN(len(randomText))]))
	default:
		panic("fillRandom: add a case for " + v.Kind().String())
	}
}

func exportedFields(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := prefix + "." + f.Name
		out = append(out, name)
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			out = append(out, exportedFields(ft, name)...)
		}
	}
	return out
}

func markSet(v reflect.Value, prefix string, seen map[string]bool) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		name := prefix + "." + f.Name
		fv := v.Field(i)
		if !fv.IsZero() {
			seen[name] = true
		}
		for fv.Kind() == reflect.Pointer && !fv.IsNil() {
			fv = fv.Elem()
		}
		switch {
		case fv.Kind() == reflect.Struct:
			markSet(fv, name, seen)
		case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct:
			for j := range fv.Len() {
				markSet(fv.Index(j), name, seen)
			}
		}
	}
}

// Pooled results read after release are empty, never stale.
func TestPooledResultAfterRelease(t *testing.T) {
	buf := []byte(`{"a":1}`)
	var released []byte
	p := NewPooledResult(CallToolResult{Content: []Content{{Type: "text", Text: string(buf)}}, StructuredContent: buf}, buf, func(b []byte) { released = b })
	cp := p.Copy()
	p.Release()
	require.Equal(t, buf, released)
	require.Empty(t, p.Copy().Content)
	require.Nil(t, p.Copy().StructuredContent)
	require.Equal(t, `{"a":1}`, cp.Content[0].Text)
	got, err := AppendResponse(nil, json.RawMessage(`1`), p, nil)
	require.NoError(t, err)
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, string(got))
	require.True(t, strings.HasPrefix(string(cp.StructuredContent), `{"a"`))
}
