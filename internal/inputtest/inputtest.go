// Package inputtest is a REST backend for tests of the server→client half:
// an operation the gateway must confirm (x-mcp-confirm), operations that
// ask the client for input through the input-required protocol
// (elicitation, sampling, roots, and one that never stops asking), an
// event-stream operation and an asynchronous (202-polled) one. The gateway
// package's tests and the e2e tests share it. It imports no project
// package: it stands for a foreign backend.
package inputtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Doc is the backend's OpenAPI document.
const Doc = `openapi: 3.0.3
info: {title: input, version: "1"}
paths:
  /pets/{id}:
    delete:
      operationId: deletePet
      x-mcp-confirm: This removes the pet for good.
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses:
        '204': {description: gone}
  /adopt:
    post:
      operationId: adopt
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, properties: {pet: {type: string}}, required: [pet]}
      responses:
        '200':
          description: adopted
          content:
            application/json:
              schema: {type: object, properties: {pet: {type: string}, owner: {type: string}}}
  /think:
    get:
      operationId: think
      responses:
        '200': {description: text, content: {text/plain: {schema: {type: string}}}}
  /roots:
    get:
      operationId: whereAmI
      responses:
        '200': {description: text, content: {text/plain: {schema: {type: string}}}}
  /again:
    get:
      operationId: again
      responses:
        '200': {description: text, content: {text/plain: {schema: {type: string}}}}
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
        '200': {description: done, content: {application/json: {schema: {type: object}}}}
`

// RequestState is the requestState the backend sends with each request
// for input, and wants back.
const RequestState = "step-1"

// Backend is the running backend; it counts the requests it gets.
type Backend struct {
	URL string

	t      testing.TB
	mu     sync.Mutex
	hits   map[string]int // "METHOD /path" → requests
	states []string       // the Mcp-Request-State of each repeat
	jobs   atomic.Int32   // status polls of the asynchronous operation
}

// Start runs the backend until t ends.
func Start(t testing.TB) *Backend {
	t.Helper()
	b := &Backend{t: t, hits: map[string]int{}}
	hs := httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(hs.Close)
	b.URL = hs.URL
	return b
}

// Count is how many requests "METHOD /path" got.
func (b *Backend) Count(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hits[key]
}

// States are the Mcp-Request-State headers of the repeated requests.
func (b *Backend) States() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.states...)
}

// ask answers with a request for input.
func ask(w http.ResponseWriter, reqs string) {
	w.Header().Set("Content-Type", "application/vnd.mcp.input-required+json")
	w.WriteHeader(http.StatusPreconditionRequired)
	fmt.Fprintf(w, `{"inputRequests": %s, "requestState": %q}`, reqs, RequestState)
}

// answers are the client's answers a repeated request carries; nil on a
// first request.
func (b *Backend) answers(r *http.Request) map[string]json.RawMessage {
	enc := r.Header.Get("Mcp-Input-Responses")
	if enc == "" {
		return nil
	}
	var m map[string]json.RawMessage
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil {
		b.t.Errorf("Mcp-Input-Responses is not base64url JSON: %v", err)
	}
	b.mu.Lock()
	b.states = append(b.states, r.Header.Get("Mcp-Request-State"))
	b.mu.Unlock()
	return m
}

// decode reads JSON into v, failing the test when it is not.
func (b *Backend) decode(data []byte, v any, what string) {
	if err := json.Unmarshal(data, v); err != nil {
		b.t.Errorf("%s: %v", what, err)
	}
}

func (b *Backend) serve(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.hits[r.Method+" "+r.URL.Path]++
	b.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	case r.URL.Path == "/adopt":
		a := b.answers(r)
		if a == nil {
			ask(w, `{"owner": {"method": "elicitation/create", "params": {"message": "Who adopts?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}}`)
			return
		}
		var owner struct {
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		}
		b.decode(a["owner"], &owner, "the owner answer")
		var in struct {
			Pet string `json:"pet"`
		}
		b.decode(body, &in, "the repeat carries the same body")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"pet": %q, "owner": %q}`, in.Pet, owner.Content.Name)
	case r.URL.Path == "/think":
		a := b.answers(r)
		if a == nil {
			ask(w, `{"llm": {"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "6 times 7?"}}], "maxTokens": 10}}}`)
			return
		}
		var res struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		b.decode(a["llm"], &res, "the sampling answer")
		fmt.Fprint(w, "the model says "+res.Content.Text)
	case r.URL.Path == "/roots":
		a := b.answers(r)
		if a == nil {
			ask(w, `{"where": {"method": "roots/list"}}`)
			return
		}
		fmt.Fprint(w, "roots: "+string(a["where"]))
	case r.URL.Path == "/again":
		b.answers(r)
		ask(w, `{"more": {"method": "elicitation/create", "params": {"message": "Once more?", "requestedSchema": {"type": "object", "properties": {}}}}}`)
	case r.URL.Path == "/report":
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(w, "event: progress\ndata: {\"progress\": %d, \"total\": 3, \"message\": \"part %d\"}\n\n", i, i)
			_ = rc.Flush()
			time.Sleep(20 * time.Millisecond)
		}
		fmt.Fprint(w, "event: result\ndata: {\"parts\": 3}\n\n")
	case r.URL.Path == "/jobs":
		w.Header().Set("Location", "/jobs/status")
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusAccepted)
	case r.URL.Path == "/jobs/status":
		if b.jobs.Add(1)%3 != 0 {
			w.Header().Set("Retry-After", "0")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, `{"progress": 1, "total": 2, "message": "indexing"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"done": true}`)
	default:
		http.NotFound(w, r)
	}
}
