package call

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/stretchr/testify/require"
)

const ctSlowSpec = `
openapi: 3.0.3
info: {title: slow, version: "1"}
paths:
  /slow:
    get:
      operationId: slow
      responses: {"200": {description: ok}}
  /slow-ext:
    get:
      operationId: slowExt
      x-mcp-timeout: 0.05
      responses: {"200": {description: ok}}
`

// ctHangingBackend answers only when the request is abandoned, and reports
// that it was (so the test knows the backend request was aborted).
func ctHangingBackend(t *testing.T, writeHeaders bool) (*ctBackend, <-chan struct{}) {
	aborted := make(chan struct{}, 4)
	b := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if writeHeaders {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
		aborted <- struct{}{}
	})
	return b, aborted
}

func TestCallTimeouts(t *testing.T) {
	doc := ctDoc(t, ctSlowSpec)
	cases := []struct {
		name         string
		path         string
		timeout      time.Duration
		perTool      map[string]time.Duration
		writeHeaders bool
		want         string
	}{
		{"waiting for headers", "/slow", 50 * time.Millisecond, nil, false, "backend timed out after 50ms"},
		{"reading the body", "/slow", 50 * time.Millisecond, nil, true, "backend timed out after 50ms"},
		{"x-mcp-timeout wins over the configured timeout", "/slow-ext", time.Hour, nil, false, "backend timed out after 50ms"},
		{"the tool's configured timeout wins over both", "/slow-ext", time.Hour, map[string]time.Duration{"slowExt": 70 * time.Millisecond}, false, "backend timed out after 70ms"},
		{"a configured timeout for another tool changes nothing", "/slow", 50 * time.Millisecond, map[string]time.Duration{"slowExt": time.Hour}, false, "backend timed out after 50ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend, aborted := ctHangingBackend(t, c.writeHeaders)
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL, Timeout: c.timeout, ToolTimeouts: c.perTool})
			tool := ctTool(t, doc, "GET", c.path)
			res := ctCall(t, caller, tool, `{}`)
			require.True(t, res.IsError)
			require.Equal(t, c.want, ctText(res))
			require.Equal(t, strings.TrimPrefix(c.want, "backend timed out after "), caller.Timeout(tool).String())
			<-aborted // the backend request was aborted, not left running
		})
	}
	_, err := NewCaller(doc, Config{ToolTimeouts: map[string]time.Duration{"slow": 0}})
	require.ErrorContains(t, err, `ToolTimeouts["slow"] must be positive`)
}

func TestCallCancelled(t *testing.T) {
	doc := ctDoc(t, ctSlowSpec)
	started := make(chan struct{})
	aborted := make(chan struct{})
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
		close(aborted)
	})
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *mcp.CallToolResult)
	go func() { done <- caller.Call(ctx, ctTool(t, doc, "GET", "/slow"), nil) }()
	<-started
	cancel()
	res := <-done
	require.True(t, res.IsError)
	require.Equal(t, "the call was cancelled", ctText(res))
	<-aborted

	res = caller.Call(ctx, ctTool(t, doc, "GET", "/slow"), nil)
	require.Equal(t, "the call was cancelled", ctText(res), "an already cancelled context sends nothing")
	require.Len(t, backend.requests(), 1)
}

func TestCallCallerDeadline(t *testing.T) {
	doc := ctDoc(t, ctSlowSpec)
	backend, aborted := ctHangingBackend(t, false)
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL, Timeout: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := caller.Call(ctx, ctTool(t, doc, "GET", "/slow"), nil)
	require.True(t, res.IsError)
	require.Equal(t, "the call ran out of time before the backend answered", ctText(res))
	<-aborted
}

// A caller that makes the call's context itself, with Timeout and
// ErrTimeout, gets the same answer as one that leaves it to the Caller.
func TestCallCallerMadeTimeoutContext(t *testing.T) {
	doc := ctDoc(t, ctSlowSpec)
	backend, aborted := ctHangingBackend(t, false)
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL, Timeout: time.Hour})
	tool := ctTool(t, doc, "GET", "/slow-ext")
	require.Equal(t, 50*time.Millisecond, caller.Timeout(tool))
	require.Equal(t, time.Hour, caller.Timeout(ctTool(t, doc, "GET", "/slow")))
	ctx, cancel := context.WithTimeoutCause(context.Background(), caller.Timeout(tool), ErrTimeout)
	defer cancel()
	res := caller.Call(ctx, tool, nil)
	require.True(t, res.IsError)
	require.Equal(t, "backend timed out after 50ms", ctText(res))
	<-aborted
}

func TestCallUnreachable(t *testing.T) {
	doc := ctDoc(t, ctSlowSpec)
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		caller := ctCaller(t, doc, Config{BaseURL: "http://" + addr})
		res := ctCall(t, caller, ctTool(t, doc, "GET", "/slow"), `{}`)
		require.True(t, res.IsError)
		require.Equal(t, "backend unreachable: connection refused", ctText(res))
	})
	t.Run("connection closed", func(t *testing.T) {
		backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		})
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		res := ctCall(t, caller, ctTool(t, doc, "GET", "/slow"), `{}`)
		require.True(t, res.IsError)
		require.Equal(t, "backend unreachable: connection closed by the backend", ctText(res))
	})
	t.Run("TLS to a plain HTTP server", func(t *testing.T) {
		backend := ctNewBackend(t, nil)
		caller := ctCaller(t, doc, Config{BaseURL: strings.Replace(backend.URL, "http://", "https://", 1)})
		res := ctCall(t, caller, ctTool(t, doc, "GET", "/slow"), `{}`)
		require.True(t, res.IsError)
		require.Equal(t, "backend unreachable: TLS handshake failed (is the backend speaking plain HTTP?)", ctText(res))
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		backend := httptest.NewTLSServer(http.NotFoundHandler())
		t.Cleanup(backend.Close)
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		res := ctCall(t, caller, ctTool(t, doc, "GET", "/slow"), `{}`)
		require.True(t, res.IsError)
		require.Equal(t, "backend unreachable: TLS certificate not trusted", ctText(res))
	})
}

