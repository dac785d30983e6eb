package call

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

const ctAsyncSpec = `
openapi: 3.0.3
info: {title: async, version: "1"}
components:
  securitySchemes:
    queryKey: {type: apiKey, in: query, name: api_key}
    oauth:
      type: oauth2
      flows:
        clientCredentials: {tokenUrl: "https://auth.test/token", scopes: {}}
paths:
  /jobs:
    post:
      operationId: createJob
      security: [{queryKey: [], oauth: []}]
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, properties: {n: {type: integer}}}
      responses:
        "200": {description: done}
        "202": {description: accepted}
`

const ctQueryKey = "query-key-value-1"

// ctJobs is a backend of asynchronous jobs: POST /jobs answers with
// accepted, every GET with status(n, w, r) for the n-th GET (from 1).
type ctJobs struct {
	*ctBackend
	polls atomic.Int64
}

func ctNewJobs(t *testing.T, accepted http.HandlerFunc, status func(n int, w http.ResponseWriter, r *http.Request)) *ctJobs {
	j := &ctJobs{}
	j.ctBackend = ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			accepted(w, r)
			return
		}
		status(int(j.polls.Add(1)), w, r)
	})
	return j
}

// ctAccepted answers 202 with headers (name, value pairs; HOST in a
// value is the request's host) and a JSON body.
func ctAccepted(body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], strings.ReplaceAll(headers[i+1], "HOST", r.Host))
		}
		if body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, body)
	}
}

func ctAsyncCaller(t *testing.T, doc *openapi.Document, backend *ctBackend, tokens *tkEndpoint) *Caller {
	return ctCaller(t, doc, Config{
		BaseURL:       backend.URL,
		APIKeys:       map[string]string{"queryKey": ctQueryKey},
		Headers:       map[string]string{"X-Static": "static-value-1"},
		OAuthTokenURL: tokens.URL + "/token", OAuthClientID: tkClientID, OAuthClientSecret: tkSecret,
	})
}

type ctPolled struct {
	Polls       int
	Done, Total float64
	Message     string
}

