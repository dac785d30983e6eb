package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

const progressDoc = `openapi: 3.0.3
info: {title: progress, version: "1"}
paths:
  /report:
    get:
      operationId: report
      responses:
        '200': {description: events, content: {text/event-stream: {schema: {type: string}}}}
  /jobs:
    post:
      operationId: startJob
      responses:
        '202': {description: accepted}
        '200':
          description: done
          content:
            application/json:
              schema: {type: object, properties: {done: {type: boolean}}}
  /slow:
    get:
      operationId: slow
      responses:
        '200': {description: text, content: {text/plain: {schema: {type: string}}}}
`

// TestProgressFromStreamingAndAsyncBackends: the Go SDK client gets
// increasing progress and the backend's log events from an event-stream
// backend, from a 202-polling one, and heartbeats from a slow one.
func TestProgressFromStreamingAndAsyncBackends(t *testing.T) {
	var polls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET /report", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(w, "event: progress\ndata: {\"progress\": %d, \"total\": 3, \"message\": \"part %d\"}\n\n", i, i)
			fmt.Fprintf(w, "event: log\ndata: {\"level\": \"info\", \"data\": \"wrote part %d\"}\n\n", i)
			_ = rc.Flush()
		}
		fmt.Fprint(w, "event: result\ndata: {\"parts\": 3}\n\n")
	})
	mux.HandleFunc("POST /jobs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/jobs/1")
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusAccepted)
	})
	mux.HandleFunc("GET /jobs/1", func(w http.ResponseWriter, r *http.Request) {
		if polls.Add(1) < 3 {
			w.Header().Set("Retry-After", "0")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprintf(w, `{"progress": %d, "total": 3}`, polls.Load())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"done": true}`)
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "finally")
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	g := newGatewayFor(t, Config{ProgressHeartbeat: 50 * time.Millisecond}, []byte(progressDoc), hs.URL)

	for _, version := range []string{"2025-11-25", ""} {
		t.Run("revision "+version, func(t *testing.T) {
			var mu sync.Mutex
			var progress []*sdk.ProgressNotificationParams
			var logs []string
			client := sdk.NewClient(&sdk.Implementation{Name: "progress-test", Version: "1"}, &sdk.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, req.Params)
					mu.Unlock()
				},
				LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
					mu.Lock()
					logs = append(logs, fmt.Sprint(req.Params.Data))
					mu.Unlock()
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var opts *sdk.ClientSessionOptions
			if version != "" {
				opts = &sdk.ClientSessionOptions{ProtocolVersion: version}
			}
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: g.url, MaxRetries: -1}, opts)
			require.NoError(t, err)
			defer cs.Close()
			if version != "" {
				require.NoError(t, cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}))
			}
			for _, tc := range []struct {
				tool, want, message string
			}{
				{"report", `"parts": 3`, "part 2 (2 of 3)"},
				{"startJob", `"done": true`, "(2 of 3)"},
				{"slow", "finally", "waiting for the backend"},
			} {
				mu.Lock()
				progress, logs = nil, nil
				mu.Unlock()
				polls.Store(0)
				params := &sdk.CallToolParams{Name: tc.tool}
				params.SetProgressToken("p-" + tc.tool)
				res, err := cs.CallTool(ctx, params)
				require.NoError(t, err)
				require.False(t, res.IsError, "%s: %v", tc.tool, text(res))
				require.Contains(t, text(res), tc.want)
				// The client hands notifications to its handlers on their
				// own goroutine: wait until the ones sent before the result
				// are through.
				snapshot := func() ([]*sdk.ProgressNotificationParams, []string, string) {
					mu.Lock()
					defer mu.Unlock()
					var messages []string
					for _, p := range progress {
						messages = append(messages, p.Message)
					}
					return append([]*sdk.ProgressNotificationParams(nil), progress...), append([]string(nil), logs...), fmt.Sprint(messages)
				}
				require.Eventually(t, func() bool {
					_, gotLogs, messages := snapshot()
					return strings.Contains(messages, tc.message) && strings.Contains(messages, "response read") &&
						(tc.tool != "report" || version == "" || slices.Contains(gotLogs, "wrote part 2"))
				}, 10*time.Second, 10*time.Millisecond, "%s: progress and logs arrive", tc.tool)
				got, _, _ := snapshot()
				for i, p := range got {
					require.Equal(t, "p-"+tc.tool, p.ProgressToken)
					if i > 0 {
						require.Greater(t, p.Progress, got[i-1].Progress, "%s: progress only increases", tc.tool)
					}
				}
			}
		})
	}
}
