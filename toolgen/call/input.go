package call

// Backend-driven input: a backend that needs something from the user (an
// elicitation), from the client's model (sampling) or the client's roots
// answers, with any status (428 Precondition Required is the natural one),
// a body of media type application/vnd.mcp.input-required+json:
//
//	{"inputRequests": {"<key>": {"method": "elicitation/create", "params": {...}}, ...},
//	 "requestState": "<opaque>"}
//
// That answer is no result: CallWith returns it as an InputRequired, the
// gateway has the client answer, and the next round repeats the same
// request (the same arguments make the same method, URL and body) with
// the answers in Mcp-Input-Responses (base64url, unpadded, of the JSON
// object of inputResponses) and the backend's requestState, if it sent
// one, in Mcp-Request-State. No argument can set either header: header
// parameters of those names are dropped (call_plan.go), so a model cannot
// forge answers on the first round.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

const (
	// inputRequiredType is the media type of a backend's request for input.
	inputRequiredType = "application/vnd.mcp.input-required+json"
	// The headers of a round that answers input requests.
	headerInputResponses = "Mcp-Input-Responses"
	headerRequestState   = "Mcp-Request-State"
	// maxStateBytes bounds the requestState sent back as a header.
	maxStateBytes = 8 << 10
	// maxInputKeyBytes bounds the keys of inputRequests.
	maxInputKeyBytes = 128
)

// CallOptions are the options of CallWith.
type CallOptions struct {
	// Observe receives the stages of the call; nil: none are reported.
	Observe Observer
	// Input answers the backend's request for input of the previous
	// round; nil on the first round.
	Input *InputAnswer
}

// InputAnswer repeats a request after the backend asked for input.
type InputAnswer struct {
	// Responses is the JSON object of inputResponses, by the keys of the
	// backend's inputRequests. The gateway bounds its size.
	Responses json.RawMessage
	// State is the backend's requestState, when it sent one.
	State *string
}

// InputRequired is what a backend asked for instead of answering.
type InputRequired struct {
	// Requests are the backend's inputRequests: 1 to
	// mcp.MaxInputRequests entries, each a method mcp.CapabilityFor
	// knows with params absent or an object. Credentials the backend
	// echoed are redacted.
	Requests mcp.InputRequests
	// State is the backend's requestState, to send back as is; nil when
	// it sent none. It is a valid header value.
	State *string
	// Status is the backend's HTTP status.
	Status int
	// Elapsed is how long the backend took to ask, from sending the
	// request to reading its answer.
	Elapsed time.Duration
}

// methods names the kinds of input requests, for CallPooled's message.
func (in *InputRequired) methods() string {
	seen := map[string]bool{}
	var kinds []string
	for _, r := range in.Requests {
		if k := mcp.CapabilityFor(r.Method); !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ", ")
}

// check refuses an answer that cannot be sent: responses that are not a
// JSON object, or a state that is not a valid header value.
func (a *InputAnswer) check() *mcp.CallToolResult {
	if firstNonSpace(a.Responses) != '{' || !jsonlex.Valid(a.Responses) {
		return mcp.ErrorResult("the input responses to send to the backend are not a JSON object; nothing was sent")
	}
	if a.State != nil {
		if why := stateProblem(*a.State); why != "" {
			return mcp.ErrorResult("the request state to send back to the backend is not a valid header value: " + why + "; nothing was sent")
		}
	}
	return nil
}

// setInputHeaders sets the headers of a round that answers input
// requests, and removes them from any other (a static header could set
// them).
func setInputHeaders(req *http.Request, a *InputAnswer) {
	req.Header.Del(headerInputResponses)
	req.Header.Del(headerRequestState)
	if a == nil {
		return
	}
	req.Header.Set(headerInputResponses, base64.RawURLEncoding.EncodeToString(a.Responses))
	if a.State != nil {
		req.Header.Set(headerRequestState, *a.State)
	}
}

// stateProblem says why s cannot be sent back as a header value: it
// must be printable ASCII without surrounding spaces (a server trims
// them), at most maxStateBytes.
func stateProblem(s string) string {
	if len(s) > maxStateBytes {
		return fmt.Sprintf("it is %d bytes, over the %d a header may carry", len(s), maxStateBytes)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return "it holds characters other than printable ASCII"
		}
	}
	if strings.TrimSpace(s) != s {
		return "it begins or ends with a space, which a header does not keep"
	}
	return ""
}

