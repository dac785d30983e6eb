package gateway

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// seen is what the test middleware records of one request.
type seen struct {
	method    string
	era       mcp.Era
	session   bool
	principal string // the principal the handler ran with ("" = none)
	outcome   string // "ok", "tool_error", "error <code>", "cancelled"
}

// recorder is a middleware pair: the first sets the principal slot, the
// second (inside it) records what reaches the handler and what comes back.
type recorder struct {
	mu  sync.Mutex
	got []seen
}

func (rec *recorder) authenticate(next mcp.Handler) mcp.Handler {
	return func(r *mcp.Request) (any, error) {
		r.Principal = &mcp.Principal{Subject: "alice", Scopes: []string{"tools"}}
		return next(r)
	}
}

func (rec *recorder) audit(next mcp.Handler) mcp.Handler {
	return func(r *mcp.Request) (any, error) {
		res, err := next(r)
		s := seen{method: r.Method, era: r.Era, session: r.SessionID != "", outcome: "ok"}
		if r.Principal != nil {
			s.principal = r.Principal.Subject
		}
		var rerr *mcp.Error
		switch {
		case errors.Is(err, mcp.ErrCancelled):
			s.outcome = "cancelled"
		case errors.As(err, &rerr):
			s.outcome = "error " + strconv.Itoa(rerr.Code)
		case err != nil:
			s.outcome = "internal"
		default:
			if p, ok := res.(*mcp.PooledResult); ok && p.IsError() {
				s.outcome = "tool_error"
			}
		}
		rec.mu.Lock()
		rec.got = append(rec.got, s)
		rec.mu.Unlock()
		return res, err
	}
}

func (rec *recorder) take() []seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := rec.got
	rec.got = nil
	return out
}

