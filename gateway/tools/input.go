package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// A tool call may need input from the client: a confirmation the gateway
// asks for itself (x-mcp-confirm, confirm:), or whatever the backend asks
// for (application/vnd.mcp.input-required+json). The call is a loop over
// rounds; the era decides how a round's requests reach the client:
//
//   - session era: Input.Ask sends them as server→client requests on the
//     call's stream and waits for the answers (which may reach any replica);
//   - 2026-07-28: the call answers input_required with the continuation
//     sealed in requestState, and the client's retry resumes the loop.
//
// The continuation is what a round must remember: whether the user
// confirmed, how many backend rounds ran, what the last round asked, and
// the backend's own requestState.

// Input is how the gateway reaches the client for input; the transport
// implements it (gateway/ask.go).
type Input interface {
	// Ask (session era) sends reqs to r's client and returns its answers,
	// all of them, or an error: ctx ended (cancelled, or its timeout —
	// see Config.InputTimeout), ErrTooManyPending, ErrSessionEnded, or a
	// delivery failure.
	Ask(ctx context.Context, r *mcp.Request, reqs mcp.InputRequests) (mcp.InputResponses, error)
	// Seal (2026-07-28) makes the requestState of an input_required
	// answer to r, expiring after Config.InputTimeout.
	Seal(r *mcp.Request, state []byte) (string, error)
	// Open checks and opens the requestState of r's retry, and spends it
	// (single use, across replicas). Its error is the client's answer.
	Open(r *mcp.Request, token string) ([]byte, error)
}

// Errors Input.Ask returns.
var (
	ErrTooManyPending = errors.New("too many pending requests to the client")
	ErrSessionEnded   = errors.New("the session ended")
)

// errInputTimeout is the cause of an ask's context when InputTimeout passed.
var errInputTimeout = errors.New("the client did not answer in time")

// maxContinuation bounds a continuation before sealing: the sealed token
// (base64, plus its envelope) stays under what gateway/mrtr opens.
const maxContinuation = 64 << 10

// confirmKey is the key of the gateway's own confirmation request.
const confirmKey = "confirm"

// continuation is a call's progress through its input rounds.
type continuation struct {
	Confirmed bool              `json:"c,omitempty"`
	Rounds    int               `json:"n,omitempty"` // backend input rounds
	Pending   mcp.InputRequests `json:"p,omitempty"` // the last round's requests
	Backend   bool              `json:"b,omitempty"` // Pending came from the backend
	State     *string           `json:"s,omitempty"` // the backend's requestState
}

// retryParams are the 2026-07-28 retry fields of tools/call.
type retryParams struct {
	InputResponses mcp.InputResponses `json:"inputResponses"`
	RequestState   *string            `json:"requestState"`
}

// InputRequiredResult is the 2026-07-28 answer of a call that needs input.
type InputRequiredResult struct {
	ResultType    string            `json:"resultType"`
	InputRequests mcp.InputRequests `json:"inputRequests,omitempty"`
	RequestState  string            `json:"requestState,omitempty"`
	Meta          map[string]any    `json:"_meta,omitempty"`
}

