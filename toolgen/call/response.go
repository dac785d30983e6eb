package call

// Response mapping: one backend response → one CallToolResult.
//
//   - 2xx JSON (application/json, +json): structuredContent plus the JSON as
//     text. structuredContent is always an object: a non-object value is
//     wrapped as {"result": value}, as is every value when the outputSchema
//     wraps (binding.OutputIsWrapped).
//   - text/* and XML, YAML, ...: text content, converted to valid UTF-8.
//   - image/*, audio/*: image or audio content (base64 data and mimeType).
//   - multipart/*: one content item per part, each mapped by these rules.
//   - other binary: an embedded resource blob whose uri is the request URL.
//   - empty body: a short text such as "204 No Content".
//   - non-2xx: isError with the status and a capped, sanitized excerpt.
//
// Output schema contract. When the tool advertises an outputSchema, MCP
// requires structuredContent that conforms to it on every successful result.
// If the backend's 2xx response cannot provide that (not JSON, invalid JSON,
// empty, or not an object where the schema expects one) the backend broke
// its own contract, and the result is isError: true with a message saying
// the call succeeded, why no structured result could be given, and the
// response itself (capped) so the model can still use it. Clients do not
// check structuredContent on error results. A JSON body that does not fit
// the declared schema is answered the same way (output.go): every
// structuredContent sent fits what the tool declared. Valid JSON labelled
// text/plain is taken as JSON for such tools.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
	"github.com/mcp-gateway/mcp-gateway/internal/redact"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

const (
	// errorExcerptBytes caps the backend body quoted in an error result.
	errorExcerptBytes = 2048
	// contractExcerptBytes caps the response quoted when a 2xx response
	// breaks the output schema contract.
	contractExcerptBytes = 8192
	// drainBytes is how much of an unread error body is discarded so the
	// connection can be reused; past it the connection is closed.
	drainBytes = 64 << 10
	// maxParts and maxPartDepth bound multipart responses.
	maxParts     = 256
	maxPartDepth = 3
)

var errTooLarge = errors.New("response too large")

// mapResponse reads and maps the backend response. Its error is a failure
// to read the body (timeout, reset), which the caller reports.
func (c *Caller) mapResponse(p *callPlan, method, publicURL string, resp *http.Response, secrets *redact.Set) (*mcp.PooledResult, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return mcp.Pooled(c.errorResult(method, publicURL, resp, secrets)), nil
	}
	if method == http.MethodHead {
		// A HEAD response has headers only; its Content-Length describes
		// the GET body.
		res, _ := p.successResult(statusText(resp.StatusCode), "", nil, publicURL)
		return mcp.Pooled(res), nil
	}
	if resp.ContentLength > c.maxBytes {
		return mcp.Pooled(mcp.ErrorResult(c.tooLargeMessage())), nil
	}
	body, err := readCapped(resp.Body, c.maxBytes, resp.ContentLength)
	if errors.Is(err, errTooLarge) {
		return mcp.Pooled(mcp.ErrorResult(c.tooLargeMessage())), nil
	}
	if err != nil {
		return nil, err
	}
	if clean := secrets.Bytes(body); len(body) > 0 && &clean[0] != &body[0] {
		// A credential came back: the result is made of the cleaned copy.
		putBodyBuffer(body)
		res, _ := p.successResult(statusText(resp.StatusCode), resp.Header.Get("Content-Type"), clean, publicURL)
		return mcp.Pooled(res), nil
	}
	res, viewed := p.successResult(statusText(resp.StatusCode), resp.Header.Get("Content-Type"), body, publicURL)
	// A JSON result is the body (see jsonResult), and goes back to the
	// pool when the result is released; any other result copied what it
	// needed, so the buffer can go back now.
	if sameBuffer(viewed, body) {
		return mcp.NewPooledResult(*res, body, putBodyBuffer), nil
	}
	putBodyBuffer(body)
	return mcp.Pooled(res), nil
}

func sameBuffer(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}

// bodyBuffers pools backend body buffers by capacity: class i holds
// buffers of bodyClassBytes<<i bytes. Bodies of more than the largest
// class are allocated for the call alone.
var bodyBuffers [9]sync.Pool

const bodyClassBytes = 4 << 10 // 4 KiB .. 1 MiB

// getBodyBuffer returns an empty buffer of at least n bytes' capacity.
func getBodyBuffer(n int64) []byte {
	for i := range bodyBuffers {
		if size := int64(bodyClassBytes) << i; size >= n {
			if b, ok := bodyBuffers[i].Get().(*[]byte); ok {
				return (*b)[:0]
			}
			return make([]byte, 0, size)
		}
	}
	return make([]byte, 0, n)
}

