package call

// The call path: tools/call arguments → one validated REST request → one
// CallToolResult.
//
// A call goes through these steps, and only the last two touch the network:
//
//  1. decode the arguments (a JSON object; empty or null means {}) and
//     reject names the tool does not declare;
//  2. serialize each argument into its place (path, query, header, cookie,
//     body) following the parameter's style and the body's media type;
//  3. validate the request before sending it. Parameters and JSON, text and
//     octet-stream bodies are validated on the wire by openapi3filter against
//     a route built from the binding (no router lookup). Where kin-openapi
//     cannot decode a serialization back (form and multipart bodies, a few
//     style/type combinations) the argument's JSON value is validated against
//     the same schema instead. Either way a failure becomes an isError result
//     that names the argument;
//  4. add the configured backend credentials (never anything from the MCP
//     client: the Caller is given no incoming request, only arguments), and
//     the token obtained from a configured token endpoint (tokens.go);
//  5. send it with the caller's context and a per-operation timeout, then map
//     the answer: a response (response.go), a request for input
//     (input.go), an event stream (stream.go) or an asynchronous
//     operation, polled to its end (async.go).
//
// Everything that depends only on the binding (path template, serialization
// methods, credential placement, Accept header, validation route) is worked
// out once per binding and cached in a callPlan (call_plan.go).

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/internal/redact"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

const (
	defaultCallTimeout      = 30 * time.Second
	defaultMaxResponseBytes = 10 << 20
	// maxOperationTimeout bounds x-mcp-timeout: the document comes from the
	// backend, and one operation must not be able to hold calls for hours.
	maxOperationTimeout = time.Hour
	maxRedirects        = 10
	// timeoutExtension is the operation extension that overrides
	// Config.Timeout for one operation, in seconds.
	timeoutExtension = "x-mcp-timeout"
)

// Caller sends tools/call requests to the backend a Document describes.
// It is safe for concurrent use; create one per loaded document.
//
// The Caller only ever sees tool arguments, never the incoming MCP request, so
// the MCP client's own Authorization header (or any other of its headers)
// cannot reach the backend: the only credentials sent are those in
// Config and the tokens obtained with them. Keep it that way — do not add
// a way to pass incoming headers. The client's token, when the gateway
// passes it with WithSubjectToken, goes only to the token exchange endpoint.
type Caller struct {
	doc      *openapi.Document
	base     *url.URL // scheme and host; Path/RawPath without a trailing slash
	client   *http.Client
	timeout  time.Duration
	perTool  map[string]time.Duration // Config.ToolTimeouts
	maxBytes int64
	headers  http.Header // static headers, canonical names
	host     string      // static "Host" header, if configured
	apiKeys  map[string]string
	bearer   string
	always   bool
	redact   *redact.Set // the configured credentials
	// tokenSecrets adds a call's fetched backend tokens to redact.
	tokenSecrets *tokenSecrets
	errBody      string // Config.ErrorBody
	maxURL       int    // Config.MaxRequestURLBytes
	templates    bool   // Config.PathTemplates
	// exchange and clientCreds obtain backend tokens per call; at most one
	// is set: exchange with TokenExchangeURL, else clientCreds with
	// OAuthTokenURL.
	exchange    *tokenExchange
	clientCreds *clientCredentialsPool

	validation openapi3filter.Options
	plans      sync.Map // *toolgen.Binding → *planEntry
}

