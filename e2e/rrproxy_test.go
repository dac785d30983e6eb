package e2e

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// rrProxy is a round-robin reverse proxy in front of gateway replicas: every
// request, each GET included, goes to the next replica in turn, with no
// session affinity. Responses are flushed as they arrive (FlushInterval -1),
// so SSE streams pass through unbuffered.
type rrProxy struct {
	URL string // the proxied MCP endpoint

	backends []*url.URL
	next     atomic.Uint64

	mu   sync.Mutex
	seen []proxiedRequest
}

// proxiedRequest records which replica one request went to.
type proxiedRequest struct {
	method  string // HTTP method
	session string // Mcp-Session-Id or ?sessionId=, "" for initialize
	replica int
}

// newRRProxy starts a proxy over the replicas' base URLs (scheme://host:port),
// stopped when t ends. mountPath is appended to the proxy's own URL.
func newRRProxy(t *testing.T, mountPath string, replicaBases []string) *rrProxy {
	t.Helper()
	p := &rrProxy{}
	for _, b := range replicaBases {
		u, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		p.backends = append(p.backends, u)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			i := int((p.next.Add(1) - 1) % uint64(len(p.backends)))
			r.SetURL(p.backends[i]) // also sets Host to the replica's loopback address
			p.mu.Lock()
			sid := r.In.Header.Get("Mcp-Session-Id")
			if sid == "" {
				sid = r.In.URL.Query().Get("sessionId") // the 2024-11-05 transport's POSTs
			}
			p.seen = append(p.seen, proxiedRequest{method: r.In.Method, session: sid, replica: i})
			p.mu.Unlock()
		},
		FlushInterval: -1,
		// Its own transport, so no other test's cleanup (httptest.Server.Close
		// closes http.DefaultTransport's idle connections) reaches it.
		Transport: transport,
		// A client dropping a push stream is routine here, not worth a log line.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The response is flushed as soon as the replica answers, which
		// may be before the outgoing request's body has been read to EOF;
		// an HTTP/1 server closes the request body once the response starts
		// unless told the handler is full duplex, and the transport then
		// drops the upstream connection mid-response.
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL + mountPath
	return p
}

// replicasFor returns the set of replicas that served requests naming sid.
func (p *rrProxy) replicasFor(sid string) map[int]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[int]int{}
	for _, r := range p.seen {
		if r.session == sid {
			out[r.replica]++
		}
	}
	return out
}
