package call

// Asynchronous operations: a 202 Accepted answer with a Location header,
// or any 202 of an operation marked x-mcp-async (toolgen.AsyncSpec, which
// may name a JSON pointer into the 202 body instead), names a status URL.
// The call polls it with GET until an answer other than 202, which is the
// tool result, mapped as an answer of the operation would be (an error as
// an error; a redirect such as 303 See Other is followed as checkRedirect
// allows). Between polls it waits what Retry-After says (seconds or an
// HTTP date; 1s without one, always within [100ms, 30s]), and each 202 is
// reported as StagePolling, with the progress its JSON body gives
// ({"progress": n, "total"?: n, "message"?: s}). A 202 that names a status
// URL again moves the polling there.
//
// The status URL must have the backend's origin (scheme, host and port):
// polls carry the operation's credentials (static headers, configured
// credentials, the tokens the first request fetched), and a backend must
// not be able to send them, or the gateway, elsewhere. The call's context
// bounds the whole of it, and ends the wait between polls at once.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

const (
	defaultPollDelay = time.Second
	minPollDelay     = 100 * time.Millisecond
	maxPollDelay     = 30 * time.Second
	// maxStatusBodyBytes bounds the 202 body read for a status URL or
	// progress; the rest is drained as an error body's is.
	maxStatusBodyBytes = 64 << 10
)

// pollsAccepted reports whether resp starts an asynchronous operation that
// the call polls.
func (x *exchange) pollsAccepted(resp *http.Response) bool {
	return resp.StatusCode == http.StatusAccepted && (x.out.plan.async != nil || resp.Header.Get("Location") != "")
}

// stillRunning: a status poll's answer that is neither final nor one of
// the answers mapped by media type.
func stillRunning(resp *http.Response) bool {
	if resp.StatusCode != http.StatusAccepted {
		return false
	}
	mt, _ := parseMediaType(resp.Header.Get("Content-Type"))
	return mt != inputRequiredType && mt != eventStreamType
}

// poll follows an asynchronous operation from its 202 (accepted) to its
// final answer.
func (x *exchange) poll(accepted *http.Response) (*mcp.PooledResult, *InputRequired) {
	ctx := x.out.callCtx
	base, err := url.Parse(x.out.publicURL)
	if err != nil {
		return x.pollFailure("its request URL could not be read", accepted.StatusCode), nil
	}
	var (
		target *url.URL
		polls  int
		done   float64
	)
	resp := accepted
	for {
		body := x.statusBody(resp)
		next, named, why := x.statusURL(resp, body, base)
		if why != "" && (named || target == nil) {
			return x.pollFailure(why, resp.StatusCode), nil
		}
		if next != nil {
			target = next
		}
		x.observePolling(resp.StatusCode, polls, body, &done)

		timer := time.NewTimer(retryDelay(resp.Header, time.Now()))
		select {
		case <-ctx.Done():
			timer.Stop()
			return x.pollEnded(polls), nil
		case <-timer.C:
		}
		req, public := x.pollRequest(target)
		polls++
		resp, err = x.c.client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return x.pollEnded(polls), nil
			}
			return mcp.Pooled(x.c.transportFailure(x.parent, ctx, x.out.timeout, err)), nil
		}
		if !stillRunning(resp) {
			defer resp.Body.Close()
			return x.answer(resp, http.MethodGet, public, false)
		}
		base = target
	}
}

// statusBody reads a 202's body (at most maxStatusBodyBytes, credentials
// redacted) and closes it.
func (x *exchange) statusBody(resp *http.Response) []byte {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBodyBytes+1))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainBytes))
	if err != nil || len(body) > maxStatusBodyBytes {
		return nil
	}
	return x.out.secrets.Bytes(body)
}

// statusURL is the status URL a 202 names, resolved against base (the
// URL of the request it answers). named: the 202 names one; why says
// what is wrong when it names none, or one the gateway does not poll
// (u is then nil).
func (x *exchange) statusURL(resp *http.Response, body []byte, base *url.URL) (u *url.URL, named bool, why string) {
	var raw string
	if spec := x.out.plan.async; spec != nil && spec.Location != "" {
		s, ok := pointerString(body, spec.Location)
		if !ok {
			return nil, false, fmt.Sprintf("its answer has no status URL at %s", spec.Location)
		}
		raw = s
	} else if raw = resp.Header.Get("Location"); raw == "" {
		return nil, false, "its answer has no Location header naming a status URL"
	}
	ref, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, true, "its status URL is not a valid URL"
	}
	u = base.ResolveReference(ref)
	u.Fragment, u.RawFragment = "", ""
	switch {
	case u.User != nil:
		return nil, true, "its status URL carries credentials"
	case origin(u) != origin(x.c.base):
		return nil, true, "its status URL is not on the backend's origin (scheme, host and port), and the gateway polls only the backend"
	}
	return u, true, ""
}

