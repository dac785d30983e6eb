package toolgen

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// warningsAbout are the messages of the warnings that mention key.
func warningsAbout(set *Set, key string) []string {
	var out []string
	for _, w := range set.Warnings() {
		if strings.Contains(w.Message, key) {
			out = append(out, w.Location+": "+w.Message)
		}
	}
	return out
}

func TestConfirm(t *testing.T) {
	paths := `
  /on:
    delete: {operationId: on, x-mcp-confirm: true, ` + okResponse + `}
  /text-true:
    delete: {operationId: textTrue, x-mcp-confirm: "TRUE", ` + okResponse + `}
  /message:
    delete: {operationId: message, x-mcp-confirm: "  Delete every pet?  ", ` + okResponse + `}
  /off:
    delete: {operationId: off, tags: [danger], x-mcp-confirm: false, ` + okResponse + `}
  /none:
    get: {operationId: none, ` + okResponse + `}
  /named:
    post: {operationId: named, x-mcp-name: renamed_tool, ` + okResponse + `}
  /bad/number:
    delete: {operationId: badNumber, x-mcp-confirm: 3, ` + okResponse + `}
  /bad/empty:
    delete: {operationId: badEmpty, x-mcp-confirm: "  ", ` + okResponse + `}
  /bad/object:
    delete: {operationId: badObject, x-mcp-confirm: {message: hi}, ` + okResponse + `}
`
	cases := []struct {
		name  string
		globs []string
		want  map[string]*Confirm // tools not listed want nil
	}{
		{"extension only", nil, map[string]*Confirm{
			"on": {}, "textTrue": {}, "message": {Message: "Delete every pet?"},
		}},
		{"glob by operationId", []string{"bad*"}, map[string]*Confirm{
			"on": {}, "textTrue": {}, "message": {Message: "Delete every pet?"},
			"badNumber": {}, "badEmpty": {}, "badObject": {},
		}},
		{"glob by tool name, not only operationId", []string{"renamed_*"}, map[string]*Confirm{
			"on": {}, "textTrue": {}, "message": {Message: "Delete every pet?"}, "renamed_tool": {},
		}},
		{"a glob wins over false", []string{"danger"}, map[string]*Confirm{
			"on": {}, "textTrue": {}, "message": {Message: "Delete every pet?"}, "off": {},
		}},
		{"a glob keeps the document's message", []string{"*"}, map[string]*Confirm{
			"on": {}, "textTrue": {}, "message": {Message: "Delete every pet?"}, "off": {}, "none": {},
			"renamed_tool": {}, "badNumber": {}, "badEmpty": {}, "badObject": {},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set := genYAML(t, paths, Options{ConfirmOperations: c.globs})
			for _, tl := range set.Tools() {
				require.Equal(t, c.want[tl.Name], tl.Confirm, tl.Name)
			}
			warned := warningsAbout(set, extMCPConfirm)
			require.Len(t, warned, 3, "%v", warned)
			for _, w := range warned {
				require.Contains(t, w, "should be true, false or a non-empty message")
				require.True(t, strings.HasSuffix(w, "; ignored"), w)
			}
		})
	}

	t.Run("confirm is not part of the listed tool", func(t *testing.T) {
		set := genYAML(t, paths, Options{})
		raw, err := json.Marshal(tool(t, set, "message"))
		require.NoError(t, err)
		require.NotContains(t, strings.ToLower(string(raw)), "confirm")
	})

	t.Run("a malformed glob fails generation", func(t *testing.T) {
		d, err := openapi.LoadData(context.Background(), []byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n"), "", openapi.LoadOptions{})
		require.NoError(t, err)
		_, err = Generate(d, Options{ConfirmOperations: []string{"[unclosed"}})
		require.ErrorContains(t, err, "[unclosed")
	})
}