// putBodyBuffer makes b available for reuse: nothing may refer to it any
// more. Buffers not made by getBodyBuffer are left to the collector.
func putBodyBuffer(b []byte) {
	for i := range bodyBuffers {
		if cap(b) == bodyClassBytes<<i {
			b = b[:0]
			bodyBuffers[i].Put(&b)
			return
		}
	}
}

func (c *Caller) tooLargeMessage() string {
	return fmt.Sprintf("the backend response exceeded %d bytes, the most this gateway reads; ask for less data (a smaller page, fewer fields) if the operation allows it", c.maxBytes)
}

// readCapped reads at most limit bytes and fails with errTooLarge past it,
// into a buffer from the pool (see putBodyBuffer). hint is the
// Content-Length when known: the buffer has room for it plus one byte, so
// the read that sees EOF needs no more (bytes.Buffer.ReadFrom would double
// the buffer for it).
func readCapped(r io.Reader, limit, hint int64) ([]byte, error) {
	size := int64(bodyClassBytes)
	if hint > 0 && hint <= limit {
		size = hint + 1
	}
	buf := getBodyBuffer(size)
	for {
		if len(buf) == cap(buf) {
			grown := getBodyBuffer(min(2*int64(cap(buf)), limit+1))
			grown = append(grown, buf...)
			putBodyBuffer(buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			putBodyBuffer(buf)
			return nil, errTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			putBodyBuffer(buf)
			return nil, err
		}
	}
}

// successResult maps a 2xx response body. viewed is the buffer the
// result's strings point into, if any (see jsonResult).
func (p *callPlan) successResult(status, contentType string, body []byte, uri string) (res *mcp.CallToolResult, viewed []byte) {
	if len(body) == 0 {
		if p.hasOutput {
			return p.contractError(status, "the response has no body", nil, ""), nil
		}
		return mcp.TextResult(status), nil
	}
	mt, params := parseMediaType(contentType)
	if mt == "" {
		mt = sniffMediaType(body)
	}
	if p.hasOutput && mt == "text/plain" && jsonlex.Valid(body) {
		// The tool promises JSON, and this is JSON labelled text/plain:
		// what a Go server sniffs when the handler sets no Content-Type,
		// and a common slip elsewhere.
		mt = "application/json"
	}
	if openapi.IsJSONMediaType(mt) {
		if !utf8.Valid(body) {
			body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
		}
		// The fast output check validates as it walks: a body that fits
		// needs no other scan. Anything else is checked from the start.
		if p.output != nil && p.output.fitsObject(body, p.wrapped) {
			return p.jsonResult(status, body, true)
		}
		if !jsonlex.Valid(body) {
			if p.hasOutput {
				return p.contractError(status, "the response is not valid JSON", body, mt), nil
			}
			return mcp.TextResult(toUTF8(body, params["charset"])), nil
		}
		return p.jsonResult(status, body, false)
	}
	content := mapContent(mt, params, body, uri, 0)
	if p.hasOutput {
		return p.contractError(status, fmt.Sprintf("the response is %s, not JSON", mt), body, mt), nil
	}
	return &mcp.CallToolResult{Content: content}, nil
}

// jsonResult maps a valid JSON body. structuredContent is kept as raw JSON:
// no decode and re-encode on the hot path, and numbers stay exact. body is
// valid UTF-8 (invalid sequences were replaced); fits: the output check
// has passed already.
func (p *callPlan) jsonResult(status string, body []byte, fits bool) (*mcp.CallToolResult, []byte) {
	isObject := firstNonSpace(body) == '{'
	var structured json.RawMessage
	switch {
	case p.outputOff && !isObject:
		// output_schema off: only an object is structuredContent.
		return &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: bytesString(body)}}}, body
	case p.wrapped || (!isObject && !p.hasOutput):
		structured = wrapResult(body)
	case isObject:
		structured = json.RawMessage(body)
	default:
		return p.contractError(status, "the schema expects a JSON object but the response is "+jsonKindName(firstNonSpace(body)), body, "application/json"), nil
	}
	if p.output != nil && !fits {
		if where := p.output.check(structured, p.wrapped); where != "" {
			return driftResult(status, where, body), nil
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{{Type: "text", Text: bytesString(body)}},
		StructuredContent: structured,
	}, body
}