// run is the call after admission: rounds of confirmation, backend calls
// and input, until a result.
func (f *Feature) run(r *mcp.Request, c *catalog, tool *toolgen.Tool, args json.RawMessage, observe call.Observer, slot *slotHold) (any, error) {
	var cont continuation
	var answers mcp.InputResponses
	if r.Era == mcp.EraStateless && bytes.Contains(r.Params, []byte(`"requestState"`)) {
		var p retryParams
		if len(r.Params) > 0 && json.Unmarshal(r.Params, &p) != nil {
			return nil, mcp.InvalidParams("Invalid params for tools/call: inputResponses must be an object and requestState a string")
		}
		if p.RequestState != nil {
			if f.input == nil {
				return nil, mcp.InvalidParams("Invalid params for tools/call: requestState was not issued by this gateway")
			}
			raw, err := f.input.Open(r, *p.RequestState)
			if err != nil {
				return nil, err
			}
			if json.Unmarshal(raw, &cont) != nil {
				return nil, mcp.InvalidParams("Invalid params for tools/call: requestState is not valid")
			}
			answers = p.InputResponses
		}
	}
	var input *call.InputAnswer
	for {
		if cont.Pending != nil {
			if missing := missingAnswers(cont.Pending, answers); len(missing) > 0 {
				// Only a 2026-07-28 retry can lack answers: ask again.
				return f.inputRequired(r, cont)
			}
			if !cont.Backend {
				if why := declined(answers[confirmKey]); why != "" {
					res := mcp.ErrorResult(fmt.Sprintf("%s: nothing was sent to the backend (%s).", why, describeCall(tool, args)))
					res.ResultMeta = r.StampResult(false)
					return mcp.Pooled(res).SetDenied("declined"), nil // audit.ReasonDeclined
				}
				cont.Confirmed = true
			} else {
				resp, err := backendAnswers(cont.Pending, answers, f.cfg.MaxInputBytes)
				if err != nil {
					return f.toolError(r, err.Error()), nil
				}
				input = &call.InputAnswer{Responses: resp, State: cont.State}
			}
			cont.Pending, cont.Backend, answers = nil, false, nil
		}
		if tool.Confirm != nil && !cont.Confirmed {
			if !hasCapability(r.ClientCaps, "elicitation") {
				if !f.cfg.ConfirmWithoutElicitation {
					return f.toolError(r, fmt.Sprintf("%s needs the user's confirmation, and this client cannot ask (it declared no elicitation capability); the call was not made. The gateway's confirm_without_elicitation setting decides this.", tool.Name)), nil
				}
				cont.Confirmed = true
				continue
			}
			cont.Pending = mcp.InputRequests{confirmKey: confirmRequest(tool, args)}
		} else {
			res, need, cancelled := f.callBackend(r, c, tool, args, observe, input)
			switch {
			case cancelled:
				return nil, mcp.ErrCancelled
			case need == nil:
				return res, nil
			}
			input = nil
			cont.Rounds++
			if cont.Rounds > f.cfg.MaxInputRounds {
				return f.toolError(r, fmt.Sprintf("the backend asked for input more than %d times; the call was stopped", f.cfg.MaxInputRounds)), nil
			}
			if caps := missingCapabilities(r.ClientCaps, need.Requests); caps != nil {
				return f.lacksCapability(r, caps)
			}
			for k, q := range need.Requests {
				if len(bytes.TrimSpace(q.Params)) == 0 {
					// Clients decode params by method; some refuse none at all.
					q.Params = json.RawMessage(`{}`)
					need.Requests[k] = q
				}
			}
			cont.Pending, cont.Backend, cont.State = need.Requests, true, need.State
		}
		if r.Era == mcp.EraStateless {
			return f.inputRequired(r, cont)
		}
		// A human may take a while: the replica's slot is not held meanwhile.
		slot.release()
		var err error
		if answers, err = f.askClient(r, cont.Pending); err != nil {
			if errors.Is(err, mcp.ErrCancelled) {
				return nil, err
			}
			return f.toolError(r, err.Error()), nil
		}
		if !slot.retake(r) {
			return f.busy(r, c.conf), nil
		}
	}
}

// callBackend runs one backend round: its result, or what the backend
// asks for, or cancelled.
func (f *Feature) callBackend(r *mcp.Request, c *catalog, tool *toolgen.Tool, args json.RawMessage, observe call.Observer, input *call.InputAnswer) (res *mcp.PooledResult, need *call.InputRequired, cancelled bool) {
	ctx, cancel := callContext(r, c, tool)
	defer cancel()
	stop := f.heartbeat(r, observe)
	res, need = c.callerFor(tool).CallWith(ctx, tool, args, call.CallOptions{Observe: observe, Input: input})
	stop()
	recordBackend(r, res, need)
	if mcp.Cancelled(ctx, call.ErrTimeout) {
		if res != nil {
			res.Release()
		}
		return nil, nil, true
	}
	return res, need, false
}

// askClient sends one round of requests (session era) and waits for the
// answers, within InputTimeout.
func (f *Feature) askClient(r *mcp.Request, reqs mcp.InputRequests) (mcp.InputResponses, error) {
	if f.input == nil {
		return nil, errors.New("the gateway cannot reach this client for input")
	}
	ctx, cancel := r.CallContext(f.cfg.InputTimeout, errInputTimeout)
	defer cancel()
	answers, err := f.input.Ask(ctx, r, reqs)
	switch {
	case err == nil:
		return answers, nil
	case errors.Is(context.Cause(ctx), errInputTimeout):
		return nil, fmt.Errorf("the client did not answer the gateway's %s within %s; the call was stopped", describeRequests(reqs), f.cfg.InputTimeout)
	case ctx.Err() != nil:
		return nil, mcp.ErrCancelled
	case errors.Is(err, ErrTooManyPending):
		return nil, fmt.Errorf("the session already has %d requests to the client waiting for answers; the call was stopped", f.cfg.MaxPending)
	case errors.Is(err, ErrSessionEnded):
		return nil, errors.New("the session ended while the gateway waited for the client's answer; the call was stopped")
	}
	return nil, fmt.Errorf("the gateway could not ask the client (%s): %v", describeRequests(reqs), err)
}

