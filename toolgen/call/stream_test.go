package call

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// ctStreamOutput is an output schema for the stream tests' result events.
const ctStreamOutput = `{"type":"object","properties":{"a":{"type":"integer"}}}`

func TestEventStreamMapping(t *testing.T) {
	doc := ctDoc(t, ctResponseSpec)
	type observed struct {
		Stage               Stage
		Done, Total         float64
		Message             string
		Level, Logger, Data string
	}
	cases := []struct {
		name       string
		stream     string
		output     bool
		wantError  bool
		wantText   string
		structured string
		events     []observed // the backend's reports, in order
	}{
		{"progress, log, then result", "" +
			"event: progress\ndata: {\"progress\": 1, \"total\": 4, \"message\": \"one\\u0007 step\"}\n\n" +
			"event: progress\ndata: {\"progress\": 1}\n\n" + // not more than the last: dropped
			"event: progress\ndata: {\"progress\": \"two\"}\n\n" + // malformed: ignored
			"event: progress\ndata: not json\n\n" +
			"event: log\ndata: {\"level\": \"warning\", \"logger\": \"db\", \"data\": {\"q\": 1}}\n\n" +
			"event: log\ndata: {\"level\": \"loud\", \"data\": \"x\"}\n\n" +
			"event: log\ndata: {\"level\": \"error\"}\n\n" + // no data: ignored
			"event: progress\ndata: {\"progress\": 3, \"total\": 0}\n\n" +
			"event: result\ndata: {\"a\": 1}\n\n" +
			"event: message\ndata: after the result\n\n",
			false, false, `{"a": 1}`, `{"a":1}`, []observed{
				{Stage: StageBackendProgress, Done: 1, Total: 4, Message: "one step"},
				{Stage: StageBackendLog, Level: "warning", Logger: "db", Data: `{"q": 1}`},
				{Stage: StageBackendLog, Level: "info", Data: `"x"`},
				{Stage: StageBackendProgress, Done: 3},
			}},
		{"multi-line data, CRLF, comments", "data: line 1\r\ndata: line 2\r\n\r\n: a comment\r\nid: 7\r\nretry: 10\r\ndata:three\r\n\r\n",
			false, false, "line 1\nline 2\nthree", "", nil},
		{"CR line ends", "data: a\rdata: b\r\rdata: c\r\r", false, false, "a\nb\nc", "", nil},
		{"byte order mark", "\xef\xbb\xbfdata: x\n\n", false, false, "x", "", nil},
		{"a multi-line result", "event: result\ndata: {\"a\":\ndata: 2}\n\n", false, false, "{\"a\":\n2}", `{"a":2}`, nil},
		{"a last event without its blank line", "event: progress\ndata: {\"progress\": 0.5}\n\nevent: result\ndata: {\"a\": 3}",
			false, false, `{"a": 3}`, `{"a":3}`, []observed{{Stage: StageBackendProgress, Done: 0.5}}},
		{"result checked against the output schema", "event: result\ndata: {\"a\": 4}\n\n", true, false, `{"a": 4}`, `{"a":4}`, nil},
		{"result that breaks the output schema", "event: result\ndata: {\"a\": \"four\"}\n\n", true, true, "", "", nil},
		{"result that is not an object", "event: result\ndata: [1]\n\n", true, true,
			"The backend call succeeded (200 OK), but its response does not fit this tool's output schema: the schema expects a JSON object but the response is an array. The response was:\n[1]", "", nil},
		{"error event", "event: progress\ndata: {\"progress\": 1}\n\nevent: error\ndata: quota exceeded\ndata: at /srv/app/quota.go:12\n\nevent: result\ndata: {}\n\n",
			false, true, "backend reported an error for GET /things/1: quota exceeded", "", []observed{{Stage: StageBackendProgress, Done: 1}}},
		{"error event echoing a credential", "event: error\ndata: bad key " + ctSecret + "\n\n",
			false, true, "backend reported an error for GET /things/1: bad key [redacted]", "", nil},
		{"plain streaming text", "data: hello\n\nevent: message\ndata: world\n\nevent: custom\ndata: !\n\n",
			false, false, "hello\nworld\n!", "", nil},
		{"plain text for a tool with an output schema", "data: hello\n\n", true, true,
			"The backend call succeeded (200 OK), but its response does not fit this tool's output schema: the response is text/plain, not JSON. The response was:\nhello", "", nil},
		{"empty stream", "", false, true, "the backend's event stream ended without a result", "", nil},
		{"only reports", "event: progress\ndata: {\"progress\": 1}\n\n: keep-alive\n\nevent: x\n\n", false, true,
			"the backend's event stream ended without a result", "", []observed{{Stage: StageBackendProgress, Done: 1}}},
		{"oversized", "data: " + strings.Repeat("x", 2048) + "\n\n", false, true,
			"the backend's event stream exceeded 1024 bytes, the most this gateway reads", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, ctReply(200, "text/event-stream; charset=utf-8", []byte(c.stream)))
			caller := ctCaller(t, doc, Config{BaseURL: backend.URL, BearerToken: ctSecret, BearerAlways: true, MaxResponseBytes: 1024})
			tool := ctTool(t, doc, "GET", "/things/{id}", func(b *toolgen.Binding) {
				if c.output {
					b.HasOutputSchema, b.OutputSchema = true, json.RawMessage(ctStreamOutput)
				}
			})
			var got []observed
			var fixed []Stage
			res, status, in := ctCallWith(t, caller, tool, `{"id": "1"}`, CallOptions{Observe: func(p Progress) {
				switch p.Stage {
				case StageSent, StageAnswered, StageMapped:
					fixed = append(fixed, p.Stage)
					return
				}
				require.Equal(t, 200, p.Status)
				got = append(got, observed{p.Stage, p.Done, p.Total, p.Message, p.Level, p.Logger, string(p.Data)})
			}})
			require.Nil(t, in)
			require.Equal(t, c.wantError, res.IsError, ctText(res))
			if c.wantText != "" {
				require.Equal(t, c.wantText, ctText(res))
			}
			require.Equal(t, c.structured, ctStructured(t, res))
			require.Equal(t, c.events, got)
			require.Equal(t, []Stage{StageSent, StageAnswered, StageMapped}, fixed)
			require.Equal(t, 200, status)
		})
	}
}