// NewCaller validates cfg against doc once and returns a Caller. Errors name
// the setting that is wrong.
func NewCaller(doc *openapi.Document, cfg Config) (*Caller, error) {
	if doc == nil || doc.T == nil {
		return nil, errors.New("toolgen: NewCaller needs a loaded document")
	}
	c := &Caller{
		doc:          doc,
		timeout:      cfg.Timeout,
		maxBytes:     cfg.MaxResponseBytes,
		bearer:       cfg.BearerToken,
		always:       cfg.BearerAlways,
		redact:       credentials(cfg),
		tokenSecrets: &tokenSecrets{configured: credentialValues(cfg)},
		errBody:      cfg.ErrorBody,
		maxURL:       cfg.MaxRequestURLBytes,
		templates:    cfg.PathTemplates,
	}
	if c.maxURL <= 0 {
		c.maxURL = defaultMaxRequestURLBytes
	}
	switch {
	case c.errBody == "":
		c.errBody = ErrorBodyExcerpt
	case !ValidErrorBody(c.errBody):
		return nil, fmt.Errorf("toolgen: ErrorBody must be excerpt, all or none, got %q", cfg.ErrorBody)
	}
	switch {
	case c.timeout == 0:
		c.timeout = defaultCallTimeout
	case c.timeout < 0:
		return nil, fmt.Errorf("toolgen: Timeout must not be negative, got %s", cfg.Timeout)
	}
	for name, d := range cfg.ToolTimeouts {
		if d <= 0 {
			return nil, fmt.Errorf("toolgen: ToolTimeouts[%q] must be positive, got %s", name, d)
		}
	}
	c.perTool = cfg.ToolTimeouts
	switch {
	case c.maxBytes == 0:
		c.maxBytes = defaultMaxResponseBytes
	case c.maxBytes < 0:
		return nil, fmt.Errorf("toolgen: MaxResponseBytes must not be negative, got %d", cfg.MaxResponseBytes)
	}
	base, err := resolveBaseURL(doc, cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("toolgen: %w", err)
	}
	c.base = base
	if c.headers, c.host, err = staticHeaders(cfg.Headers); err != nil {
		return nil, fmt.Errorf("toolgen: %w", err)
	}
	if c.apiKeys, err = checkAPIKeys(doc.T, cfg.APIKeys); err != nil {
		return nil, fmt.Errorf("toolgen: %w", err)
	}
	if strings.ContainsFunc(cfg.BearerToken, isHeaderControl) {
		return nil, errors.New("toolgen: BearerToken contains control characters")
	}
	if err := checkTimeoutExtensions(doc.T); err != nil {
		return nil, fmt.Errorf("toolgen: %w", err)
	}

	transport := cfg.Transport
	if transport == nil {
		transport = sharedTransport()
	}
	c.client = &http.Client{Transport: transport, CheckRedirect: checkRedirect}
	tc, err := checkTokenConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("toolgen: %w", err)
	}
	if tc.tokenURL != "" || tc.exchangeURL != "" {
		tokenClient := newTokenClient(transport)
		// Token exchange wins: it carries the caller's identity.
		if tc.exchangeURL != "" {
			c.exchange = newTokenExchange(tc, tokenClient)
		} else {
			c.clientCreds = newClientCredentialsPool(tc, tokenClient)
		}
	}
	c.validation = openapi3filter.Options{
		// We send exactly what the model asked for; the backend applies its
		// own defaults. Setting them here would also re-encode the body.
		SkipSettingDefaults: true,
		// Credentials come from configuration and are added after
		// validation; the plan's route carries no security requirement.
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		// The first problem is enough for the model to fix its call, and
		// stopping there keeps validation cheap.
		MultiError: false,
		// Responses are mapped, not validated (see response.go).
		ExcludeResponseBody: true,
	}
	return c, nil
}

// sharedTransport is the backend transport used when Config.Transport is
// nil. It is shared by every Caller so that replacing a Caller after the
// document changes keeps the pooled connections.
var sharedTransport = sync.OnceValue(NewTransport)

// NewTransport returns a transport with the settings the call path uses for
// backends: keep-alive pools sized for many concurrent calls, bounded dial,
// TLS handshake and header sizes. Benchmarks use it to compare like with like.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    256,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// errTooManyRedirects stops a redirect loop on the backend's own host.
var errTooManyRedirects = errors.New("too many redirects")

// checkRedirect follows redirects on the backend's host only. A redirect to
// another host (or from https down to http) is not followed: the backend's
// credentials would go with it. The 3xx response is then mapped as an error.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errTooManyRedirects
	}
	first := via[0].URL
	if !strings.EqualFold(req.URL.Host, first.Host) || (first.Scheme == "https" && req.URL.Scheme != "https") {
		return http.ErrUseLastResponse
	}
	return nil
}