// inputRequired is the 2026-07-28 answer asking for cont.Pending.
func (f *Feature) inputRequired(r *mcp.Request, cont continuation) (any, error) {
	if f.input == nil {
		return f.toolError(r, "the gateway cannot ask this client for input"), nil
	}
	raw, err := json.Marshal(cont)
	if err != nil {
		return nil, err
	}
	if len(raw) > maxContinuation {
		// A sealed state must fit what Open accepts (and what clients echo).
		return f.toolError(r, fmt.Sprintf("the backend's request for input is %d bytes, over the %d the gateway carries in requestState; the call was stopped", len(raw), maxContinuation)), nil
	}
	state, err := f.input.Seal(r, raw)
	if err != nil {
		return nil, err
	}
	res := &InputRequiredResult{ResultType: "input_required", InputRequests: cont.Pending, RequestState: state}
	if m := r.StampResult(false); m.Meta != nil {
		res.Meta = m.Meta
	}
	return res, nil
}

// toolError is an isError result of the call (counted by call).
func (f *Feature) toolError(r *mcp.Request, text string) *mcp.PooledResult {
	res := mcp.ErrorResult(text)
	res.ResultMeta = r.StampResult(false)
	return mcp.Pooled(res)
}

// lacksCapability answers a backend's request for input the client did
// not declare: -32021 in 2026-07-28, an isError result in a session (the
// backend is not retried).
func (f *Feature) lacksCapability(r *mcp.Request, caps []string) (any, error) {
	if r.Era == mcp.EraStateless {
		// ClientCapabilities shape: "elicitation.url" is {elicitation: {url: {}}}.
		req := make(map[string]any, len(caps))
		for _, c := range caps {
			top, sub, nested := strings.Cut(c, ".")
			if !nested {
				req[top] = map[string]any{}
				continue
			}
			m, _ := req[top].(map[string]any)
			if m == nil {
				m = map[string]any{}
				req[top] = m
			}
			m[sub] = map[string]any{}
		}
		return nil, mcp.NewError(mcp.CodeMissingCapability, "Missing required client capability: %s", strings.Join(caps, ", ")).
			WithStatus(http.StatusBadRequest).WithData(map[string]any{"requiredCapabilities": req})
	}
	return f.toolError(r, fmt.Sprintf("the backend needs input this client cannot give: it declared no %s capability; the call was stopped", strings.Join(caps, " or "))), nil
}

