package call

import (
	"net/http"
	"time"
)

// Config controls how tools/call reaches the backend.
type Config struct {
	// BaseURL is the backend base URL. Empty means the document's first
	// server URL (with its variables' defaults), resolved against the
	// document's own location when relative.
	BaseURL string
	// Timeout bounds one backend call. Zero means 30s.
	Timeout time.Duration
	// ToolTimeouts overrides Timeout, and the operation's x-mcp-timeout,
	// for the tools it names (by tool name): the operator's word beats the
	// document's. Each must be positive.
	ToolTimeouts map[string]time.Duration
	// MaxResponseBytes caps the backend response body read. Zero means 10 MiB.
	MaxResponseBytes int64
	// Headers are static headers sent on every backend request.
	Headers map[string]string
	// APIKeys maps an OpenAPI security scheme name (type apiKey) to its value;
	// it is placed in the header, query or cookie the scheme names.
	APIKeys map[string]string
	// BearerToken is sent as "Authorization: Bearer ..." for operations whose
	// security uses an http bearer scheme (or oauth2/openIdConnect), and for
	// operations with no declared security when BearerAlways is true.
	BearerToken  string
	BearerAlways bool
	// MaxRequestURLBytes bounds the request URL's path and query; a call
	// whose arguments make it longer is a tool error naming the biggest
	// argument, and is not sent. Zero means 8 KiB.
	MaxRequestURLBytes int
	// ErrorBody is what a non-2xx answer's body contributes to the tool
	// error: ErrorBodyExcerpt (the default, also for ""), ErrorBodyAll or
	// ErrorBodyNone (see redact.go).
	ErrorBody string
	// Transport is the backend round tripper. Nil means a tuned
	// *http.Transport with connection reuse.
	Transport http.RoundTripper
}
