package call

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

const ctInputSpec = `
openapi: 3.0.3
info: {title: input, version: "1"}
paths:
  /orders:
    post:
      operationId: createOrder
      parameters:
        - {name: Mcp-Input-Responses, in: header, schema: {type: string}}
        - {name: Mcp-Request-State, in: header, schema: {type: string}}
        - {name: X-Trace, in: header, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, properties: {item: {type: string}}}
      responses:
        "200": {description: ok}
`

const ctSecret = "sekret-token-123"

// ctCallWith runs one round and returns a result that may be kept.
func ctCallWith(t *testing.T, c *Caller, tool *toolgen.Tool, args string, opts CallOptions) (*mcp.CallToolResult, int, *InputRequired) {
	t.Helper()
	p, in := c.CallWith(context.Background(), tool, json.RawMessage(args), opts)
	if in != nil {
		require.Nil(t, p, "both a result and an input request")
		return nil, 0, in
	}
	require.NotNil(t, p, "neither a result nor an input request")
	defer p.Release()
	return p.Copy(), p.BackendStatus(), nil
}

func TestInputRequiredParsing(t *testing.T) {
	doc := ctDoc(t, ctInputSpec)
	manyRequests := map[string]any{}
	for i := range mcp.MaxInputRequests + 1 {
		manyRequests[fmt.Sprintf("k%d", i)] = map[string]any{"method": "roots/list"}
	}
	many, _ := json.Marshal(map[string]any{"inputRequests": manyRequests})
	good := `{"inputRequests": {
		"confirm": {"method": "elicitation/create", "params": {"message": "Order 3 pets?", "requestedSchema": {"type": "object"}}},
		"roots": {"method": "roots/list"},
		"nullParams": {"method": "sampling/createMessage", "params": null}},
		"requestState": "opaque-1"}`
	cases := []struct {
		name        string
		contentType string
		status      int
		body        string
		want        *InputRequired // nil: malformed
		why         string
	}{
		{"good", inputRequiredType, 428, good, &InputRequired{
			Requests: mcp.InputRequests{
				"confirm":    {Method: mcp.MethodElicit, Params: json.RawMessage(`{"message": "Order 3 pets?", "requestedSchema": {"type": "object"}}`)},
				"roots":      {Method: mcp.MethodListRoots},
				"nullParams": {Method: mcp.MethodSample},
			},
			State: ptr("opaque-1"), Status: 428,
		}, ""},
		{"any status, parameters, no state", inputRequiredType + "; charset=utf-8", 200,
			`{"inputRequests": {"a": {"method": "roots/list"}}, "requestState": null}`,
			&InputRequired{Requests: mcp.InputRequests{"a": {Method: mcp.MethodListRoots}}, Status: 200}, ""},
		{"echoed credentials are redacted", inputRequiredType, 428,
			`{"inputRequests": {"a": {"method": "elicitation/create", "params": {"message": "you sent ` + ctSecret + `"}}}, "requestState": "x` + ctSecret + `"}`,
			&InputRequired{
				Requests: mcp.InputRequests{"a": {Method: mcp.MethodElicit, Params: json.RawMessage(`{"message": "you sent [redacted]"}`)}},
				State:    ptr("x[redacted]"), Status: 428,
			}, ""},
		{"not an object", inputRequiredType, 428, `[1]`, nil, "its body is not a JSON object"},
		{"invalid JSON", inputRequiredType, 428, `{"inputRequests": `, nil, "its body is not valid JSON"},
		{"empty body", inputRequiredType, 428, ``, nil, "its body is not a JSON object"},
		{"no inputRequests", inputRequiredType, 428, `{"requestState": "s"}`, nil, "it has no inputRequests"},
		{"inputRequests not an object", inputRequiredType, 428, `{"inputRequests": [1]}`, nil, "its inputRequests is not an object"},
		{"inputRequests empty", inputRequiredType, 428, `{"inputRequests": {}}`, nil, "its inputRequests is empty"},
		{"too many", inputRequiredType, 428, string(many), nil, fmt.Sprintf("it asks for %d inputs at once, over the %d a round may hold", mcp.MaxInputRequests+1, mcp.MaxInputRequests)},
		{"empty key", inputRequiredType, 428, `{"inputRequests": {"": {"method": "roots/list"}}}`, nil, "an input request has an empty key"},
		{"long key", inputRequiredType, 428, `{"inputRequests": {"` + strings.Repeat("k", 129) + `": {"method": "roots/list"}}}`, nil, "an input request key is over 128 bytes"},
		{"unprintable key", inputRequiredType, 428, `{"inputRequests": {"a\u0007b": {"method": "roots/list"}}}`, nil, "an input request key holds characters that are not printable"},
		{"entry not an object", inputRequiredType, 428, `{"inputRequests": {"a": "roots/list"}}`, nil, `input request "a" is not an object`},
		{"no method", inputRequiredType, 428, `{"inputRequests": {"a": {"params": {}}}}`, nil, `input request "a" has no method`},
		{"method not a string", inputRequiredType, 428, `{"inputRequests": {"a": {"method": 1}}}`, nil, `input request "a" has no method`},
		{"unknown method", inputRequiredType, 428, `{"inputRequests": {"a": {"method": "tools/call"}}}`, nil,
			`input request "a" asks for "tools/call", which is not elicitation/create, sampling/createMessage or roots/list`},
		{"params not an object", inputRequiredType, 428, `{"inputRequests": {"a": {"method": "roots/list", "params": [1]}}}`, nil, `the params of input request "a" are not an object`},
		{"state not a string", inputRequiredType, 428, `{"inputRequests": {"a": {"method": "roots/list"}}, "requestState": 7}`, nil, "its requestState is not a string"},
		{"state not a header value", inputRequiredType, 428, `{"inputRequests": {"a": {"method": "roots/list"}}, "requestState": "a\nb"}`, nil,
			"its requestState cannot be sent back as a header (it holds characters other than printable ASCII)"},
		{"too large", inputRequiredType, 428, `{"inputRequests": {"a": {"method": "roots/list", "params": {"pad": "` + strings.Repeat("x", 2048) + `"}}}}`, nil,
			"its request is over the 1024 bytes the gateway reads"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, ctReply(c.status, c.contentType, []byte(c.body)))
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL, BearerToken: ctSecret, BearerAlways: true, MaxResponseBytes: 1024})
			tool := ctTool(t, doc, "POST", "/orders")
			var stages []Stage
			res, status, in := ctCallWith(t, caller, tool, `{"item": "pet"}`, CallOptions{Observe: func(p Progress) { stages = append(stages, p.Stage) }})
			require.Equal(t, []Stage{StageSent, StageAnswered, StageMapped}, stages)
			if c.want != nil {
				require.Nil(t, res)
				require.Positive(t, in.Elapsed, "the exchange is timed")
				in.Elapsed = 0
				require.Equal(t, c.want, in)
				return
			}
			require.Nil(t, in)
			require.True(t, res.IsError)
			require.Equal(t, "the backend asked for input in a malformed way: "+c.why, ctText(res))
			require.Equal(t, c.status, status)
		})
	}

	t.Run("CallPooled cannot answer", func(t *testing.T) {
		backend := ctNewBackend(t, ctReply(428, inputRequiredType, []byte(good)))
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		p := caller.CallPooled(context.Background(), ctTool(t, doc, "POST", "/orders"), json.RawMessage(`{}`), nil)
		defer p.Release()
		require.True(t, p.IsError())
		require.Equal(t, 428, p.BackendStatus())
		require.Equal(t, "the backend asked for input (elicitation, roots, sampling) that this call cannot provide", p.Copy().FirstText())
	})
}

