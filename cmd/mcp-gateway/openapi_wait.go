package main

// Waiting for the backend's document. A sidecar starts with its backend,
// which may not serve its OpenAPI document yet: the gateway listens at
// once (so that probes reach it: /healthz 200, /readyz 503 saying what it
// waits for, MCP paths 503 with Retry-After) and retries fetching the
// document with backoff until openapi_wait has passed. Only fetching is
// retried: a document that arrives but does not load stops the gateway at
// once, since waiting would not fix it.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	mcpwire "github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/internal/lograte"
	"github.com/mcp-gateway/mcp-gateway/openapi"
)

func init() {
	options = append(options, option{key: "openapi_wait", def: "60s",
		usage: "how long the gateway retries fetching an OpenAPI document URL that does not answer yet (no connection, a timeout, 5xx, 429), with backoff, listening meanwhile (/readyz fails); 0 means it exits at once; a document that arrives but is invalid stops it at once",
		set:   duration(func(c *config) *time.Duration { return &c.OpenAPIWait })})
}

// Backoff between attempts: doubling from waitFirst up to waitMax, each
// delay drawn from its upper half so replicas started together spread out.
const (
	waitFirst = 250 * time.Millisecond
	waitMax   = 5 * time.Second
)

// errStopped: the process was told to stop while it waited.
var errStopped = errors.New("stopped while waiting for the OpenAPI document")

// retryableFetch reports whether a failed read of the document at location
// may succeed later: a URL whose server is not up yet (no connection, a
// timeout, 5xx, 429, 408). A file, a 4xx, a certificate the gateway does
// not trust, a document too large or from a forbidden origin are final.
func retryableFetch(location string, err error) bool {
	if !strings.HasPrefix(location, "http://") && !strings.HasPrefix(location, "https://") {
		return false
	}
	var se *openapi.StatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 500 || se.StatusCode == http.StatusTooManyRequests || se.StatusCode == http.StatusRequestTimeout
	}
	var oe *openapi.OriginError
	var ce *tls.CertificateVerificationError
	if errors.As(err, &oe) || errors.As(err, &ce) || errors.Is(err, openapi.ErrTooLarge) {
		return false
	}
	return true // refused, reset, unresolved, timed out
}

// waitReason is what /readyz says while the gateway waits: the kind of
// failure, not its text (which names internal hosts and addresses), nor
// the backend's reason phrase (its own words, shown unauthenticated).
func waitReason(attempt int, err error) string {
	what := "the backend does not answer yet"
	var se *openapi.StatusError
	if errors.As(err, &se) {
		what = "the backend answers " + strconv.Itoa(se.StatusCode) + " " + http.StatusText(se.StatusCode)
	}
	return fmt.Sprintf("loading the OpenAPI document (attempt %d): %s", attempt, what)
}

// readWithWait reads the document, retrying fetch failures until wait has
// passed (0: no retry); status says why the gateway is not ready yet. An
// error after giving up is the last attempt's.
func readWithWait(ctx context.Context, src *source, wait time.Duration, status *startStatus, log *slog.Logger) ([]byte, error) {
	deadline := time.Now().Add(wait)
	delay := waitFirst
	var limit lograte.Limiter
	for attempt := 1; ; attempt++ {
		data, err := src.read(ctx, false)
		if err == nil {
			return data, nil
		}
		if ctx.Err() != nil {
			return nil, errStopped
		}
		left := time.Until(deadline)
		if wait <= 0 || !retryableFetch(src.location, err) {
			return nil, err
		}
		if left <= 0 {
			return nil, fmt.Errorf("%w (gave up after %d attempts in openapi_wait %s)", err, attempt, wait)
		}
		status.set(waitReason(attempt, err))
		sleep := min(delay/2+rand.N(delay/2+1), left)
		if ok, held := limit.Allow("openapi_wait", time.Now()); ok {
			args := []any{"attempt", attempt, "err", err, "retry_in", sleep.Round(time.Millisecond), "gives_up_in", left.Round(time.Second)}
			if held > 0 {
				args = append(args, "suppressed", held)
			}
			log.Warn("the OpenAPI document cannot be fetched yet; retrying (openapi_wait)", args...)
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errStopped
		case <-t.C:
		}
		delay = min(2*delay, waitMax)
	}
}

// startStatus is what the gateway is doing before it serves.
type startStatus struct{ reason atomic.Pointer[string] }

func (s *startStatus) set(reason string) { s.reason.Store(&reason) }

func (s *startStatus) get() string {
	if r := s.reason.Load(); r != nil {
		return *r
	}
	return "starting"
}

// swapHandler serves the handler set last: the starting one until the
// endpoints are built, then theirs.
type swapHandler struct{ h atomic.Pointer[http.Handler] }

func (s *swapHandler) set(h http.Handler) { s.h.Store(&h) }

func (s *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

// startingHandler answers while the gateway is not serving yet: (with
// admin) /healthz 200, the process being alive, /readyz 503 with the
// reason and /metrics from reg (how long the wait is taking shows); (with
// mcp) every other path 503 with a JSON-RPC error and Retry-After.
func startingHandler(status *startStatus, mcp, admin bool, reg prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	if admin {
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		})
		mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": status.get()})
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !mcp {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		w.Header().Set("Retry-After", "5")
		// Not the reason /readyz gives: MCP clients need not learn how the
		// backend is doing.
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
			"code": mcpwire.CodeUnavailable, "message": "Service Unavailable: the gateway is starting; retry later"}})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write(append(body, '\n'))
	})
	return mux
}