func TestAsyncPolling(t *testing.T) {
	doc := ctDoc(t, ctAsyncSpec)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a poll went to another origin: %s %s", r.Method, r.URL)
	}))
	defer other.Close()
	done := func(w http.ResponseWriter, r *http.Request) {
		ctReply(200, "application/json", []byte(`{"done":true}`))(w, r)
	}

	cases := []struct {
		name      string
		async     *toolgen.AsyncSpec
		accepted  http.HandlerFunc
		status    func(n int, w http.ResponseWriter, r *http.Request)
		wantPolls int
		wantPaths []string // of the polls
		wantText  string   // an error result's text; "" for a success
		wantJSON  string   // a success's structuredContent
		wantCode  int      // the backend status of the result
		wantInput bool     // the answer is a request for input
		polled    []ctPolled
	}{
		{
			name:     "Location, progress, then the result",
			accepted: ctAccepted(`{"progress": 0, "message": "queued"}`, "Location", "/jobs/1", "Retry-After", "0"),
			status: func(n int, w http.ResponseWriter, r *http.Request) {
				if n < 3 {
					ctAccepted(fmt.Sprintf(`{"progress": %d, "total": 3, "message": "step %d"}`, n, n), "Retry-After", "0")(w, r)
					return
				}
				done(w, r)
			},
			wantPolls: 3, wantPaths: []string{"/jobs/1", "/jobs/1", "/jobs/1"}, wantJSON: `{"done":true}`, wantCode: 200,
			polled: []ctPolled{{0, 0, 0, "queued"}, {1, 1, 3, "step 1"}, {2, 2, 3, "step 2"}},
		},
		{
			name:     "Retry-After as an HTTP date, progress never decreases",
			accepted: ctAccepted(`{"progress": 5}`, "Location", "/jobs/1", "Retry-After", past),
			status: func(n int, w http.ResponseWriter, r *http.Request) {
				if n < 2 {
					ctAccepted(`{"progress": 2, "message": "still"}`, "Retry-After", past)(w, r)
					return
				}
				done(w, r)
			},
			wantPolls: 2, wantPaths: []string{"/jobs/1", "/jobs/1"}, wantJSON: `{"done":true}`, wantCode: 200,
			polled: []ctPolled{{0, 5, 0, ""}, {1, 5, 0, "still"}},
		},
		{
			name:     "an absolute Location on the backend's origin, a 303 to the result",
			accepted: ctAccepted("", "Location", "http://HOST/jobs/1", "Retry-After", "0"),
			status: func(n int, w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/jobs/1/result" {
					done(w, r)
					return
				}
				w.Header().Set("Location", "/jobs/1/result")
				w.WriteHeader(http.StatusSeeOther)
			},
			wantPolls: 2, wantPaths: []string{"/jobs/1", "/jobs/1/result"}, wantJSON: `{"done":true}`, wantCode: 200,
			polled: []ctPolled{{0, 0, 0, ""}},
		},
		{
			name:     "a later 202 moves the polling",
			accepted: ctAccepted("", "Location", "/jobs/1", "Retry-After", "0"),
			status: func(n int, w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/jobs/1" {
					ctAccepted("", "Location", "/jobs/2", "Retry-After", "0")(w, r)
					return
				}
				done(w, r)
			},
			wantPolls: 2, wantPaths: []string{"/jobs/1", "/jobs/2"}, wantJSON: `{"done":true}`, wantCode: 200,
			polled: []ctPolled{{0, 0, 0, ""}, {1, 0, 0, ""}},
		},
		{
			name:     "the final answer is an error",
			accepted: ctAccepted("", "Location", "jobs/1", "Retry-After", "0"),
			status: func(n int, w http.ResponseWriter, r *http.Request) {
				ctReply(404, "application/json", []byte(`{"message":"job expired"}`))(w, r)
			},
			wantPolls: 1, wantPaths: []string{"/jobs/1"}, wantCode: 404,
			wantText: `backend returned HTTP 404 Not Found for GET /jobs/1: {"message":"job expired"}`,
			polled:   []ctPolled{{0, 0, 0, ""}},
		},
		{
			name:     "a poll may ask for input",
			accepted: ctAccepted("", "Location", "/jobs/1", "Retry-After", "0"),
			status: func(n int, w http.ResponseWriter, r *http.Request) {
				ctReply(202, inputRequiredType, []byte(`{"inputRequests": {"ok": {"method": "elicitation/create"}}}`))(w, r)
			},
			wantPolls: 1, wantPaths: []string{"/jobs/1"}, wantInput: true,
			polled: []ctPolled{{0, 0, 0, ""}},
		},
		{
			name:      "a Location on another origin is refused",
			accepted:  ctAccepted("", "Location", "http://other.invalid/jobs/1"),
			wantCode:  202,
			wantText:  "the backend accepted the operation (202 Accepted) to finish later, but its status URL is not on the backend's origin (scheme, host and port), and the gateway polls only the backend; its result cannot be fetched",
			wantPaths: nil,
		},
		{
			name:     "a later Location on another port is refused",
			accepted: ctAccepted("", "Location", "/jobs/1", "Retry-After", "0"),
			status: func(n int, w http.ResponseWriter, r *http.Request) {
				ctAccepted("", "Location", other.URL+"/jobs/1", "Retry-After", "0")(w, r)
			},
			wantPolls: 1, wantPaths: []string{"/jobs/1"}, wantCode: 202,
			wantText: "the backend accepted the operation (202 Accepted) to finish later, but its status URL is not on the backend's origin (scheme, host and port), and the gateway polls only the backend; its result cannot be fetched",
			polled:   []ctPolled{{0, 0, 0, ""}},
		},
		{
			name:     "a Location with credentials is refused",
			accepted: ctAccepted("", "Location", "//user:pw@HOST/jobs/1"),
			wantCode: 202,
			wantText: "the backend accepted the operation (202 Accepted) to finish later, but its status URL carries credentials; its result cannot be fetched",
		},
		{
			name:     "without Location or x-mcp-async a 202 is the result",
			accepted: ctAccepted(`{"queued": true}`),
			wantJSON: `{"queued":true}`, wantCode: 202,
		},
		{
			name:     "x-mcp-async: true without a Location",
			async:    &toolgen.AsyncSpec{},
			accepted: ctAccepted(`{"queued": true}`),
			wantCode: 202,
			wantText: "the backend accepted the operation (202 Accepted) to finish later, but its answer has no Location header naming a status URL; its result cannot be fetched",
		},
		{
			name:      "x-mcp-async: true with a Location",
			async:     &toolgen.AsyncSpec{},
			accepted:  ctAccepted("", "Location", "/jobs/1", "Retry-After", "0"),
			status:    func(n int, w http.ResponseWriter, r *http.Request) { done(w, r) },
			wantPolls: 1, wantPaths: []string{"/jobs/1"}, wantJSON: `{"done":true}`, wantCode: 200,
			polled: []ctPolled{{0, 0, 0, ""}},
		},
		{
			name:      "x-mcp-async names the status URL in the body",
			async:     &toolgen.AsyncSpec{Location: "/links/status~1url"},
			accepted:  ctAccepted(`{"links": {"status/url": "/jobs/7"}}`, "Location", "/ignored", "Retry-After", "0"),
			status:    func(n int, w http.ResponseWriter, r *http.Request) { done(w, r) },
			wantPolls: 1, wantPaths: []string{"/jobs/7"}, wantJSON: `{"done":true}`, wantCode: 200,
			polled: []ctPolled{{0, 0, 0, ""}},
		},
		{
			name:     "x-mcp-async's pointer finds nothing",
			async:    &toolgen.AsyncSpec{Location: "/statusUrl"},
			accepted: ctAccepted(`{"links": {}}`, "Location", "/jobs/1"),
			wantCode: 202,
			wantText: "the backend accepted the operation (202 Accepted) to finish later, but its answer has no status URL at /statusUrl; its result cannot be fetched",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tokens := tkNewEndpoint(t, "tok", nil)
			status := c.status
			if status == nil {
				status = func(int, http.ResponseWriter, *http.Request) {}
			}
			jobs := ctNewJobs(t, c.accepted, status)
			caller := ctAsyncCaller(t, doc, jobs.ctBackend, tokens)
			tool := ctTool(t, doc, "POST", "/jobs", func(b *toolgen.Binding) { b.Async = c.async })

			var polled []ctPolled
			res, code, in := ctCallWith(t, caller, tool, `{"n": 1}`, CallOptions{Observe: func(p Progress) {
				if p.Stage == StagePolling {
					require.Equal(t, 202, p.Status)
					polled = append(polled, ctPolled{p.Polls, p.Done, p.Total, p.Message})
				}
			}})
			switch {
			case c.wantInput:
				require.Positive(t, in.Elapsed, "the exchange is timed")
				in.Elapsed = 0
				require.Equal(t, &InputRequired{Requests: mcp.InputRequests{"ok": {Method: mcp.MethodElicit}}, Status: 202}, in)
			case c.wantText != "":
				require.True(t, res.IsError)
				require.Equal(t, c.wantText, ctText(res))
				require.Equal(t, c.wantCode, code)
			default:
				ctOK(t, res)
				require.Equal(t, c.wantJSON, ctStructured(t, res))
				require.Equal(t, c.wantCode, code)
			}
			require.Equal(t, c.polled, polled)

			reqs := jobs.requests()
			require.Equal(t, http.MethodPost, reqs[0].Method)
			var paths []string
			for _, r := range reqs[1:] {
				paths = append(paths, r.Path)
				// Every poll carries the operation's credentials.
				require.Equal(t, http.MethodGet, r.Method)
				require.Equal(t, "Bearer tok-1", r.Header.Get("Authorization"), r.Path)
				require.Equal(t, "static-value-1", r.Header.Get("X-Static"), r.Path)
				if !strings.HasSuffix(r.Path, "/result") {
					// A redirect keeps the headers, not the query: the
					// client's redirect policy, as for any request.
					require.Contains(t, r.RawQuery, "api_key="+ctQueryKey, r.Path)
				}
				require.Empty(t, r.Body)
			}
			require.Equal(t, c.wantPaths, paths)
			require.Equal(t, int64(c.wantPolls), jobs.polls.Load())
			require.Equal(t, 1, tokens.count(), "one token serves the request and its polls")
		})
	}
}