// Every JSON-RPC request of either era, batch members, initialize and
// unknown methods included, passes the server's middleware chain in order,
// with its principal slot, and the chain sees the outcome.
func TestMiddlewareSeesEveryRequest(t *testing.T) {
	rec := &recorder{}
	g := newTestGatewayWith(t, Config{}, Deps{Middleware: []mcp.Middleware{rec.authenticate, rec.audit}})

	sid := g.initialize(t, "2025-06-18")
	require.Equal(t, []seen{{method: "initialize", era: mcp.EraSession, principal: "alice", outcome: "ok"}}, rec.take(),
		"notifications are not requests: only initialize reached the chain")

	for _, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"getNote","arguments":{"id":"x"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","id":8,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"p"}}`,
		`{"jsonrpc":"2.0","id":10,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"b"}}}`,
		`{"jsonrpc":"2.0","id":11,"method":"logging/setLevel","params":{"level":"error"}}`,
	} {
		r := g.sessionCall(t, sid, "2025-06-18", body)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	}
	session := func(method, outcome string) seen {
		return seen{method: method, era: mcp.EraSession, session: true, principal: "alice", outcome: outcome}
	}
	require.Equal(t, []seen{
		session("ping", "ok"),
		session("tools/list", "ok"),
		session("tools/call", "ok"),
		session("tools/call", "tool_error"),
		session("tools/call", "error -32602"),
		session("no/such/method", "error -32601"),
		session("resources/list", "ok"),
		session("prompts/get", "error -32602"),
		session("completion/complete", "error -32602"), // an undeclared prompt
		session("logging/setLevel", "ok"),
	}, rec.take())

	// Stateless era: requests, an unknown method (404) and the listen
	// stream, which the chain admits before it opens.
	r := g.modern(t, 1, "tools/call", `"name":"getNote","arguments":{"id":1}`, map[string]string{"Mcp-Name": "getNote"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r = g.modern(t, 2, "server/discover", "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r = g.modern(t, 3, "ping", "", nil)
	require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
	stateless := func(method, outcome string) seen {
		return seen{method: method, era: mcp.EraStateless, principal: "alice", outcome: outcome}
	}
	require.Equal(t, []seen{
		stateless("tools/call", "ok"),
		stateless("server/discover", "ok"),
		stateless("ping", "error -32601"),
	}, rec.take())

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream := openListen(t, ctx, g)
	stream.Body.Close()
	require.Equal(t, []seen{stateless("subscriptions/listen", "ok")}, rec.take())

	// Batch members, in a 2025-03-26 session.
	old := g.initialize(t, "2025-03-26")
	rec.take()
	r = g.sessionCall(t, old, "2025-03-26", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"getNote","arguments":{"id":1}}},{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, []seen{session("ping", "ok"), session("tools/call", "ok")}, rec.take())
}

// A middleware can answer in the handler's place: the transport renders its
// error like any other, in both eras, and the stream never opens.
func TestMiddlewareCanDeny(t *testing.T) {
	deny := func(next mcp.Handler) mcp.Handler {
		return func(r *mcp.Request) (any, error) {
			if r.Method == "initialize" {
				return next(r)
			}
			return nil, mcp.NewError(mcp.CodeInvalidRequest, "Forbidden: %s", r.Method).WithStatus(http.StatusForbidden)
		}
	}
	g := newTestGatewayWith(t, Config{}, Deps{Middleware: []mcp.Middleware{deny}})
	sid := g.initialize(t, "2025-06-18")
	r := g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Equal(t, http.StatusForbidden, r.status)
	require.Equal(t, mcp.CodeInvalidRequest, r.errCode(t))

	r = g.modern(t, 1, "subscriptions/listen", `"notifications":{}`, nil)
	require.Equal(t, http.StatusForbidden, r.status)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Equal(t, mcp.CodeInvalidRequest, r.errCode(t))

	// A denial without a status answers the stream request like any other
	// request: 200 with the JSON-RPC error, no stream.
	quiet := func(next mcp.Handler) mcp.Handler {
		return func(r *mcp.Request) (any, error) {
			if r.Method == "subscriptions/listen" {
				return nil, mcp.InvalidParams("not today")
			}
			return next(r)
		}
	}
	g = newTestGatewayWith(t, Config{}, Deps{Middleware: []mcp.Middleware{quiet}})
	r = g.modern(t, 1, "subscriptions/listen", `"notifications":{}`, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Equal(t, mcp.CodeInvalidParams, r.errCode(t))

	// An error that is not an *mcp.Error stays internal: the client sees
	// -32603 only.
	boom := func(next mcp.Handler) mcp.Handler {
		return func(r *mcp.Request) (any, error) {
			if r.Method == "initialize" {
				return next(r)
			}
			return nil, errors.New("secret detail")
		}
	}
	g = newTestGatewayWith(t, Config{}, Deps{Middleware: []mcp.Middleware{boom}})
	sid = g.initialize(t, "2025-06-18")
	r = g.sessionCall(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, mcp.CodeInternalError, r.errCode(t))
	require.NotContains(t, string(r.body), "secret")
	r = g.modern(t, 1, "subscriptions/listen", `"notifications":{}`, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, mcp.CodeInternalError, r.errCode(t))
	require.NotContains(t, string(r.body), "secret")
}

// The handler runs with the request as the chain passed it on: a
// middleware may hand the next one a changed copy, streams included.
func TestMiddlewarePassesItsRequestOn(t *testing.T) {
	var mu sync.Mutex
	var got []string
	swap := func(next mcp.Handler) mcp.Handler {
		return func(r *mcp.Request) (any, error) {
			cp := *r
			cp.Principal = &mcp.Principal{Subject: "bob"}
			return next(&cp)
		}
	}
	stream := func(next mcp.Handler) mcp.Handler {
		return func(r *mcp.Request) (any, error) {
			res, err := next(r)
			mu.Lock()
			got = append(got, r.Method+" "+r.Principal.Subject)
			mu.Unlock()
			return res, err
		}
	}
	g := newTestGatewayWith(t, Config{}, Deps{Middleware: []mcp.Middleware{swap, stream}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp := openListen(t, ctx, g)
	resp.Body.Close()
	r := g.modern(t, 2, "tools/list", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"subscriptions/listen bob", "tools/list bob"}, got)
}

// openListen opens a subscriptions/listen stream and reads its
// acknowledgement.
func openListen(t *testing.T, ctx context.Context, g *testGateway) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.NotEmpty(t, line)
	return resp
}
