package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/internal/demo"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
	"github.com/stretchr/testify/require"
)

// testGateway is a gateway in front of a real backend, served over a real
// loopback HTTP server.
type testGateway struct {
	srv *Server
	url string // MCP endpoint
	hs  *httptest.Server
}

// newTestGateway serves the demo backend's document through a gateway.
func newTestGateway(t *testing.T, cfg Config) *testGateway {
	t.Helper()
	return newTestGatewayWith(t, cfg, Deps{})
}

// newTestGatewayWith is newTestGateway with the given stores.
func newTestGatewayWith(t *testing.T, cfg Config, deps Deps) *testGateway {
	t.Helper()
	backend := httptest.NewServer(demo.New().Handler())
	t.Cleanup(backend.Close)
	return newGatewayWith(t, cfg, deps, demo.OpenAPI(), backend.URL)
}

// newGatewayFor serves an arbitrary document whose backend is at baseURL.
func newGatewayFor(t *testing.T, cfg Config, doc []byte, baseURL string) *testGateway {
	t.Helper()
	return newGatewayWith(t, cfg, Deps{}, doc, baseURL)
}

func newGatewayWith(t *testing.T, cfg Config, deps Deps, doc []byte, baseURL string) *testGateway {
	t.Helper()
	ctx := context.Background()
	d, err := openapi.LoadData(ctx, doc, "test/openapi.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	set, err := toolgen.Generate(d, toolgen.Options{})
	require.NoError(t, err)
	caller, err := call.NewCaller(d, call.Config{BaseURL: baseURL})
	require.NoError(t, err)
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = "127.0.0.1:0"
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := New(cfg, deps)
	require.NoError(t, err)
	srv.SetCatalog(Catalog{Doc: d, Tools: set, Caller: caller})
	hs := httptest.NewServer(srv.Handler(nil))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = srv.Run(runCtx); close(done) }()
	t.Cleanup(func() {
		stop()
		<-done
		hs.Close()
	})
	return &testGateway{srv: srv, url: hs.URL + srv.cfg.MountPath, hs: hs}
}

// exchange is one HTTP exchange with the MCP endpoint.
type exchange struct {
	method  string // HTTP method; default POST
	body    string
	headers map[string]string
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

// msg decodes a JSON body (or the last SSE data event) as a JSON-RPC message.
func (r reply) msg(t *testing.T) map[string]any {
	t.Helper()
	data := r.body
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		evs := sseData(r.body)
		require.NotEmpty(t, evs, "no SSE events in %q", r.body)
		data = evs[len(evs)-1]
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m), "body: %s", r.body)
	return m
}

func (r reply) errCode(t *testing.T) int {
	t.Helper()
	e, ok := r.msg(t)["error"].(map[string]any)
	require.True(t, ok, "expected a JSON-RPC error, got %s", r.body)
	return int(e["code"].(float64))
}

func (r reply) result(t *testing.T) map[string]any {
	t.Helper()
	m := r.msg(t)
	res, ok := m["result"].(map[string]any)
	require.True(t, ok, "expected a result, got %s", r.body)
	return res
}

func sseData(body []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "" {
			out = append(out, []byte(d))
		}
	}
	return out
}

func (g *testGateway) do(t *testing.T, c exchange) reply {
	t.Helper()
	m := c.method
	if m == "" {
		m = http.MethodPost
	}
	req, err := http.NewRequest(m, g.url, strings.NewReader(c.body))
	require.NoError(t, err)
	if m == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range c.headers {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	if h, ok := c.headers["Host"]; ok {
		req.Host = h
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{status: resp.StatusCode, header: resp.Header, body: body}
}

// initialize opens a session at version and returns its id.
func (g *testGateway) initialize(t *testing.T, version string) string {
	t.Helper()
	r := g.do(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	sid := r.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	r = g.do(t, exchange{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers: map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": version}})
	require.Equal(t, http.StatusAccepted, r.status)
	return sid
}

// sessionCall posts a message in a session.
func (g *testGateway) sessionCall(t *testing.T, sid, version, body string) reply {
	t.Helper()
	return g.do(t, exchange{body: body, headers: map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": version}})
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`

// modern posts a 2026-07-28 request with correctly mirrored headers.
func (g *testGateway) modern(t *testing.T, id int, method, params string, extra map[string]string) reply {
	t.Helper()
	p := "{" + modernMeta
	if params != "" {
		p += "," + params
	}
	p += "}"
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	for k, v := range extra {
		h[k] = v
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": json.RawMessage(p)})
	require.NoError(t, err)
	return g.do(t, exchange{body: string(body), headers: h})
}