// Call validates args against the tool's operation, calls the backend and
// maps its response. It always returns a result: problems with the arguments,
// the backend or its response are isError results whose text a model can act
// on. When ctx is cancelled the result says so; the gateway decides whether
// to send it.
//
// The backend call is bounded by Config.Timeout, or by the operation's
// x-mcp-timeout extension when present: a positive number of seconds (at
// most 3600), e.g. `x-mcp-timeout: 120` for a slow report, which may be
// longer or shorter than the configured timeout. ctx bounds it too, and
// cancelling ctx aborts the backend request.
//
// Call's result shares no memory with anything: it may be kept. The hot
// path uses CallPooled.
func (c *Caller) Call(ctx context.Context, t *toolgen.Tool, args json.RawMessage) *mcp.CallToolResult {
	p := c.CallPooled(ctx, t, args, nil)
	res := p.Copy()
	p.Release()
	return res
}

// ErrTimeout is the cause of a call's context (context.Cause) when the
// operation's timeout passed.
var ErrTimeout = errors.New("the operation's timeout passed")

// Timeout is how long a call of t may take: the operation's own timeout or
// the Caller's default. A caller that wants the call's context in hand (to
// cancel it from elsewhere) makes it with this timeout and ErrTimeout as its
// cause; CallPooled then adds no context of its own.
func (c *Caller) Timeout(t *toolgen.Tool) time.Duration {
	if t == nil || t.Binding == nil {
		return c.timeout
	}
	p, err := c.plan(t.Binding)
	if err != nil {
		return c.timeout
	}
	return c.timeoutOf(t, p)
}

// timeoutOf is the tool's configured timeout, else its operation's (the
// plan's: x-mcp-timeout or the default).
func (c *Caller) timeoutOf(t *toolgen.Tool, p *callPlan) time.Duration {
	if d, ok := c.perTool[t.Name]; ok {
		return d
	}
	return p.timeout
}

// CallPooled is Call for the hot path: it reports the stages of the
// backend exchange to observe (which may be nil) as they happen, on the
// calling goroutine, and its result may view a pooled buffer (the backend's
// body) instead of copying it. Release the result once its response is
// written; anything kept longer must be a Copy.
//
// It is CallWith without input rounds: a backend that asks for input gets
// an error result saying the call cannot provide it.
func (c *Caller) CallPooled(ctx context.Context, t *toolgen.Tool, args json.RawMessage, observe Observer) *mcp.PooledResult {
	res, in := c.CallWith(ctx, t, args, CallOptions{Observe: observe})
	if in != nil {
		res = mcp.Pooled(mcp.ErrorResult(fmt.Sprintf("the backend asked for input (%s) that this call cannot provide", in.methods())))
		res.SetBackendStatus(in.Status)
	}
	return res
}

// CallWith is CallPooled for a call that may take several rounds: a
// backend may answer with a request for input (input.go) instead of a
// result, and the next round repeats the request with opts.Input. Exactly
// one of the returns is non-nil. Besides a plain response, the answer may
// be an event stream (stream.go) or an asynchronous operation's 202
// (async.go), each read to its end within the call's timeout.
func (c *Caller) CallWith(ctx context.Context, t *toolgen.Tool, args json.RawMessage, opts CallOptions) (*mcp.PooledResult, *InputRequired) {
	x := exchange{c: c, parent: ctx, observe: opts.Observe}
	if x.observe == nil {
		x.observe = func(Progress) {}
	}
	if opts.Input != nil {
		if fail := opts.Input.check(); fail != nil {
			return mcp.Pooled(fail), nil
		}
	}
	out, cancel, fail := c.prepare(ctx, t, args)
	defer cancel()
	if fail != nil {
		return mcp.Pooled(fail), nil
	}
	x.out = &out
	setInputHeaders(out.req, opts.Input)
	x.observe(Progress{Stage: StageSent})
	sent := time.Now()
	resp, err := c.client.Do(out.req)
	if err != nil {
		res := mcp.Pooled(c.transportFailure(ctx, out.callCtx, out.timeout, err))
		res.SetBackendTime(max(time.Since(sent), 1))
		return res, nil
	}
	defer resp.Body.Close()
	x.observe(Progress{Stage: StageAnswered, Status: resp.StatusCode})
	res, in := x.answer(resp, out.req.Method, out.publicURL, true)
	// The whole exchange, the body and any status polls included: what
	// the caller waited for. At least 1ns: zero means nothing was sent.
	if elapsed := max(time.Since(sent), 1); res != nil {
		res.SetBackendTime(elapsed)
	} else {
		in.Elapsed = elapsed
	}
	return res, in
}

