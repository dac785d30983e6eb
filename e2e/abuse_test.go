package e2e

// The attacks of issue #8, against the real binary on loopback, each
// bounded in count and size: what used to take the gateway down or leak
// what it guards now meets a limit.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const abuseDoc = `openapi: 3.0.3
info: {title: abuse, version: "1"}
paths:
  /echo:
    get:
      operationId: echoHeaders
      summary: Answers with the request's headers
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
  /fail:
    get:
      operationId: fail
      summary: Fails with a stack trace
      responses:
        "200": {description: never}
  /big:
    get:
      operationId: big
      summary: A 9.4 MB answer of HTML characters
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {s: {type: string}}}
  /items:
    get:
      operationId: listItems
      summary: Items by id
      parameters:
        - {name: ids, in: query, schema: {type: array, items: {type: integer}}}
      responses:
        "200": {description: ok}
`

const (
	abuseToken = "tok-5ecret-bearer-value"
	abuseKey   = "key-5ecret-api-value"
)

// bigBody is the /big answer: 9.4 MB, nearly all '<' and '&'.
var bigBody = []byte(`{"s":"` + strings.Repeat("<&", 4_700_000) + `"}`)

func TestAbuse(t *testing.T) {
	var itemsCalls atomic.Int64
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			w.Header().Set("Content-Type", "application/json")
			status := http.StatusOK
			if r.URL.Query().Has("deny") {
				status = http.StatusUnauthorized
			}
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(r.Header)
		case "/fail":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "panic: runtime error\n\ngoroutine 7 [running]:\nmain.handler()\n\t/srv/app/main.go:42 +0x1d\nauthorization: Bearer %s\ndb at 10.0.3.7:5432 password=hunter2\n", r.Header.Get("Authorization"))
		case "/big":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(bigBody)
		case "/items":
			itemsCalls.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`[]`))
		}
	}))
	defer backend.Close()
	// The document is fetched over HTTP with credentials in its URL.
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write([]byte(abuseDoc))
	}))
	defer docs.Close()
	docURL := strings.Replace(docs.URL, "http://", "http://ops:d0c-pa55word@", 1) + "/openapi.yaml"

	p := startGateway(t, "--openapi", docURL, "--upstream", backend.URL, "--listen", freeAddr(t),
		"--backend-bearer-token", abuseToken, "--backend-bearer-always", "--backend-headers", "X-Api-Key="+abuseKey,
		"--read-timeout", "1s", "--max-body-bytes", "4MiB", "--backend-max-response-bytes", "12MiB")
	sid := initialize(t, p.url)
	call := func(id int, name, args string) (int, []byte) {
		resp, body := post(t, p.url, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args))
		return resp.StatusCode, body
	}

	t.Run("a batch of 40,000 is refused whole", func(t *testing.T) {
		s := initializeAt(t, p.url, "2025-03-26")
		var b strings.Builder
		b.WriteString("[")
		for i := range 40_000 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i)
		}
		b.WriteString("]")
		resp, body := postAt(t, p.url, s, "2025-03-26", b.String())
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		require.Less(t, len(body), 512, "%s", body)
		require.Contains(t, string(body), "at most 50")
	})

	t.Run("HTML characters are not escaped", func(t *testing.T) {
		status, body := call(2, "big", "{}")
		require.Equal(t, http.StatusOK, status)
		require.NotContains(t, string(body[:min(len(body), 4096)]), `\u003c`)
		require.LessOrEqual(t, len(body), 2*len(bigBody)+1024, "text and structured copy, about 2N")
		require.Contains(t, string(body), `"structuredContent"`, "the whole result came back")
	})

	t.Run("credentials never come back", func(t *testing.T) {
		_, body := call(3, "echoHeaders", `{}`)
		require.NotContains(t, string(body), abuseToken)
		require.NotContains(t, string(body), abuseKey)
		require.Contains(t, string(body), "[redacted]")
		_, body = call(4, "fail", "{}")
		for _, leak := range []string{abuseToken, "goroutine", "main.go", "10.0.3.7", "hunter2"} {
			require.NotContains(t, string(body), leak)
		}
		require.Contains(t, string(body), "HTTP 500")
	})

	t.Run("echoes are short", func(t *testing.T) {
		var status int
		req, err := http.NewRequest(http.MethodPost, p.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", strings.Repeat("v", 500_000))
		resp, err := (&http.Client{}).Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "the gateway's own answer: %s", body)
		require.Less(t, len(body), 2048)
		status, body = call(5, strings.Repeat("t", 3_000_000), "{}")
		require.Less(t, len(body), 2048, "status %d", status)
	})

	t.Run("a huge argument is not sent", func(t *testing.T) {
		ids := make([]string, 500_000)
		for i := range ids {
			ids[i] = strconv.Itoa(i % 10)
		}
		before := itemsCalls.Load()
		_, body := call(6, "listItems", `{"ids":[`+strings.Join(ids, ",")+`]}`)
		require.Contains(t, string(body), "makes the request URL")
		require.Equal(t, before, itemsCalls.Load(), "nothing reached the backend")
	})

	t.Run("request bodies are bounded in size and time", func(t *testing.T) {
		addr := strings.TrimPrefix(strings.TrimSuffix(p.url, "/mcp"), "http://")
		head := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %s\r\n\r\n"
		for _, tc := range []struct {
			length, first string
			want          int
		}{{"2000000000", "", http.StatusRequestEntityTooLarge}, {"100", `{"jsonrpc":`, http.StatusRequestTimeout}} {
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			_, err = fmt.Fprintf(conn, head+tc.first, tc.length)
			require.NoError(t, err)
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			require.Equal(t, tc.want, resp.StatusCode)
			conn.Close()
		}
	})

	t.Run("eight big answers at once", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				status, _ := call(100+i, "big", "{}")
				require.Equal(t, http.StatusOK, status)
			})
		}
		wg.Wait()
		t.Logf("gateway peak resident memory after 8 concurrent 9.4 MB answers: %s", peakRSS(p.cmd.Process.Pid))
	})

	logs := stderrOf(p)
	require.NotContains(t, logs, "d0c-pa55word", "the document URL's password is not logged")
	require.Contains(t, logs, "REDACTED@")
	require.NotContains(t, logs, abuseToken)
}

// peakRSS reads a process's peak resident set (VmHWM) from /proc.
func peakRSS(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// initializeAt opens a session at the given revision.
func initializeAt(t *testing.T, url, version string) string {
	t.Helper()
	resp, body := postAt(t, url, "", version, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	return resp.Header.Get("Mcp-Session-Id")
}

// postAt is post with a chosen protocol revision.
func postAt(t *testing.T, url, sid, version, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp, []byte(b.String())
}
