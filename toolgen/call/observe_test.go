package call

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/stretchr/testify/require"
)

const observeDoc = `openapi: 3.0.3
info: {title: o, version: "1"}
paths:
  /items/{id}:
    get:
      operationId: getItem
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
`

func TestCallPooledReportsStagesInOrder(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer backend.Close()
	doc, err := openapi.LoadData(context.Background(), []byte(observeDoc), "o.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	set, err := toolgen.Generate(doc, toolgen.Options{})
	require.NoError(t, err)
	caller, err := NewCaller(doc, Config{BaseURL: backend.URL})
	require.NoError(t, err)
	tool, ok := set.Lookup("getItem")
	require.True(t, ok)

	var got []Progress
	res := caller.CallPooled(context.Background(), tool, []byte(`{"id":3}`), func(p Progress) { got = append(got, p) })
	require.False(t, res.IsError())
	require.Equal(t, []Progress{{Stage: StageSent}, {Stage: StageAnswered, Status: 200}, {Stage: StageMapped, Status: 200}}, got)

	// Invalid arguments never reach the backend, so no stage is reported.
	got = nil
	res = caller.CallPooled(context.Background(), tool, []byte(`{"id":"x"}`), func(p Progress) { got = append(got, p) })
	require.True(t, res.IsError())
	require.Empty(t, got)
}