// pollFailure ends a call whose 202 cannot be followed.
func (x *exchange) pollFailure(why string, status int) *mcp.PooledResult {
	res := mcp.Pooled(mcp.ErrorResult("the backend accepted the operation (202 Accepted) to finish later, but " + why + "; its result cannot be fetched"))
	res.SetBackendStatus(status)
	return res
}

// pollEnded is the result when the call's context ends while the
// operation runs: its timeout passed, or the call was cancelled.
func (x *exchange) pollEnded(polls int) *mcp.PooledResult {
	times := "times"
	if polls == 1 {
		times = "time"
	}
	var res *mcp.PooledResult
	if errors.Is(context.Cause(x.out.callCtx), ErrTimeout) || x.parent.Err() == nil {
		res = mcp.Pooled(mcp.ErrorResult(fmt.Sprintf("the operation did not finish within its timeout (%s): the backend accepted it and the gateway polled its status %d %s", x.out.timeout, polls, times)))
	} else {
		res = mcp.Pooled(mcp.ErrorResult(cancelledMessage(x.parent)))
	}
	res.SetBackendStatus(http.StatusAccepted)
	return res
}

// pollRequest is a status poll to target with the operation's
// credentials: those buildRequest adds and the tokens of the first
// request. public is target as a result may show it.
func (x *exchange) pollRequest(target *url.URL) (req *http.Request, public string) {
	u := *target
	// The method is a constant: this cannot fail.
	req, _ = http.NewRequestWithContext(x.out.callCtx, http.MethodGet, "", nil)
	req.URL, req.Host = &u, u.Host
	public = x.out.secrets.String(u.String())
	req.Header.Set("Accept", x.out.plan.accept)
	x.c.addStaticHeaders(req)
	x.out.plan.creds.apply(req)
	for _, cred := range x.out.plan.creds {
		if cred.token != nil {
			req.Header.Set(cred.name, x.out.req.Header.Get(cred.name))
		}
	}
	return req, public
}

// observePolling reports a 202 as StagePolling, with the progress its
// JSON body gives. done is the last progress reported, which the new one
// may only raise.
func (x *exchange) observePolling(status, polls int, body []byte, done *float64) {
	pr := Progress{Stage: StagePolling, Status: status, Polls: polls}
	var st struct {
		Progress *float64 `json:"progress"`
		Total    *float64 `json:"total"`
		Message  *string  `json:"message"`
	}
	if firstNonSpace(body) == '{' && json.Unmarshal(body, &st) == nil {
		if st.Progress != nil && *st.Progress > *done {
			*done = *st.Progress
		}
		if st.Total != nil && *st.Total > 0 {
			pr.Total = *st.Total
		}
		if st.Message != nil {
			pr.Message = sanitizeExcerpt([]byte(*st.Message), maxProgressMessageBytes)
		}
	}
	pr.Done = *done
	x.observe(pr)
}

// retryDelay is how long to wait before the next poll: Retry-After in
// seconds or as an HTTP date (relative to now), else defaultPollDelay,
// within [minPollDelay, maxPollDelay].
func retryDelay(h http.Header, now time.Time) time.Duration {
	d := defaultPollDelay
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
			d = time.Duration(min(secs, maxPollDelay.Seconds()) * float64(time.Second))
		} else if at, err := http.ParseTime(v); err == nil {
			d = at.Sub(now)
		}
	}
	return min(max(d, minPollDelay), maxPollDelay)
}

// origin is a URL's scheme, host and port, lower case, with the scheme's
// default port made explicit.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// pointerString is the non-empty string a JSON pointer (RFC 6901) names
// in body.
func pointerString(body []byte, ptr string) (string, bool) {
	if !strings.HasPrefix(ptr, "/") {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch node := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = node[tok]; !ok {
				return "", false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node) || (len(tok) > 1 && tok[0] == '0') {
				return "", false
			}
			v = node[i]
		default:
			return "", false
		}
	}
	s, ok := v.(string)
	return s, ok && s != ""
}
