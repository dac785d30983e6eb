package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// Webhook is the policy hook for what configuration cannot express: before
// each call the rate limits and quotas admitted, the gateway POSTs
// {"identity", "principal", "tool", "session"} to URL and expects
// {"allowed": true} or {"allowed": false, "message": "…",
// "retryAfterSeconds": N}. A timeout, an error status or a malformed
// answer denies the call (fail closed) and is logged.
type Webhook struct {
	URL string
	// Timeout bounds one ask; zero means 2s.
	Timeout time.Duration
	// Client makes the request; nil means a client with no proxy
	// settings of its own (http.DefaultTransport).
	Client *http.Client
	// HashSession turns a session id into what the hook sees (the raw id
	// is a session's only key; the hook gets a stable hash of it).
	HashSession func(string) string
}

type webhookAsk struct {
	Identity  string `json:"identity"`
	Principal string `json:"principal,omitempty"`
	Tool      string `json:"tool"`
	Session   string `json:"session,omitempty"`
}

type webhookAnswer struct {
	Allowed           *bool   `json:"allowed"`
	Message           string  `json:"message"`
	RetryAfterSeconds float64 `json:"retryAfterSeconds"`
}

// maxWebhookAnswer bounds what the gateway reads of the hook's answer.
const maxWebhookAnswer = 64 << 10

// ask asks the hook about one call; a nil denial admits it.
func (f *Feature) ask(r *mcp.Request, h *Webhook, tool string) *denial {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ask := webhookAsk{Identity: r.LimitIdentity(), Tool: tool}
	if r.Principal != nil {
		ask.Principal = r.Principal.Subject
	}
	if r.SessionID != "" && h.HashSession != nil {
		ask.Session = h.HashSession(r.SessionID)
	}
	body, _ := json.Marshal(ask)
	ctx, cancel := context.WithTimeout(r.Ctx, timeout)
	defer cancel()
	ans, err := postAsk(ctx, h, body)
	if err != nil {
		f.warnLimited("quota webhook failed; refusing the call (it fails closed)", err)
		return &denial{kind: "policy_denied", retryAfter: 5 * time.Second,
			message: "the gateway's policy check is unavailable right now, so the call was not made; retry in 5s"}
	}
	if *ans.Allowed {
		return nil
	}
	msg := sanitizeMessage(ans.Message)
	if msg == "" {
		msg = "the gateway's policy does not allow this call now"
	}
	wait := time.Duration(0)
	if ans.RetryAfterSeconds > 0 && ans.RetryAfterSeconds < 86400*366 {
		wait = time.Duration(ans.RetryAfterSeconds * float64(time.Second))
	}
	return &denial{kind: "policy_denied", retryAfter: wait, message: "denied by the gateway's policy: " + msg}
}

func postAsk(ctx context.Context, h *Webhook, body []byte) (*webhookAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxWebhookAnswer+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("webhook answered %d", resp.StatusCode)
	}
	if len(data) > maxWebhookAnswer {
		return nil, fmt.Errorf("webhook answer over %d bytes", maxWebhookAnswer)
	}
	var ans webhookAnswer
	if err := json.Unmarshal(data, &ans); err != nil {
		return nil, fmt.Errorf("webhook answer is not JSON: %w", err)
	}
	if ans.Allowed == nil {
		return nil, fmt.Errorf(`webhook answer has no boolean "allowed"`)
	}
	return &ans, nil
}

// sanitizeMessage is what of the hook's message a client sees: printable
// text, one line, at most 200 bytes.
func sanitizeMessage(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case !unicode.IsPrint(r):
			return -1
		}
		return r
	}, s)
	return mcp.TruncateTo(strings.TrimSpace(s), 200, "…")
}