// exchange is one call's state after its request was built.
type exchange struct {
	c       *Caller
	parent  context.Context // the caller's context
	out     *outgoing
	observe Observer // never nil
}

// answer maps one backend answer, by what it is: a request for input (any
// status), an event stream (2xx), the 202 of an asynchronous operation
// (first: not a status poll's answer), else a response (response.go).
// The caller closes resp.Body.
func (x *exchange) answer(resp *http.Response, method, publicURL string, first bool) (*mcp.PooledResult, *InputRequired) {
	mt, _ := parseMediaType(resp.Header.Get("Content-Type"))
	var (
		res *mcp.PooledResult
		in  *InputRequired
		err error
	)
	switch {
	case mt == inputRequiredType:
		in, res, err = x.inputRequired(resp)
	case mt == eventStreamType && resp.StatusCode >= 200 && resp.StatusCode <= 299 && method != http.MethodHead:
		res, err = x.stream(resp, method, publicURL)
	case first && x.pollsAccepted(resp):
		return x.poll(resp)
	default:
		res, err = x.c.mapResponse(x.out.plan, method, publicURL, resp, x.out.secrets)
	}
	if err != nil {
		return mcp.Pooled(x.c.transportFailure(x.parent, x.out.callCtx, x.out.timeout, err)), nil
	}
	if res != nil {
		res.SetBackendStatus(resp.StatusCode)
	}
	x.observe(Progress{Stage: StageMapped, Status: resp.StatusCode})
	return res, in
}

// outgoing is a backend request ready to send, with what reading its
// response needs.
type outgoing struct {
	plan      *callPlan
	req       *http.Request
	publicURL string      // see buildRequest
	secrets   *redact.Set // redacted from what the response contributes
	// callCtx is the request's context, bounded by timeout; before it is
	// made (a failure that early) it is the caller's.
	callCtx context.Context
	timeout time.Duration
}

// prepare is the request path CallPooled and Fetch share, up to sending:
// decode and validate args, build the request with the backend's
// credentials (fetching tokens), and bound it by the operation's timeout.
// cancel is never nil; call it once the response has been read. A failure
// is the error result, and nothing was sent.
func (c *Caller) prepare(ctx context.Context, t *toolgen.Tool, args json.RawMessage) (out outgoing, cancel context.CancelFunc, fail *mcp.CallToolResult) {
	out.callCtx, cancel = ctx, noCancel
	if t == nil || t.Binding == nil {
		return out, cancel, mcp.ErrorResult("this tool is not bound to a backend operation")
	}
	if ctx.Err() != nil {
		return out, cancel, mcp.ErrorResult(cancelledMessage(ctx))
	}
	p, err := c.plan(t.Binding)
	if err != nil {
		return out, cancel, mcp.ErrorResult(fmt.Sprintf("tool %q cannot be called: %v", t.Name, err))
	}
	out.plan = p
	// Invalid UTF-8 in an argument is repaired (U+FFFD) once, here, so
	// that a path, header, query or body argument all see the same value
	// (decoding a string would repair it; a raw JSON body would not).
	if !utf8.Valid(args) {
		args = bytes.ToValidUTF8(args, []byte("\uFFFD"))
	}
	in, aerr := p.decodeArgs(args)
	if aerr != nil {
		return out, cancel, aerr.result()
	}

	// The operation's timeout bounds the call, unless the caller's own
	// deadline comes first (a caller that made its context with Timeout).
	out.timeout = c.timeoutOf(t, p)
	if deadline, ok := ctx.Deadline(); !ok || time.Until(deadline) > out.timeout {
		out.callCtx, cancel = context.WithTimeoutCause(ctx, out.timeout, ErrTimeout)
	}
	out.req, out.publicURL, aerr = c.buildRequest(out.callCtx, p, in)
	if aerr != nil {
		return out, cancel, aerr.result()
	}
	out.secrets, fail = c.addTokens(ctx, out.callCtx, out.timeout, p, out.req)
	return out, cancel, fail
}

func noCancel() {}

// Request bounds: the URL's path and query, and the headers the arguments
// make (Kestrel, nginx and most proxies stop at 8 KiB lines, 16-32 KiB of
// headers).
const (
	defaultMaxRequestURLBytes = 8 << 10
	maxArgHeaderBytes         = 16 << 10
)