// TestEventStreamIncremental: events are observed as they arrive, while
// the stream is still open, and an endless stream is cut at the size
// bound.
func TestEventStreamIncremental(t *testing.T) {
	doc := ctDoc(t, ctResponseSpec)
	t.Run("observed before the stream ends", func(t *testing.T) {
		seen := make(chan struct{})
		backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: progress\ndata: {\"progress\": 1}\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-seen: // the caller observed the progress of an open stream
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Second):
				_, _ = io.WriteString(w, "event: error\ndata: progress was not observed while the stream was open\n\n")
				return
			}
			_, _ = io.WriteString(w, "event: result\ndata: {\"done\": true}\n\n")
		})
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		tool := ctTool(t, doc, "GET", "/things/{id}")
		res, _, _ := ctCallWith(t, caller, tool, `{"id": "1"}`, CallOptions{Observe: func(p Progress) {
			if p.Stage == StageBackendProgress {
				close(seen)
			}
		}})
		ctOK(t, res)
		require.Equal(t, `{"done":true}`, ctStructured(t, res))
	})

	t.Run("an endless stream is bounded", func(t *testing.T) {
		backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for r.Context().Err() == nil {
				if _, err := io.WriteString(w, "data: tick\n\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		})
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL, MaxResponseBytes: 4096})
		res, _, _ := ctCallWith(t, caller, ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1"}`, CallOptions{})
		require.True(t, res.IsError)
		require.Equal(t, "the backend's event stream exceeded 4096 bytes, the most this gateway reads", ctText(res))
	})

	t.Run("a stalled stream ends with the call's timeout", func(t *testing.T) {
		backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: partial\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL, ToolTimeouts: map[string]time.Duration{"getThing": 200 * time.Millisecond}})
		res, _, _ := ctCallWith(t, caller, ctTool(t, doc, "GET", "/things/{id}"), `{"id": "1"}`, CallOptions{})
		require.True(t, res.IsError)
		require.Equal(t, "backend timed out after 200ms", ctText(res))
	})

	t.Run("a non-2xx event stream is an error", func(t *testing.T) {
		backend := ctNewBackend(t, ctReply(400, "text/event-stream", []byte("event: result\ndata: {}\n\n")))
		caller := ctCaller(t, doc, Config{BaseURL: backend.URL})
		p := caller.CallPooled(context.Background(), ctTool(t, doc, "GET", "/things/{id}"), json.RawMessage(`{"id": "1"}`), nil)
		defer p.Release()
		require.True(t, p.IsError())
		require.Equal(t, 400, p.BackendStatus())
	})
}