// TestAsyncPollingEnds: the operation's timeout bounds the polling, and
// cancelling the call stops it at once.
func TestAsyncPollingEnds(t *testing.T) {
	doc := ctDoc(t, ctAsyncSpec)
	t.Run("timeout names the polls", func(t *testing.T) {
		tokens := tkNewEndpoint(t, "tok", nil)
		jobs := ctNewJobs(t, ctAccepted("", "Location", "/jobs/1", "Retry-After", "0"), func(n int, w http.ResponseWriter, r *http.Request) {
			ctAccepted(`{"progress": 1}`, "Retry-After", "0")(w, r)
		})
		cfg := Config{
			BaseURL: jobs.URL, APIKeys: map[string]string{"queryKey": ctQueryKey},
			OAuthTokenURL: tokens.URL + "/token", OAuthClientID: tkClientID, OAuthClientSecret: tkSecret,
			ToolTimeouts: map[string]time.Duration{"createJob": time.Second},
		}
		caller := ctCaller(t, doc, cfg)
		res, code, _ := ctCallWith(t, caller, ctTool(t, doc, "POST", "/jobs"), `{}`, CallOptions{})
		require.True(t, res.IsError)
		require.Equal(t, 202, code, ctText(res))
		m := regexp.MustCompile(`^the operation did not finish within its timeout \(1s\): the backend accepted it and the gateway polled its status (\d+) times?$`).FindStringSubmatch(ctText(res))
		require.NotNil(t, m, ctText(res))
		n, _ := strconv.Atoi(m[1])
		// A poll cut short by the timeout may not have reached the backend.
		seen := int(jobs.polls.Load())
		require.True(t, seen == n || seen == n-1, "the result says %d polls, the backend saw %d", n, seen)
	})

	t.Run("cancel stops polling at once", func(t *testing.T) {
		tokens := tkNewEndpoint(t, "tok", nil)
		polled := make(chan struct{})
		jobs := ctNewJobs(t, ctAccepted("", "Location", "/jobs/1", "Retry-After", "0"), func(n int, w http.ResponseWriter, r *http.Request) {
			// A long wait before the next poll: only cancelling ends it.
			ctAccepted("", "Retry-After", "3600")(w, r)
			if n == 1 {
				close(polled)
			}
		})
		caller := ctAsyncCaller(t, doc, jobs.ctBackend, tokens)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-polled
			cancel()
		}()
		p, in := caller.CallWith(ctx, ctTool(t, doc, "POST", "/jobs"), json.RawMessage(`{}`), CallOptions{})
		require.Nil(t, in)
		defer p.Release()
		require.True(t, p.IsError())
		require.Equal(t, "the call was cancelled", p.Copy().FirstText())
		require.Equal(t, int64(1), jobs.polls.Load())
	})
}