func ptr[T any](v T) *T { return &v }

// TestInputRetryHeaders: a round with answers repeats the same request
// with the answers (base64url, unpadded) and the state as headers, which
// no argument can set.
func TestInputRetryHeaders(t *testing.T) {
	doc := ctDoc(t, ctInputSpec)
	asked := `{"inputRequests": {"confirm": {"method": "elicitation/create", "params": {"message": "sure?"}}}, "requestState": "state-1"}`
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(headerInputResponses) == "" {
			ctReply(428, inputRequiredType, []byte(asked))(w, r)
			return
		}
		ctReply(200, "application/json", []byte(`{"ordered": true}`))(w, r)
	})
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	tool := ctTool(t, doc, "POST", "/orders")
	args := `{"item": "pet", "X-Trace": "t-1", "Mcp-Input-Responses": "e30", "Mcp-Request-State": "forged"}`

	_, _, in := ctCallWith(t, caller, tool, args, CallOptions{})
	require.NotNil(t, in)
	require.Equal(t, ptr("state-1"), in.State)

	// Two bytes over a multiple of three: padding would show.
	responses := `{"confirm":{"action":"accept","content":{"ok":true}}}`
	require.NotZero(t, len(responses)%3)
	res, status, in2 := ctCallWith(t, caller, tool, args, CallOptions{Input: &InputAnswer{Responses: json.RawMessage(responses), State: in.State}})
	require.Nil(t, in2)
	ctOK(t, res)
	require.Equal(t, 200, status)
	require.Equal(t, `{"ordered":true}`, ctStructured(t, res))

	reqs := backend.requests()
	require.Len(t, reqs, 2)
	first, second := reqs[0], reqs[1]
	require.Empty(t, first.Header.Values(headerInputResponses), "an argument set the answers")
	require.Empty(t, first.Header.Values(headerRequestState), "an argument set the state")
	require.Equal(t, first.Method, second.Method)
	require.Equal(t, first.RequestURI, second.RequestURI)
	require.Equal(t, first.Body, second.Body)
	require.Equal(t, "t-1", second.Header.Get("X-Trace"))

	sent := second.Header.Values(headerInputResponses)
	require.Len(t, sent, 1)
	require.NotContains(t, sent[0], "=")
	decoded, err := base64.RawURLEncoding.DecodeString(sent[0])
	require.NoError(t, err)
	require.Equal(t, responses, string(decoded))
	require.Equal(t, []string{"state-1"}, second.Header.Values(headerRequestState))

	t.Run("without state", func(t *testing.T) {
		_, _, _ = ctCallWith(t, caller, tool, args, CallOptions{Input: &InputAnswer{Responses: json.RawMessage(`{}`)}})
		last := backend.requests()[2]
		require.Equal(t, []string{base64.RawURLEncoding.EncodeToString([]byte(`{}`))}, last.Header.Values(headerInputResponses))
		require.Empty(t, last.Header.Values(headerRequestState))
	})

	t.Run("answers do not count against the argument header bound", func(t *testing.T) {
		big := `{"confirm":{"action":"accept","content":{"note":"` + strings.Repeat("n", maxArgHeaderBytes) + `"}}}`
		res, _, _ := ctCallWith(t, caller, tool, args, CallOptions{Input: &InputAnswer{Responses: json.RawMessage(big)}})
		ctOK(t, res)
	})
}

