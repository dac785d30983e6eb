package call

// Fetch: a GET operation's response as an MCP resource's raw contents.
//
// A fetch takes the request path of a tool call (prepare in call.go):
// the same argument checks, URL bounds, credentials, tokens, timeout and
// redirect policy. Only the answer differs: the body comes back as bytes
// with its media type and validators, not mapped to a tool result, and a
// failure is a FetchError whose message is the text a tool would get
// (argument, token and transport failures) or a short status line.
//
// Conditional requests serve change polling: the validators of an earlier
// Fetch go out as If-None-Match and If-Modified-Since, and a 304 is
// NotModified with no body.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// Conditional are validators from an earlier Fetch; zero means an
// unconditional GET.
type Conditional struct{ ETag, LastModified string }

// Fetched is a GET operation's answer.
type Fetched struct {
	Status      int  // the backend's status
	NotModified bool // 304 to a conditional request; Body is nil
	// MIMEType is the response Content-Type's media type, lower case and
	// without parameters; "" when the backend sent none.
	MIMEType string
	// ETag and LastModified are the response's validators. On a 304 that
	// repeats neither, they are the request's.
	ETag, LastModified string
	// Body is the whole body, as the backend sent it but for the
	// gateway's backend credentials (see redact.go). A body over
	// Config.MaxResponseBytes is a FetchError, never cut short.
	Body []byte
}

// FetchError is a failed Fetch, fit for the client: Message holds no Go
// error text, internal address or credential.
type FetchError struct {
	Message  string
	Status   int  // the backend's status; 0 when none came
	NotFound bool // the backend answered 404 or 410
	// Timeout: the operation's timeout or the caller's deadline passed.
	Timeout bool
}

func (e *FetchError) Error() string { return e.Message }

// Fetch GETs t's operation with args and returns the body as is. It takes
// the same request path as CallPooled, and a failure anywhere on it is a
// FetchError with the text a tool call would have shown, except that a
// non-2xx answer (other than a 304 to a conditional request) reads "the
// backend answered 404 Not Found", followed by the excerpt Config.ErrorBody
// allows. Operations other than GET are refused.
func (c *Caller) Fetch(ctx context.Context, t *toolgen.Tool, args json.RawMessage, cond Conditional) (*Fetched, *FetchError) {
	if t != nil && t.Binding != nil && !strings.EqualFold(t.Binding.Method, http.MethodGet) {
		return nil, &FetchError{Message: fmt.Sprintf("the operation of %q is not a GET: only GET operations can be read", t.Name)}
	}
	out, cancel, fail := c.prepare(ctx, t, args)
	defer cancel()
	if fail != nil {
		return nil, &FetchError{Message: fail.FirstText(), Timeout: deadlinePassed(out.callCtx)}
	}
	conditional := cond.apply(out.req)
	resp, err := c.client.Do(out.req)
	if err != nil {
		return nil, c.fetchFailure(ctx, out, err, 0)
	}
	defer resp.Body.Close()

	code := resp.StatusCode
	etag, lastModified := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	switch {
	case code == http.StatusNotModified && conditional:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainBytes))
		if etag == "" && lastModified == "" {
			etag, lastModified = cond.ETag, cond.LastModified
		}
		return &Fetched{Status: code, NotModified: true, ETag: etag, LastModified: lastModified}, nil
	case code < 200 || code > 299:
		return nil, c.statusFailure(resp, out)
	}
	if resp.ContentLength > c.maxBytes {
		return nil, &FetchError{Message: c.tooLargeMessage(), Status: code}
	}
	buf, err := readCapped(resp.Body, c.maxBytes, resp.ContentLength)
	if errors.Is(err, errTooLarge) {
		return nil, &FetchError{Message: c.tooLargeMessage(), Status: code}
	}
	if err != nil {
		return nil, c.fetchFailure(ctx, out, err, code)
	}
	// buf is pooled and the body is the caller's to keep: copy it, unless
	// redaction made a copy already.
	body := out.secrets.Bytes(buf)
	if sameBuffer(body, buf) {
		body = bytes.Clone(buf)
	}
	putBodyBuffer(buf)
	mt, _ := parseMediaType(resp.Header.Get("Content-Type"))
	return &Fetched{Status: code, MIMEType: mt, ETag: etag, LastModified: lastModified, Body: body}, nil
}

// apply sets the conditional request headers and reports whether any was
// set. A validator with control characters (it came from a header, so
// only a caller's own could have them) is left out rather than failing
// the request.
func (cond Conditional) apply(req *http.Request) bool {
	set := false
	for _, h := range [...]struct{ name, value string }{
		{"If-None-Match", cond.ETag},
		{"If-Modified-Since", cond.LastModified},
	} {
		if h.value != "" && !strings.ContainsFunc(h.value, isHeaderControl) {
			req.Header.Set(h.name, h.value)
			set = true
		}
	}
	return set
}

// fetchFailure is a failed round trip or body read, in the words a tool
// call would use (transportFailure).
func (c *Caller) fetchFailure(parent context.Context, out outgoing, err error, status int) *FetchError {
	msg := c.transportFailure(parent, out.callCtx, out.timeout, err).FirstText()
	return &FetchError{Message: msg, Status: status, Timeout: deadlinePassed(out.callCtx)}
}

// statusFailure is a non-2xx answer: its status and, as for a tool call,
// what Config.ErrorBody lets its body say (errorDetail).
func (c *Caller) statusFailure(resp *http.Response, out outgoing) *FetchError {
	detail := c.errorDetail(resp, out.secrets)
	msg := "the backend answered " + statusText(resp.StatusCode)
	if stoppedRedirect(resp) {
		msg += " with a redirect to another host; it was not followed"
	} else {
		msg += detail
	}
	code := resp.StatusCode
	return &FetchError{Message: msg, Status: code, NotFound: code == http.StatusNotFound || code == http.StatusGone}
}

// deadlinePassed reports whether ctx ended because a deadline passed (the
// operation's timeout, or the caller's own), not because it was cancelled.
func deadlinePassed(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// IsTextMIME reports whether content of media type mime is text (JSON,
// text/*, XML, YAML, JavaScript, form data, GraphQL, ...), to be sent as a
// resource's text rather than as a base64 blob. Parameters and case are
// ignored. It is the split the tool path makes between text and binary
// content.
func IsTextMIME(mime string) bool {
	mt := toolgen.MediaBase(mime)
	return openapi.IsJSONMediaType(mt) || openapi.IsTextMediaType(mt)
}