// inputRequired reads a request for input. A malformed one is an error
// result (with the reason); err is a failure to read the body.
func (x *exchange) inputRequired(resp *http.Response) (*InputRequired, *mcp.PooledResult, error) {
	c := x.c
	malformed := func(why string) *mcp.PooledResult {
		return mcp.Pooled(mcp.ErrorResult("the backend asked for input in a malformed way: " + why))
	}
	if resp.ContentLength > c.maxBytes {
		return nil, malformed(fmt.Sprintf("its request is over the %d bytes the gateway reads", c.maxBytes)), nil
	}
	body, err := readCapped(resp.Body, c.maxBytes, resp.ContentLength)
	if errors.Is(err, errTooLarge) {
		return nil, malformed(fmt.Sprintf("its request is over the %d bytes the gateway reads", c.maxBytes)), nil
	}
	if err != nil {
		return nil, nil, err
	}
	// The body may echo the gateway's credentials: redact them before
	// anything of it is kept (decoding copies what it keeps).
	in, why := parseInputRequired(x.out.secrets.Bytes(body))
	putBodyBuffer(body)
	if why != "" {
		return nil, malformed(why), nil
	}
	in.Status = resp.StatusCode
	return in, nil, nil
}

// parseInputRequired reads the body of a request for input; why says
// what is wrong with a malformed one, in a few words of the gateway's
// own (backend text appears only quoted and bounded).
func parseInputRequired(body []byte) (in *InputRequired, why string) {
	if firstNonSpace(body) != '{' {
		return nil, "its body is not a JSON object"
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil, "its body is not valid JSON"
	}
	raw, ok := top["inputRequests"]
	switch {
	case !ok || isJSONNull(raw):
		return nil, "it has no inputRequests"
	case firstNonSpace(raw) != '{':
		return nil, "its inputRequests is not an object"
	}
	var entries map[string]json.RawMessage
	if json.Unmarshal(raw, &entries) != nil {
		return nil, "its inputRequests is not an object"
	}
	switch {
	case len(entries) == 0:
		return nil, "its inputRequests is empty"
	case len(entries) > mcp.MaxInputRequests:
		return nil, fmt.Sprintf("it asks for %d inputs at once, over the %d a round may hold", len(entries), mcp.MaxInputRequests)
	}
	in = &InputRequired{Requests: make(mcp.InputRequests, len(entries))}
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if why := keyProblem(k); why != "" {
			return nil, why
		}
		r, why := parseInputRequest(k, entries[k])
		if why != "" {
			return nil, why
		}
		in.Requests[k] = r
	}
	if raw, ok := top["requestState"]; ok && !isJSONNull(raw) {
		var state string
		if firstNonSpace(raw) != '"' || json.Unmarshal(raw, &state) != nil {
			return nil, "its requestState is not a string"
		}
		if why := stateProblem(state); why != "" {
			return nil, "its requestState cannot be sent back as a header (" + why + ")"
		}
		in.State = &state
	}
	return in, ""
}

// keyProblem: a key of inputRequests is a non-empty printable string of
// at most maxInputKeyBytes.
func keyProblem(k string) string {
	switch {
	case k == "":
		return "an input request has an empty key"
	case len(k) > maxInputKeyBytes:
		return fmt.Sprintf("an input request key is over %d bytes", maxInputKeyBytes)
	case !utf8.ValidString(k) || strings.ContainsFunc(k, func(r rune) bool { return !unicode.IsPrint(r) }):
		return "an input request key holds characters that are not printable"
	}
	return ""
}

func parseInputRequest(key string, raw json.RawMessage) (mcp.InputRequest, string) {
	var fields map[string]json.RawMessage
	if firstNonSpace(raw) != '{' || json.Unmarshal(raw, &fields) != nil {
		return mcp.InputRequest{}, fmt.Sprintf("input request %q is not an object", key)
	}
	var method string
	if m, ok := fields["method"]; !ok || firstNonSpace(m) != '"' || json.Unmarshal(m, &method) != nil {
		return mcp.InputRequest{}, fmt.Sprintf("input request %q has no method", key)
	}
	if mcp.CapabilityFor(method) == "" {
		return mcp.InputRequest{}, fmt.Sprintf("input request %q asks for %q, which is not %s, %s or %s",
			key, sanitizeExcerpt([]byte(method), 64), mcp.MethodElicit, mcp.MethodSample, mcp.MethodListRoots)
	}
	r := mcp.InputRequest{Method: method}
	if p, ok := fields["params"]; ok && !isJSONNull(p) {
		if firstNonSpace(p) != '{' {
			return mcp.InputRequest{}, fmt.Sprintf("the params of input request %q are not an object", key)
		}
		r.Params = p
	}
	return r, ""
}
