package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/demo"
	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// waitingFor serves the document after failing times with status.
func waitingFor(t *testing.T, status int, failing int32) (url string, hits *atomic.Int32) {
	hits = &atomic.Int32{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= failing {
			http.Error(w, "the backend's own words", status)
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(demo.OpenAPI())
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/openapi.yaml", hits
}

func readTestDocument(t *testing.T, url string, status *startStatus) ([]byte, error) {
	cfg, _, err := loadConfig("mcp-gateway", []string{"--openapi", url}, env(nil), io.Discard)
	require.NoError(t, err)
	return readWithWait(context.Background(), newSource(cfg), time.Minute, status, slog.New(slog.DiscardHandler))
}

// A backend answering 5xx is waited for; one answering 404 is not (it
// is up, and the path is wrong: waiting does not fix it).
func TestReadWithWaitRetriesA5xxNotA404(t *testing.T) {
	url, hits := waitingFor(t, http.StatusServiceUnavailable, 2)
	status := &startStatus{}
	data, err := readTestDocument(t, url, status)
	require.NoError(t, err)
	require.Equal(t, demo.OpenAPI(), data)
	require.EqualValues(t, 3, hits.Load())
	require.Equal(t, "loading the OpenAPI document (attempt 2): the backend answers 503 Service Unavailable", status.get())

	url, hits = waitingFor(t, http.StatusNotFound, 1)
	_, err = readTestDocument(t, url, &startStatus{})
	require.Error(t, err)
	require.EqualValues(t, 1, hits.Load(), "no retry")
}

func TestRetryableFetch(t *testing.T) {
	status := func(code int) error { return &openapi.StatusError{URL: "http://h/d", StatusCode: code, Status: "x"} }
	for _, c := range []struct {
		location string
		err      error
		want     bool
	}{
		{"http://h/d", status(500), true},
		{"https://h/d", status(503), true},
		{"http://h/d", status(429), true},
		{"http://h/d", status(408), true},
		{"http://h/d", status(404), false},
		{"http://h/d", status(401), false},
		{"http://h/d", io.ErrUnexpectedEOF, true},
		{"http://h/d", openapi.ErrTooLarge, false},
		{"doc.yaml", io.ErrUnexpectedEOF, false},
	} {
		require.Equal(t, c.want, retryableFetch(c.location, c.err), "%s %v", c.location, c.err)
	}
}

// What the unauthenticated probes and MCP answers say while waiting is
// the gateway's words, never the backend's reason phrase.
func TestWaitReasonIsTheStandardText(t *testing.T) {
	err := &openapi.StatusError{URL: "http://internal:8080/d", StatusCode: 502, Status: "502 host db-7.internal is down"}
	require.Equal(t, "loading the OpenAPI document (attempt 4): the backend answers 502 Bad Gateway", waitReason(4, err))
	status := &startStatus{}
	status.set(waitReason(4, err))
	rec := httptest.NewRecorder()
	startingHandler(status, true, false, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.NotContains(t, rec.Body.String(), "502")
	require.Contains(t, rec.Body.String(), "-32003")
}