// buildRequest turns decoded arguments into a validated backend request. The
// returned URL is the request URL before credentials were added; it is the
// only form of the URL that may appear in a result.
func (c *Caller) buildRequest(ctx context.Context, p *callPlan, in map[string]json.RawMessage) (*http.Request, string, *argError) {
	parts, aerr := p.serialize(in)
	if aerr != nil {
		return nil, "", aerr
	}
	u := &url.URL{
		Scheme:   c.base.Scheme,
		Host:     c.base.Host,
		Path:     c.base.Path + parts.path,
		RawPath:  c.base.EscapedPath() + parts.rawPath,
		RawQuery: parts.query,
	}
	// Backends and the proxies before them refuse (or choke on) a huge
	// request line or header set: say so, naming the argument, and send
	// nothing.
	if n := len(u.RawPath) + len(u.RawQuery) + 1; n > c.maxURL {
		return nil, "", &argError{arg: biggest(parts.urlBytes), msg: fmt.Sprintf("makes the request URL %d bytes long, over the %d the gateway sends; pass less", n, c.maxURL)}
	}
	headerTotal := 0
	for _, n := range parts.headerBytes {
		headerTotal += n
	}
	if headerTotal > maxArgHeaderBytes {
		return nil, "", &argError{arg: biggest(parts.headerBytes), msg: fmt.Sprintf("makes the request headers %d bytes, over the %d the gateway sends; pass less", headerTotal, maxArgHeaderBytes)}
	}
	reqCtx := ctx
	if c.templates {
		reqCtx = context.WithValue(ctx, pathTemplateKey{}, p.template)
	}
	req, err := http.NewRequestWithContext(reqCtx, p.method, "", nil)
	if err != nil {
		// Only an invalid method gets here, and the plan checked it.
		return nil, "", &argError{msg: "the request could not be built"}
	}
	req.URL = u
	req.Host = u.Host
	if parts.body != nil {
		setBody(req, parts.body)
		req.Header.Set("Content-Type", parts.contentType)
	}
	for _, h := range parts.headers {
		req.Header[h.k] = append(req.Header[h.k], h.v)
	}
	if parts.cookie != "" {
		req.Header.Set("Cookie", parts.cookie)
	}
	req.Header.Set("Accept", p.accept)

	if aerr := c.validate(ctx, p, req, parts, in); aerr != nil {
		return nil, "", aerr
	}
	publicURL := u.String()
	c.addStaticHeaders(req)
	p.creds.apply(req)
	return req, publicURL, nil
}

type pathTemplateKey struct{}

// PathTemplate is the path template of the operation a backend request
// was made for (base path included, "/v1/customers/{id}"), when the
// Caller was configured with PathTemplates; "" for other requests (a token
// request, an async status poll).
func PathTemplate(ctx context.Context) string {
	t, _ := ctx.Value(pathTemplateKey{}).(string)
	return t
}

// transportFailure explains a failed round trip in one line. It never shows
// Go error text: that carries internal addresses and library internals.
func (c *Caller) transportFailure(parent, callCtx context.Context, timeout time.Duration, err error) *mcp.CallToolResult {
	switch {
	case errors.Is(context.Cause(callCtx), ErrTimeout):
		return mcp.ErrorResult(fmt.Sprintf("backend timed out after %s", timeout))
	case parent.Err() != nil:
		return mcp.ErrorResult(cancelledMessage(parent))
	case errors.Is(err, context.DeadlineExceeded) || callCtx.Err() != nil:
		return mcp.ErrorResult(fmt.Sprintf("backend timed out after %s", timeout))
	}
	return mcp.ErrorResult("backend unreachable: " + describeNetError(err))
}

// cancelledMessage explains why the caller's context ended: cancelled, or
// its own deadline (not the per-operation timeout) passed.
func cancelledMessage(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "the call ran out of time before the backend answered"
	}
	return "the call was cancelled"
}

// describeNetError names the kind of network failure without details.
func describeNetError(err error) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recordErr tls.RecordHeaderError
	var netErr net.Error
	switch {
	case errors.Is(err, errTooManyRedirects):
		return "too many redirects"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "host not found"
		}
		return "DNS lookup failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the backend"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "host unreachable"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr):
		return "TLS certificate not trusted"
	case errors.Is(err, http.ErrSchemeMismatch), errors.As(err, &recordErr):
		return "TLS handshake failed (is the backend speaking plain HTTP?)"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by the backend"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "connection timed out"
	}
	return "request failed"
}