// missingCapabilities lists the client capabilities reqs need and caps
// lacks, sorted; nil when none.
func missingCapabilities(caps json.RawMessage, reqs mcp.InputRequests) []string {
	var out []string
	for _, q := range reqs {
		c := mcp.CapabilityFor(q.Method)
		if c == "elicitation" {
			c = elicitationMode(q.Params)
		}
		if c != "" && !hasCapability(caps, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// elicitationMode is the capability an elicitation needs: "elicitation"
// for a form (the default mode), "elicitation.url" for mode url.
func elicitationMode(params json.RawMessage) string {
	var p struct {
		Mode string `json:"mode"`
	}
	_ = json.Unmarshal(params, &p)
	if p.Mode == "url" {
		return "elicitation.url"
	}
	return "elicitation"
}

// hasCapability reports whether the client's capabilities object has
// name (an object, however empty). "elicitation" means form elicitation:
// an empty elicitation object (2025-06-18's only kind) or one that lists
// form; "elicitation.url" needs url listed.
func hasCapability(caps json.RawMessage, name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(caps, &m) != nil {
		return false
	}
	top, mode, _ := strings.Cut(name, ".")
	v, ok := m[top]
	v = bytes.TrimSpace(v)
	if !ok || len(v) == 0 || v[0] != '{' {
		return false
	}
	if top != "elicitation" {
		return true
	}
	var modes map[string]json.RawMessage
	_ = json.Unmarshal(v, &modes)
	if mode == "" {
		_, form := modes["form"]
		return form || len(modes) == 0
	}
	_, has := modes[mode]
	return has
}

// missingAnswers lists the pending keys answers lacks.
func missingAnswers(pending mcp.InputRequests, answers mcp.InputResponses) []string {
	var out []string
	for k := range pending {
		if a, ok := answers[k]; !ok || len(bytes.TrimSpace(a)) == 0 || bytes.Equal(bytes.TrimSpace(a), []byte("null")) {
			out = append(out, k)
		}
	}
	return out
}

// backendAnswers is the inputResponses object the backend gets: the
// answers to its own keys (extra keys a client sent are dropped), at most
// limit bytes.
func backendAnswers(pending mcp.InputRequests, answers mcp.InputResponses, limit int) (json.RawMessage, error) {
	mine := make(map[string]json.RawMessage, len(pending))
	for k := range pending {
		mine[k] = answers[k]
	}
	raw, err := json.Marshal(mine)
	if err != nil {
		return nil, errors.New("the client's answers are not valid JSON; the call was stopped")
	}
	if limit > 0 && len(raw) > limit {
		return nil, fmt.Errorf("the client's answers are %d bytes, over the %d the gateway passes to the backend (max_input_bytes); the call was stopped", len(raw), limit)
	}
	return raw, nil
}

// declined says why a confirmation answer is not a yes ("" when it is).
func declined(answer json.RawMessage) string {
	var a struct {
		Action  string `json:"action"`
		Content struct {
			Confirm *bool `json:"confirm"`
		} `json:"content"`
	}
	if json.Unmarshal(answer, &a) != nil {
		return "The confirmation answer was not understood"
	}
	switch a.Action {
	case "accept":
		if a.Content.Confirm != nil && *a.Content.Confirm {
			return ""
		}
		return "The user did not confirm the call"
	case "decline":
		return "The user declined the call"
	case "cancel":
		return "The user cancelled the call"
	}
	return "The confirmation answer was not understood"
}

// confirmRequest is the form elicitation asking the user to confirm a call.
func confirmRequest(tool *toolgen.Tool, args json.RawMessage) mcp.InputRequest {
	msg := tool.Confirm.Message
	what := describeCall(tool, args)
	if msg == "" {
		msg = "Allow this call? " + what
	} else {
		msg += " (" + what + ")"
	}
	params, _ := json.Marshal(map[string]any{
		"message": msg,
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				confirmKey: map[string]any{"type": "boolean", "title": "Confirm", "description": "Run " + tool.Name + " now", "default": false},
			},
			"required": []string{confirmKey},
		},
	})
	return mcp.InputRequest{Method: mcp.MethodElicit, Params: params}
}

// describeCall names a call for a human: the tool, the method and path,
// and its key arguments (path parameters first), each cut short.
func describeCall(tool *toolgen.Tool, args json.RawMessage) string {
	method, path := tool.Route()
	var in map[string]json.RawMessage
	_ = json.Unmarshal(args, &in)
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		pa, pb := strings.Contains(path, "{"+a+"}"), strings.Contains(path, "{"+b+"}")
		switch {
		case pa && !pb:
			return -1
		case pb && !pa:
			return 1
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s", tool.Name, method, path)
	for i, k := range keys {
		if i == 4 {
			fmt.Fprintf(&b, ", and %d more", len(keys)-i)
			break
		}
		v := strings.TrimSpace(string(in[k]))
		if len(v) > 60 {
			v = v[:57] + "..."
		}
		sep := ", "
		if i == 0 {
			sep = " with "
		}
		b.WriteString(sep + k + "=" + v)
	}
	return b.String()
}

// describeRequests names what a round asks, for messages.
func describeRequests(reqs mcp.InputRequests) string {
	var methods []string
	for _, q := range reqs {
		if !slices.Contains(methods, q.Method) {
			methods = append(methods, q.Method)
		}
	}
	slices.Sort(methods)
	return strings.Join(methods, " and ") + " request"
}

// heartbeat sends a progress notification every ProgressHeartbeat while a
// backend round runs, for a client that asked for progress; stop ends it.
func (f *Feature) heartbeat(r *mcp.Request, observe call.Observer) (stop func()) {
	if f.cfg.ProgressHeartbeat <= 0 || observe == nil || !r.WantsProgress() {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	t := time.NewTicker(f.cfg.ProgressHeartbeat)
	go func() {
		defer close(exited)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				observe(call.Progress{Stage: stageHeartbeat, Message: fmt.Sprintf("waiting for the backend (%s)", time.Since(start).Round(time.Second))})
			}
		}
	}()
	// Stopped means stopped: no heartbeat after the round's last event.
	return func() { close(done); <-exited }
}