// bytesString returns b as a string without copying it. The text copy of a
// JSON result is the body itself: copying it cost a fresh allocation the
// size of the body on every call, most of it in page faults on fresh memory.
// b must not change while the string is in use: the body's buffer goes
// back to the pool only when the mcp.PooledResult made of it is released,
// and only package mcp can read the string (PooledResult keeps it
// unexported; Copy hands out copies).
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func wrapResult(body []byte) json.RawMessage {
	const prefix = `{"result":`
	out := make([]byte, 0, len(prefix)+len(body)+1)
	out = append(out, prefix...)
	out = append(out, body...)
	return append(out, '}')
}

func firstNonSpace(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// contractError is the result for a 2xx response that cannot satisfy the
// tool's outputSchema (see the comment at the top of this file).
func (p *callPlan) contractError(status, why string, body []byte, mt string) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "The backend call succeeded (%s), but its response does not fit this tool's output schema: %s.", status, why)
	switch {
	case len(body) == 0:
	case openapi.IsJSONMediaType(mt) || openapi.IsTextMediaType(mt):
		b.WriteString(" The response was:\n")
		b.WriteString(sanitizeExcerpt(body, contractExcerptBytes))
	default:
		fmt.Fprintf(&b, " The response was %d bytes of %s.", len(body), mt)
	}
	return mcp.ErrorResult(b.String())
}

// mapContent maps a body that is not the top-level JSON result.
func mapContent(mt string, params map[string]string, body []byte, uri string, depth int) []mcp.Content {
	switch {
	case len(body) == 0:
		return nil
	case openapi.IsJSONMediaType(mt) || openapi.IsTextMediaType(mt):
		return []mcp.Content{{Type: "text", Text: toUTF8(body, params["charset"])}}
	case strings.HasPrefix(mt, "image/"):
		return []mcp.Content{{Type: "image", Data: base64.StdEncoding.EncodeToString(body), MimeType: mt}}
	case strings.HasPrefix(mt, "audio/"):
		return []mcp.Content{{Type: "audio", Data: base64.StdEncoding.EncodeToString(body), MimeType: mt}}
	case strings.HasPrefix(mt, "multipart/") && params["boundary"] != "" && depth < maxPartDepth:
		if parts, ok := mapMultipart(body, params["boundary"], uri, depth); ok {
			return parts
		}
		return []mcp.Content{{Type: "text", Text: "The backend sent a malformed " + mt + " response."}}
	}
	return []mcp.Content{{Type: "resource", Resource: &mcp.ResourceContents{
		URI:      uri,
		MimeType: mt,
		Blob:     base64.StdEncoding.EncodeToString(body),
	}}}
}

// mapMultipart maps each part of a multipart body; a part without a
// Content-Type is text/plain (RFC 2046). Binary parts get the request URL
// with a #part-N fragment as their uri.
func mapMultipart(body []byte, boundary, uri string, depth int) ([]mcp.Content, bool) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var out []mcp.Content
	for i := 0; ; i++ {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false
		}
		if i >= maxParts {
			out = append(out, mcp.Content{Type: "text", Text: fmt.Sprintf("(further parts after the first %d were left out)", maxParts)})
			break
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, false
		}
		mt, params := parseMediaType(part.Header.Get("Content-Type"))
		if mt == "" {
			mt = "text/plain"
		}
		partURI := uri + "#part-" + strconv.Itoa(i+1)
		out = append(out, mapContent(mt, params, data, partURI, depth+1)...)
	}
	if len(out) == 0 {
		out = []mcp.Content{{Type: "text", Text: "The backend sent an empty multipart response."}}
	}
	return out, true
}

// errorResult maps a non-2xx response.
func (c *Caller) errorResult(method, publicURL string, resp *http.Response, secrets *redact.Set) *mcp.CallToolResult {
	detail := c.errorDetail(resp, secrets)
	status := statusText(resp.StatusCode)
	if stoppedRedirect(resp) {
		return mcp.ErrorResult(fmt.Sprintf("backend answered %s %s with a redirect (HTTP %s) to another host; it was not followed", method, requestPath(publicURL), status))
	}
	return mcp.ErrorResult(fmt.Sprintf("backend returned HTTP %s for %s %s%s", status, method, requestPath(publicURL), detail))
}

// stoppedRedirect reports a redirect that checkRedirect did not follow
// (to another host, or down from https).
func stoppedRedirect(resp *http.Response) bool {
	return resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != ""
}