// resolveBaseURL picks the backend base URL: the configured one, else the
// document's first server with its variables' defaults, resolved against the
// document's location when relative.
func resolveBaseURL(doc *openapi.Document, configured string) (*url.URL, error) {
	setting := "BaseURL"
	raw := configured
	if raw == "" {
		if len(doc.T.Servers) == 0 || doc.T.Servers[0] == nil {
			raw = "/"
		} else {
			raw = expandServerURL(doc.T.Servers[0])
		}
		setting = fmt.Sprintf("document server URL %q", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid URL", setting)
	}
	if !u.IsAbs() && configured == "" {
		loc, lerr := url.Parse(doc.Location)
		if lerr != nil || (loc.Scheme != "http" && loc.Scheme != "https") {
			return nil, fmt.Errorf("%s is relative and the document was not loaded from an http(s) URL; set BaseURL", setting)
		}
		u = loc.ResolveReference(u)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%s must be an absolute http or https URL", setting)
	case u.Host == "":
		return nil, fmt.Errorf("%s has no host", setting)
	case u.User != nil:
		return nil, fmt.Errorf("%s must not contain credentials; use Headers or APIKeys", setting)
	case u.RawQuery != "" || u.ForceQuery:
		return nil, fmt.Errorf("%s must not have a query", setting)
	case u.Fragment != "":
		return nil, fmt.Errorf("%s must not have a fragment", setting)
	}
	base := &url.URL{Scheme: u.Scheme, Host: u.Host}
	// Keep the base path's own escaping, without the trailing slash: the
	// operation's path template starts with one.
	base.Path = strings.TrimRight(u.Path, "/")
	base.RawPath = strings.TrimRight(u.EscapedPath(), "/")
	if base.RawPath == base.Path {
		base.RawPath = ""
	}
	return base, nil
}

// expandServerURL substitutes the defaults of a server's variables.
func expandServerURL(s *openapi3.Server) string {
	out := s.URL
	for name, v := range s.Variables {
		if v != nil {
			out = strings.ReplaceAll(out, "{"+name+"}", v.Default)
		}
	}
	return out
}

// checkTimeoutExtensions rejects an x-mcp-timeout that is not a usable
// number of seconds, naming the operation.
func checkTimeoutExtensions(doc *openapi3.T) error {
	if doc.Paths == nil {
		return nil
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		if item == nil {
			continue
		}
		for method, op := range item.Operations() {
			if _, err := operationTimeout(op, 0); err != nil {
				return fmt.Errorf("%s of %s %s: %w", timeoutExtension, method, path, err)
			}
		}
	}
	return nil
}

// operationTimeout reads the x-mcp-timeout extension: a positive number of
// seconds (fractions allowed) or a string holding one ("2.5") or a Go
// duration ("90s"). Without it the timeout is def.
func operationTimeout(op *openapi3.Operation, def time.Duration) (time.Duration, error) {
	v, ok := op.Extensions[timeoutExtension]
	if !ok || v == nil {
		return def, nil
	}
	var d time.Duration
	secs := math.NaN()
	switch x := v.(type) {
	case float64:
		secs = x
	case int:
		secs = float64(x)
	case int64:
		secs = float64(x)
	case uint64:
		secs = float64(x)
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return 0, fmt.Errorf("must be a number of seconds, got %q", x)
		}
		secs = f
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			secs = f
		} else if pd, err := time.ParseDuration(strings.TrimSpace(x)); err == nil {
			d = pd
		} else {
			return 0, fmt.Errorf("must be a number of seconds, got %q", x)
		}
	default:
		return 0, fmt.Errorf("must be a number of seconds, got %v", v)
	}
	if !math.IsNaN(secs) {
		if math.IsInf(secs, 0) || secs > maxOperationTimeout.Seconds() {
			return 0, fmt.Errorf("must be more than 0 and at most %d seconds, got %v", int(maxOperationTimeout/time.Second), v)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d <= 0 || d > maxOperationTimeout {
		return 0, fmt.Errorf("must be more than 0 and at most %d seconds, got %v", int(maxOperationTimeout/time.Second), v)
	}
	return d, nil
}
