// Command sdkserver is what a user would write instead of deploying
// mcp-gateway: a minimal MCP server on the official Go SDK whose one
// hand-written tool makes the bench backend's REST call and returns its
// items as structured content. The bench command measures it beside the
// gateway.
//
//	sdkserver -backend http://127.0.0.1:PORT
//
// It listens on a free loopback port and prints "listening http://ADDR/mcp".
// It imports only bench/payload and toolgen/call (for the same backend
// transport settings) of the gateway: it must stay what a user would write.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/bench/payload"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

type payloadArgs struct {
	Size string `json:"size" jsonschema:"1k or 10k"`
}

func main() {
	backend := flag.String("backend", "", "base URL of the bench backend")
	flag.Parse()
	if *backend == "" {
		fmt.Fprintln(os.Stderr, "sdkserver: -backend is required")
		os.Exit(2)
	}
	if err := run(*backend); err != nil {
		fmt.Fprintln(os.Stderr, "sdkserver:", err)
		os.Exit(1)
	}
}

func run(backend string) error {
	// The gateway's backend transport settings, so both pool alike.
	// The gateway's backend transport settings, for a like-for-like comparison.
	client := &http.Client{Transport: call.NewTransport(), Timeout: 30 * time.Second}

	server := mcp.NewServer(&mcp.Implementation{Name: "bench-sdk", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "getPayload", Description: "A JSON payload of about the requested size."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in payloadArgs) (*mcp.CallToolResult, payload.List, error) {
			var out payload.List
			if in.Size != "1k" && in.Size != "10k" {
				return nil, out, fmt.Errorf("size must be 1k or 10k")
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, backend+"/payload?size="+url.QueryEscape(in.Size), nil)
			if err != nil {
				return nil, out, err
			}
			req.Header.Set("Accept", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return nil, out, fmt.Errorf("backend unreachable")
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return nil, out, fmt.Errorf("backend answered %s", resp.Status)
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				return nil, out, fmt.Errorf("backend sent invalid JSON")
			}
			return nil, out, nil
		})
	// JSON responses rather than the default SSE stream: the cheaper of the
	// SDK's two answers, and the one the gateway gives a plain call.
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: true, SessionTimeout: 30 * time.Minute})

	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("listening http://%s/mcp\n", ln.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	return srv.Serve(ln)
}