// TestInputAnswerRefused: an answer that cannot be sent is refused
// before anything is.
func TestInputAnswerRefused(t *testing.T) {
	doc := ctDoc(t, ctInputSpec)
	backend := ctNewBackend(t, nil)
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	tool := ctTool(t, doc, "POST", "/orders")
	const stateFail = "the request state to send back to the backend is not a valid header value: "
	cases := []struct {
		name   string
		answer InputAnswer
		want   string
	}{
		{"control character", InputAnswer{Responses: json.RawMessage(`{}`), State: ptr("a\r\nX-Injected: 1")},
			stateFail + "it holds characters other than printable ASCII; nothing was sent"},
		{"not ASCII", InputAnswer{Responses: json.RawMessage(`{}`), State: ptr("café")},
			stateFail + "it holds characters other than printable ASCII; nothing was sent"},
		{"too long", InputAnswer{Responses: json.RawMessage(`{}`), State: ptr(strings.Repeat("s", maxStateBytes+1))},
			stateFail + fmt.Sprintf("it is %d bytes, over the %d a header may carry; nothing was sent", maxStateBytes+1, maxStateBytes)},
		{"surrounding space", InputAnswer{Responses: json.RawMessage(`{}`), State: ptr(" s")},
			stateFail + "it begins or ends with a space, which a header does not keep; nothing was sent"},
		{"responses not an object", InputAnswer{Responses: json.RawMessage(`[1]`)},
			"the input responses to send to the backend are not a JSON object; nothing was sent"},
		{"responses missing", InputAnswer{},
			"the input responses to send to the backend are not a JSON object; nothing was sent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stages []Stage
			res, _, in := ctCallWith(t, caller, tool, `{"item": "pet"}`, CallOptions{
				Input:   &c.answer,
				Observe: func(p Progress) { stages = append(stages, p.Stage) },
			})
			require.Nil(t, in)
			require.True(t, res.IsError)
			require.Equal(t, c.want, ctText(res))
			require.Empty(t, stages)
			require.Empty(t, backend.requests())
		})
	}
	// The longest state that is allowed goes out.
	res, _, _ := ctCallWith(t, caller, tool, `{"item": "pet"}`, CallOptions{Input: &InputAnswer{Responses: json.RawMessage(`{}`), State: ptr(strings.Repeat("s", maxStateBytes))}})
	ctOK(t, res)
	require.Equal(t, strings.Repeat("s", maxStateBytes), backend.last(t).Header.Get(headerRequestState))
}