// errorDetail reads a non-2xx response's body and returns what the error
// text adds after the status, as Config.ErrorBody says: ": " and a
// redacted, sanitized excerpt; a note that a 5xx's details are not passed
// on; or nothing. The rest of the body is drained so the connection can be
// reused. A stopped redirect adds nothing: its body usually repeats the
// target, which is none of the client's business.
func (c *Caller) errorDetail(resp *http.Response, secrets *redact.Set) string {
	// Read past the cap by the longest secret: one that straddles the cut
	// is redacted whole before the excerpt is cut.
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, int64(errorExcerptBytes+1+secrets.Longest())))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainBytes))
	if stoppedRedirect(resp) {
		return ""
	}
	forward := c.errBody == ErrorBodyAll || c.errBody == ErrorBodyExcerpt && resp.StatusCode < 500
	if resp.StatusCode >= 500 && !forward {
		return ": the backend failed; its error details are not passed on"
	}
	mt, params := parseMediaType(resp.Header.Get("Content-Type"))
	if forward && len(excerpt) > 0 && (mt == "" || openapi.IsJSONMediaType(mt) || openapi.IsTextMediaType(mt)) {
		if text := scrubExcerpt(sanitizeExcerpt(secrets.Bytes([]byte(toUTF8(excerpt, params["charset"]))), errorExcerptBytes)); text != "" {
			return ": " + text
		}
	}
	return ""
}

// requestPath is the path of the request URL, without host and query.
func requestPath(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return parsed.EscapedPath()
}

func statusText(code int) string {
	if code >= 0 && code < len(statusTexts) && statusTexts[code] != "" {
		return statusTexts[code]
	}
	return strconv.Itoa(code)
}

// statusTexts holds "200 OK" and the like, made once.
var statusTexts = func() (t [600]string) {
	for code := range t {
		if text := http.StatusText(code); text != "" {
			t[code] = strconv.Itoa(code) + " " + text
		}
	}
	return t
}()

func parseMediaType(ct string) (string, map[string]string) {
	if ct == "" {
		return "", nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return toolgen.MediaBase(ct), nil
	}
	return mt, params
}

// sniffMediaType guesses the type of a body sent without Content-Type.
func sniffMediaType(body []byte) string {
	if jsonlex.Valid(body) {
		return "application/json"
	}
	if utf8.Valid(body) && bytes.IndexByte(body, 0) < 0 {
		return "text/plain"
	}
	return "application/octet-stream"
}

// toUTF8 decodes text in its declared charset. Latin-1 is converted;
// anything else is taken as UTF-8 with invalid bytes replaced.
func toUTF8(body []byte, charset string) string {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "latin1", "latin-1", "iso8859-1":
		var b strings.Builder
		b.Grow(len(body))
		for _, c := range body {
			if !isDroppedControl(c) {
				b.WriteRune(rune(c))
			}
		}
		return b.String()
	}
	body = dropControls(body)
	if utf8.Valid(body) {
		return string(body)
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// isDroppedControl: C0 controls other than tab, newline and carriage
// return, and DEL. They mean nothing to a model, and JSON writes each as
// six bytes (\u0001): a text body of them would grow sixfold on the wire.
func isDroppedControl(c byte) bool {
	return c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f
}

// dropControls returns body without the dropped controls (body itself
// when it has none).
func dropControls(body []byte) []byte {
	i := 0
	for i < len(body) && !isDroppedControl(body[i]) {
		i++
	}
	if i == len(body) {
		return body
	}
	out := make([]byte, i, len(body))
	copy(out, body[:i])
	for _, c := range body[i:] {
		if !isDroppedControl(c) {
			out = append(out, c)
		}
	}
	return out
}

// sanitizeExcerpt makes backend text safe to quote: at most limit bytes,
// cut on a rune boundary, valid UTF-8, without control characters (except
// newline and tab) or bidirectional overrides.
func sanitizeExcerpt(body []byte, limit int) string {
	truncated := len(body) > limit
	if truncated {
		body = body[:limit]
		// Do not split the last rune.
		i := len(body) - 1
		for i > 0 && len(body)-i < utf8.UTFMax && !utf8.RuneStart(body[i]) {
			i--
		}
		if i >= 0 && !utf8.FullRune(body[i:]) {
			body = body[:i]
		}
	}
	var b strings.Builder
	b.Grow(len(body))
	for len(body) > 0 {
		r, size := utf8.DecodeRune(body)
		body = body[size:]
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == utf8.RuneError && size == 1:
			b.WriteRune('\uFFFD')
		case unicode.IsControl(r), r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	out := strings.TrimSpace(b.String())
	if truncated {
		out += " … (truncated)"
	}
	return out
}
