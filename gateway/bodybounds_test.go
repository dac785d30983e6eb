package gateway

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rawPOST writes a request's head (and the first bytes of its body) on a
// raw connection and reads the response that comes back.
func rawPOST(t *testing.T, g *testGateway, head, firstBytes string) (*http.Response, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", g.hs.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	start := time.Now()
	_, err = conn.Write([]byte(head + firstBytes))
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	return resp, time.Since(start)
}

func TestBodyBounds(t *testing.T) {
	g := newTestGateway(t, Config{ReadTimeout: 300 * time.Millisecond, MaxBodyBytes: 1 << 20})
	head := func(length string) string {
		return "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
			"Accept: application/json, text/event-stream\r\nContent-Length: " + length + "\r\n\r\n"
	}
	// A declared length over the bound: 413 at once, no byte of the body read.
	resp, _ := rawPOST(t, g, head("2000000000"), "")
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

	// A body that trickles: cut off at the read timeout with 408.
	resp, took := rawPOST(t, g, head("100"), `{"jsonrpc":`)
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	require.Less(t, took, 5*time.Second)

	// The legacy transport's messages endpoint has the same bounds.
	resp, _ = rawPOST(t, g, strings.Replace(head("2000000000"), "/mcp ", "/mcp/messages?sessionId=x ", 1), "")
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

	// A body that arrives in time is served, and a stream opened after it
	// outlives the read timeout.
	sid := g.initialize(t, "2025-11-25")
	s := g.openGET(t, sid, "")
	time.Sleep(500 * time.Millisecond)
	push(t, g, sid, "still here")
	require.Equal(t, "still here", eventText(t, s.next(t)))
}
