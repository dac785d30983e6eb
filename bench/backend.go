package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/bench/payload"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// sizes are the payloads the backend serves, by the value of its size
// query parameter.
var sizes = []string{"1k", "10k"}

// payloads holds the backend's JSON bodies: an object with an items array,
// grown item by item to about 1 KB and 10 KB.
var payloads = map[string][]byte{
	"1k":  makePayload(1 << 10),
	"10k": makePayload(10 << 10),
}

func makePayload(target int) []byte {
	var l payload.List
	var out []byte
	for i := 1; ; i++ {
		l.Items = append(l.Items, payload.Item{
			ID: i, Name: "item " + strconv.Itoa(i), SKU: fmt.Sprintf("SKU-%06d", i),
			Price: float64(i*137%10000) / 100, Tags: []string{"alpha", "beta"}, Active: i%3 != 0,
		})
		b, _ := json.Marshal(l)
		if len(b) > target {
			return out
		}
		out = b
	}
}

// openAPIDoc describes the backend: one GET operation whose size argument
// picks the payload.
func openAPIDoc(serverURL string) []byte {
	doc := map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "bench backend", "version": "1"},
		"servers": []any{map[string]any{"url": serverURL}},
		"paths": map[string]any{
			"/payload": map[string]any{
				"get": map[string]any{
					"operationId": "getPayload",
					"summary":     "A JSON payload of about the requested size.",
					"parameters": []any{map[string]any{
						"name": "size", "in": "query", "required": true,
						"schema": map[string]any{"type": "string", "enum": sizes},
					}},
					"responses": map[string]any{
						"200": map[string]any{
							"description": "items",
							"content": map[string]any{"application/json": map[string]any{
								"schema": map[string]any{"$ref": "#/components/schemas/ItemList"},
							}},
						},
					},
				},
			},
		},
		"components": map[string]any{"schemas": map[string]any{
			"ItemList": map[string]any{
				"type": "object", "required": []string{"items"},
				"properties": map[string]any{"items": map[string]any{
					"type": "array", "items": map[string]any{"$ref": "#/components/schemas/Item"},
				}},
			},
			"Item": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"id":     map[string]any{"type": "integer"},
					"name":   map[string]any{"type": "string"},
					"sku":    map[string]any{"type": "string"},
					"price":  map[string]any{"type": "number"},
					"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
					"active": map[string]any{"type": "boolean"},
				},
			},
		}},
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return b
}

// backendHandler serves GET /payload?size=1k|10k.
func backendHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /payload", func(w http.ResponseWriter, r *http.Request) {
		body, ok := payloads[r.URL.Query().Get("size")]
		if !ok {
			http.Error(w, `{"error":"size must be 1k or 10k"}`, http.StatusBadRequest)
			return
		}
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		_, _ = w.Write(body)
	})
	return mux
}

// newTransport is the gateway's backend transport, so that the proxy and the
// SDK server dial and pool the same way.
func newTransport() *http.Transport { return call.NewTransport() }

// newProxy is the "plain reverse proxy" baseline: every request goes to
// target unchanged.
func newProxy(target *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: newTransport(),
	}
}

// newRoundRobin spreads requests over targets in turn: the load balancer in
// front of gateway replicas.
func newRoundRobin(targets []*url.URL) *httputil.ReverseProxy {
	var next atomic.Uint64
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			t := targets[(next.Add(1)-1)%uint64(len(targets))]
			r.SetURL(t)
			r.Out.Host = r.In.Host // the gateway checks Host; keep the client's
		},
		Transport: newTransport(),
	}
}

// serve runs h on a fresh loopback port with the gateway's server settings
// and prints "listening http://addr" as the first line of stdout.
func serve(h http.Handler) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "listening http://%s\n", ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	return srv.Serve(ln)
}

// runRole runs one helper server (or the decode helper) until killed.
func runRole(role string, args []string) error {
	switch role {
	case "backend":
		return serve(backendHandler())
	case "proxy":
		if len(args) != 1 {
			return fmt.Errorf("-role proxy needs one target URL")
		}
		u, err := url.Parse(args[0])
		if err != nil {
			return err
		}
		return serve(newProxy(u))
	case "rr":
		var us []*url.URL
		for _, a := range args {
			u, err := url.Parse(a)
			if err != nil {
				return err
			}
			us = append(us, u)
		}
		if len(us) == 0 {
			return fmt.Errorf("-role rr needs target URLs")
		}
		rr := newRoundRobin(us)
		return serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Without full duplex, net/http closes the request body when a
			// response larger than its buffer starts (it drains unread
			// bodies before replying), while the transport may still be
			// about to read the body's EOF to finish forwarding it: the
			// backend connection is then torn down mid-response and the
			// client sees unexpected EOF.
			_ = http.NewResponseController(w).EnableFullDuplex()
			rr.ServeHTTP(w, r)
		}))
	case "decode":
		// The baseline for loading an OpenAPI document: read the file and
		// decode it with encoding/json into generic values, nothing else.
		if len(args) != 1 {
			return fmt.Errorf("-role decode needs one file")
		}
		data, err := os.ReadFile(args[0])
		if err != nil {
			return err
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return err
		}
		_, ok := v.(map[string]any)
		fmt.Fprintln(os.Stdout, "decoded", ok)
		return nil
	}
	return fmt.Errorf("unknown role %q", role)
}