// TestAsyncGenerated: x-mcp-async in the document reaches the call path.
func TestAsyncGenerated(t *testing.T) {
	spec := strings.Replace(ctAsyncSpec, "operationId: createJob", "operationId: createJob\n      x-mcp-async: {location: /statusUrl}", 1)
	d, err := openapi.LoadData(context.Background(), []byte(spec), "async.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	set, err := toolgen.Generate(d, toolgen.Options{})
	require.NoError(t, err)
	require.Empty(t, set.Warnings())
	tool, ok := set.Lookup("createJob")
	require.True(t, ok)

	tokens := tkNewEndpoint(t, "tok", nil)
	jobs := ctNewJobs(t, ctAccepted(`{"statusUrl": "/queue/3"}`, "Retry-After", "0"), func(n int, w http.ResponseWriter, r *http.Request) {
		ctReply(200, "application/json", []byte(`{"id": 3}`))(w, r)
	})
	caller := ctAsyncCaller(t, d, jobs.ctBackend, tokens)
	res, code, _ := ctCallWith(t, caller, tool, `{"n": 2}`, CallOptions{})
	ctOK(t, res)
	require.Equal(t, 200, code)
	require.Equal(t, `{"id":3}`, ctStructured(t, res))
	require.Equal(t, "/queue/3", jobs.requests()[1].Path)
}

func TestRetryDelay(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		header string
		want   time.Duration
	}{
		{"", defaultPollDelay},
		{"2", 2 * time.Second},
		{"0", minPollDelay},
		{"0.5", 500 * time.Millisecond},
		{"86400", maxPollDelay},
		{"-1", defaultPollDelay},
		{"soon", defaultPollDelay},
		{now.Add(5 * time.Second).Format(http.TimeFormat), 5 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), minPollDelay},
		{now.Add(time.Hour).Format(http.TimeFormat), maxPollDelay},
	}
	for _, c := range cases {
		h := http.Header{}
		if c.header != "" {
			h.Set("Retry-After", c.header)
		}
		require.Equal(t, c.want, retryDelay(h, now), "Retry-After: %q", c.header)
	}
}

func TestPointerString(t *testing.T) {
	body := []byte(`{"a": {"b/c": ["x", "y"], "m~n": "z", "n": 1, "e": ""}}`)
	for ptr, want := range map[string]string{
		"/a/b~1c/1": "y", "/a/m~0n": "z", "/a/b~1c/01": "", "/a/b~1c/2": "", "/a/n": "", "/a/e": "", "/x": "", "a": "",
	} {
		got, ok := pointerString(body, ptr)
		require.Equal(t, want, got, ptr)
		require.Equal(t, want != "", ok, ptr)
	}
}
