package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/internal/lograte"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// translate is the one map from errors to what the client sees; it logs
// exactly the failures whose text the client does not get, once each.
func TestTranslate(t *testing.T) {
	var logs bytes.Buffer
	s, err := New(Config{}, Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	cases := []struct {
		name   string
		err    error
		status int
		code   int
		text   string
		logged bool
	}{
		{"mcp error", mcp.InvalidParams("bad %s", "x"), 0, mcp.CodeInvalidParams, "bad x", false},
		{"rejection", reject(http.StatusForbidden, mcp.CodeInvalidRequest, "Forbidden"), http.StatusForbidden, mcp.CodeInvalidRequest, "Forbidden", false},
		{"wrapped mcp error", fmt.Errorf("step: %w", mcp.NewError(mcp.CodeMethodNotFound, "nope")), 0, mcp.CodeMethodNotFound, "nope", false},
		{"session not found", fmt.Errorf("get: %w", sessions.ErrNotFound), http.StatusNotFound, mcp.CodeSessionNotFound,
			"Session not found: it ended or expired; send initialize to start a new one", false},
		{"store down", fmt.Errorf("%w: dial tcp 10.0.0.7:6379: refused", sessions.ErrUnavailable), http.StatusServiceUnavailable, mcp.CodeUnavailable,
			"Service Unavailable: the session store is unavailable", true},
		{"bus down", busError(errors.New("redis: connection pool timeout")), http.StatusServiceUnavailable, mcp.CodeUnavailable,
			"Service Unavailable: the message bus is unavailable", true},
		{"internal", errors.New("nil map write in handler"), 0, mcp.CodeInternalError, "Internal error", true},
		{"a store's plain error", storeError(errors.New("corrupt record")), http.StatusServiceUnavailable, mcp.CodeUnavailable,
			"Service Unavailable: the session store is unavailable", true},
		{"a store's not found", storeError(sessions.ErrNotFound), http.StatusNotFound, mcp.CodeSessionNotFound,
			"Session not found: it ended or expired; send initialize to start a new one", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			s.logLimit = lograte.Limiter{} // each case is the first of its kind
			got := s.translate(context.Background(), "test", tc.err)
			require.Equal(t, tc.status, got.Status)
			require.Equal(t, tc.code, got.Code)
			require.Equal(t, tc.text, got.Message)
			require.Equal(t, tc.logged, logs.Len() > 0, logs.String())
			if tc.logged {
				require.Equal(t, 1, strings.Count(logs.String(), "\n"), "logged once")
				require.Contains(t, logs.String(), tc.err.Error(), "the log has the internal text")
			}
		})
	}
	// An outage fails every request: its line is written once a second.
	logs.Reset()
	s.logLimit = lograte.Limiter{}
	down := fmt.Errorf("%w: dial tcp: refused", sessions.ErrUnavailable)
	for range 100 {
		s.translate(context.Background(), "test", down)
	}
	require.Equal(t, 1, strings.Count(logs.String(), "\n"), logs.String())
}
