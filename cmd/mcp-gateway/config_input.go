package main

// The settings of the server→client half: confirmation of destructive
// operations, input the backend asks for, the requests the gateway sends
// to clients, progress and cancellation.

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"time"
)

// inputConfig holds the confirmation, input and progress settings.
type inputConfig struct {
	Confirm                   []string
	ConfirmWithoutElicitation string
	ServerRequestTimeout      time.Duration
	MaxPendingPerSession      int
	MaxInputRounds            int
	MaxInputBytes             int64
	StateKeyFile              string
	ProgressHeartbeat         time.Duration
	CancelOnDisconnect        bool
}

var inputOptions = []option{
	{key: "confirm", tools: true, repeat: true, usage: "operations that ask the user to confirm (a form elicitation) before the backend is called, besides those with x-mcp-confirm: globs over tool name or operationId (comma-separated)",
		set: list(func(c *config) *[]string { return &c.Confirm })},
	{key: "confirm_without_elicitation", def: "deny", usage: "what a call that needs confirmation does for a client that cannot elicit: deny (an isError result; the backend sees nothing) or allow",
		set: oneOf([]string{"deny", "allow"}, func(c *config) *string { return &c.ConfirmWithoutElicitation })},
	{key: "server_request_timeout", def: "60s", usage: "how long a call waits for the client's answer to a server→client request (elicitation, sampling, roots), and how long a 2026-07-28 requestState stays valid",
		set: positiveDuration(func(c *config) *time.Duration { return &c.ServerRequestTimeout })},
	{key: "max_pending_per_session", def: "100", usage: "server→client requests of one session waiting for answers, across replicas; one more ends its call with an isError result",
		set: positiveInt(func(c *config) *int { return &c.MaxPendingPerSession })},
	{key: "max_input_rounds", def: "5", usage: "how often a backend may ask for input (application/vnd.mcp.input-required+json) in one call",
		set: positiveInt(func(c *config) *int { return &c.MaxInputRounds })},
	{key: "max_input_bytes", def: "64KiB", usage: "largest set of client answers passed to the backend in one round (Mcp-Input-Responses); more ends the call with an isError result",
		set: size(func(c *config) *int64 { return &c.MaxInputBytes })},
	{key: "state_key_file", usage: "file holding the key that seals 2026-07-28 requestState (32 bytes as 64 hex digits, or base64); unset: one generated once per deployment and kept in Redis (in memory without Redis)",
		set: str(func(c *config) *string { return &c.StateKeyFile })},
	{key: "progress_heartbeat", def: "10s", usage: "interval of the progress notifications a slow call sends while waiting for its backend (to clients that asked for progress); 0 turns them off",
		set: duration(func(c *config) *time.Duration { return &c.ProgressHeartbeat })},
	{key: "cancel_on_disconnect", def: "true", isBool: true, usage: "cancel a session-era call when the client closes its POST before the answer (as notifications/cancelled would), unless it resumes the stream within a few seconds",
		set: boolean(func(c *config) *bool { return &c.CancelOnDisconnect })},
}

func init() { options = append(options, inputOptions...) }

// readStateKey reads state_key_file: 32 bytes written as 64 hex digits or
// as base64 (standard or URL-safe, padded or not). No file: nil.
func readStateKey(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	text, err := readSecretFile(path)
	if err != nil {
		return nil, err
	}
	text = strings.TrimSpace(text)
	if b, err := hex.DecodeString(text); err == nil && len(b) == 32 {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(text); err == nil && len(b) == 32 {
			return b, nil
		}
	}
	return nil, errors.New("must hold a 32-byte key as 64 hex digits or base64 (make one with: openssl rand -hex 32)")
}
