package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const bodiesDoc = `openapi: 3.0.3
info: {title: bodies, version: "1"}
paths:
  /text:
    get:
      operationId: getText
      responses:
        "200":
          description: ok
          content:
            text/plain:
              schema: {type: string}
  /json:
    get:
      operationId: getJSON
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {s: {type: string}}}
`

// MCP is not HTML: a result never HTML-escapes, so a backend body of N
// bytes costs at most about 2N on the wire for its text and its
// structured copy, even when it is all "<", "&" and ">" or control
// characters.
func TestResultsAreNotHTMLEscaped(t *testing.T) {
	const n = 100_000
	html := strings.Repeat("<&>", n/3)
	controls := strings.Repeat("\x01\x02\x7f", n/3)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/html/text":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte(html))
		case "/controls/text":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte(controls + "ok\n"))
		case "/html/json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"s":"` + html + `"}`))
		}
	}))
	defer backend.Close()
	g := newGatewayFor(t, Config{}, []byte(bodiesDoc), backend.URL+"/html")
	sid := g.initialize(t, "2025-11-25")
	for _, tc := range []struct {
		tool string
		max  int // wire bytes of the whole response
	}{
		{"getText", n + 200},   // the text once, as it is
		{"getJSON", 2*n + 300}, // the text and the structured copy
	} {
		r := g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tc.tool+`","arguments":{}}}`)
		require.Equal(t, 200, r.status)
		require.LessOrEqual(t, len(r.body), tc.max, "%s: %d bytes on the wire", tc.tool, len(r.body))
		require.Contains(t, string(r.body), "<&><&>", tc.tool)
		require.NotContains(t, string(r.body), `\u003c`, tc.tool)
	}

	// Control characters (other than tab and line breaks) are dropped
	// from text: JSON would write each as six bytes.
	g = newGatewayFor(t, Config{}, []byte(bodiesDoc), backend.URL+"/controls")
	sid = g.initialize(t, "2025-11-25")
	r := g.sessionCall(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getText","arguments":{}}}`)
	require.Equal(t, 200, r.status)
	require.Less(t, len(r.body), 300, "%s", r.body)
	require.Contains(t, string(r.body), `"text":"ok\n"`)
}
