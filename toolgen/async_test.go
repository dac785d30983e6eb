package toolgen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAsyncExtension(t *testing.T) {
	paths := `
  /on:
    post: {operationId: on, x-mcp-async: true, ` + okResponse + `}
  /text:
    post: {operationId: text, x-mcp-async: "true", ` + okResponse + `}
  /off:
    post: {operationId: off, x-mcp-async: false, ` + okResponse + `}
  /none:
    post: {operationId: none, ` + okResponse + `}
  /pointer:
    post: {operationId: pointer, x-mcp-async: {location: /statusUrl}, ` + okResponse + `}
  /escaped:
    post: {operationId: escaped, x-mcp-async: {location: "/links/status~1url/0"}, ` + okResponse + `}
  /bad/number:
    post: {operationId: badNumber, x-mcp-async: 1, ` + okResponse + `}
  /bad/string:
    post: {operationId: badString, x-mcp-async: "/statusUrl", ` + okResponse + `}
  /bad/relative:
    post: {operationId: badRelative, x-mcp-async: {location: statusUrl}, ` + okResponse + `}
  /bad/escape:
    post: {operationId: badEscape, x-mcp-async: {location: "/a~2b"}, ` + okResponse + `}
  /bad/type:
    post: {operationId: badType, x-mcp-async: {location: 3}, ` + okResponse + `}
  /bad/field:
    post: {operationId: badField, x-mcp-async: {location: /s, poll: 1}, ` + okResponse + `}
  /bad/missing:
    post: {operationId: badMissing, x-mcp-async: {}, ` + okResponse + `}
`
	set := genYAML(t, paths, Options{})
	want := map[string]*AsyncSpec{
		"on":      {},
		"text":    {},
		"pointer": {Location: "/statusUrl"},
		"escaped": {Location: "/links/status~1url/0"},
	}
	for _, tl := range set.Tools() {
		require.Equal(t, want[tl.Name], tl.Binding.Async, tl.Name)
	}
	warned := warningsAbout(set, extMCPAsync)
	require.Len(t, warned, 7, "%v", warned)
	for _, name := range []string{"bad/number", "bad/string", "bad/relative", "bad/escape", "bad/type", "bad/field", "bad/missing"} {
		found := false
		for _, w := range warned {
			if strings.Contains(w, "/"+name) {
				found = true
				require.True(t, strings.HasSuffix(w, "; ignored"), w)
			}
		}
		require.True(t, found, "no warning for %s in %v", name, warned)
	}
}