func TestCallRedirects(t *testing.T) {
	doc := ctDoc(t, ctSlowSpec)
	other := ctNewBackend(t, nil)
	t.Run("to another host: not followed", func(t *testing.T) {
		backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
		})
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL, BearerToken: "tok", BearerAlways: true})
		res := ctCall(t, caller, ctTool(t, doc, "GET", "/slow"), `{}`)
		require.True(t, res.IsError)
		require.Equal(t, "backend answered GET /slow with a redirect (HTTP 302 Found) to another host; it was not followed", ctText(res))
		require.Empty(t, other.requests())
	})
	t.Run("same host: followed", func(t *testing.T) {
		backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				http.Redirect(w, r, "/moved", http.StatusMovedPermanently)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"at":"` + r.URL.Path + `","auth":"` + r.Header.Get("Authorization") + `"}`))
		})
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL, BearerToken: "tok", BearerAlways: true})
		res := ctCall(t, caller, ctTool(t, doc, "GET", "/slow"), `{}`)
		ctOK(t, res)
		require.Equal(t, `{"at":"/moved","auth":"Bearer tok"}`, ctText(res))
	})
	t.Run("loop", func(t *testing.T) {
		backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/slow", http.StatusFound)
		})
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		res := ctCall(t, caller, ctTool(t, doc, "GET", "/slow"), `{}`)
		require.True(t, res.IsError)
		require.Equal(t, "backend unreachable: too many redirects", ctText(res))
		require.Len(t, backend.requests(), maxRedirects)
	})
}

// TestCallReusesConnections: sequential calls share one keep-alive
// connection through the shared transport.
func TestCallReusesConnections(t *testing.T) {
	doc := ctDoc(t, ctSlowSpec)
	var conns atomic.Int32
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	backend.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	backend.Start()
	t.Cleanup(backend.Close)
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	tool := ctTool(t, doc, "GET", "/slow")
	for range 20 {
		ctOK(t, ctCall(t, caller, tool, `{}`))
	}
	require.Equal(t, int32(1), conns.Load())
	tr := sharedTransport()
	require.GreaterOrEqual(t, tr.MaxIdleConnsPerHost, 64)
	require.False(t, tr.DisableKeepAlives)
}

func TestCallTimeoutExtension(t *testing.T) {
	spec := func(ext string) string {
		return `
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /x:
    get:
      x-mcp-timeout: ` + ext + `
      responses: {"200": {description: ok}}
`
	}
	for _, c := range []struct {
		ext     string
		want    time.Duration
		wantErr string
	}{
		{"5", 5 * time.Second, ""},
		{"2.5", 2500 * time.Millisecond, ""},
		{`"7"`, 7 * time.Second, ""},
		{`"90s"`, 90 * time.Second, ""},
		{"3600", time.Hour, ""},
		{"0", 0, `x-mcp-timeout of GET /x: must be more than 0 and at most 3600 seconds, got 0`},
		{"-1", 0, `must be more than 0`},
		{"3601", 0, `must be more than 0 and at most 3600 seconds, got 3601`},
		{`"soon"`, 0, `x-mcp-timeout of GET /x: must be a number of seconds, got "soon"`},
		{`"NaN"`, 0, `must be more than 0`},
		{"[1]", 0, `must be a number of seconds`},
	} {
		t.Run(c.ext, func(t *testing.T) {
			doc := ctDoc(t, spec(c.ext))
			caller, err := NewCaller(doc, Config{BaseURL: "http://backend.test"})
			if c.wantErr != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			p, err := caller.plan(ctTool(t, doc, "GET", "/x").Binding)
			require.NoError(t, err)
			require.Equal(t, c.want, p.timeout)
		})
	}
}

func TestCallUnboundTool(t *testing.T) {
	doc := ctDoc(t, ctSlowSpec)
	caller := ctCaller(t, doc, Config{BaseURL: "http://backend.test"})
	res := caller.Call(context.Background(), &toolgen.Tool{Name: "x"}, json.RawMessage(`{}`))
	require.True(t, res.IsError)
	require.Equal(t, "this tool is not bound to a backend operation", ctText(res))
	res = caller.Call(context.Background(), nil, nil)
	require.True(t, res.IsError)

	broken := ctTool(t, doc, "GET", "/slow", func(b *toolgen.Binding) { b.Path = "/slow/{id}" })
	res = caller.Call(context.Background(), broken, nil)
	require.True(t, res.IsError)
	require.Equal(t, `tool "slow" cannot be called: path template "/slow/{id}" uses {id}, which is not a path parameter`, ctText(res))
}

// TestCallConcurrent exercises the plan cache and shared transport from many
// goroutines (run with -race).
func TestCallConcurrent(t *testing.T) {
	doc := ctDocFile(t, "bodies.yaml")
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":1}`))
	})
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
	tool := ctTool(t, doc, "POST", "/pets")
	errs := make(chan string, 16)
	for i := range 16 {
		go func() {
			args := `{"name": "Rex", "age": ` + string(rune('0'+i%10)) + `}`
			res := caller.Call(context.Background(), tool, json.RawMessage(args))
			if res.IsError {
				errs <- ctText(res)
				return
			}
			errs <- ""
		}()
	}
	for range 16 {
		require.Empty(t, <-errs)
	}
	require.Len(t, backend.requests(), 16)
}
