package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/demo"
)

// User information in a URL and the configured credentials never reach
// the log or stderr.
func TestLogsAndErrorsAreRedacted(t *testing.T) {
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(demo.OpenAPI())
	}))
	defer docs.Close()
	withUser := strings.Replace(docs.URL, "http://", "http://alice:s3cr3t-pw@", 1)
	var stdout, stderr bytes.Buffer
	code := runTools(context.Background(), []string{"--openapi", withUser + "/openapi.yaml", "--log-level", "debug",
		"--backend-bearer-token", "tok-abcdef123"}, &stdout, &stderr, env(nil))
	require.Equal(t, 0, code, stderr.String())
	require.Contains(t, stderr.String(), "REDACTED@")
	require.NotContains(t, stderr.String(), "s3cr3t-pw")
	require.NotContains(t, stderr.String(), "alice")

	stderr.Reset()
	code = runTools(context.Background(), []string{"--openapi", "http://bob:hunter22@127.0.0.1:1/openapi.yaml"}, &stdout, &stderr, env(nil))
	require.NotEqual(t, 0, code)
	require.NotContains(t, stderr.String(), "hunter22", "a failed load does not print the password")

	var buf bytes.Buffer
	log := slog.New(redactingHandler{next: slog.NewTextHandler(&buf, nil), r: newRedactor(&config{BackendBearerToken: "tok-abcdef123", BackendAPIKeys: map[string]string{"k": "key-0987654"}})})
	log.With("url", "redis://:pw123456@redis:6379/0").Warn("calling with tok-abcdef123", "err", errors.New("dial redis://u:pw123456@redis:6379 failed"), "key", "key-0987654",
		slog.Group("g", "inner", "tok-abcdef123"))
	for _, secret := range []string{"tok-abcdef123", "key-0987654", "pw123456"} {
		require.NotContains(t, buf.String(), secret)
	}
	require.Contains(t, buf.String(), "[redacted]")

	r := redactor{}
	require.Equal(t, "https://h/doc.yaml?v=1&access_token=REDACTED&x=2", r.scrub("https://h/doc.yaml?v=1&access_token=abc123&x=2"))
	require.Equal(t, "https://h/doc.yaml?sig=REDACTED", r.scrub("https://h/doc.yaml?sig=zzz"))
}
