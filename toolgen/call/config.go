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
	// security uses an http bearer scheme (or oauth2/openIdConnect, when
	// neither TokenExchangeURL nor OAuthTokenURL is set), and for operations
	// with no declared security when BearerAlways is true.
	BearerToken  string
	BearerAlways bool

	// OAuthTokenURL is the authorization server's token endpoint for the
	// client credentials grant (RFC 6749 4.4): the gateway obtains its own
	// backend token there for operations whose security uses an oauth2 or
	// openIdConnect scheme, or an http bearer scheme when BearerToken is
	// empty. The token is cached and refreshed 30s before it expires. The
	// document's own tokenUrl is never used: the document comes from the
	// backend, the client secret does not go where it says. Empty means no
	// client credentials grant.
	OAuthTokenURL string
	// OAuthClientID and OAuthClientSecret are the gateway's client at the
	// authorization server, sent with HTTP Basic (RFC 6749 2.3.1) to
	// OAuthTokenURL and TokenExchangeURL. Both are required when either
	// URL is set, and must be empty otherwise.
	OAuthClientID     string
	OAuthClientSecret string
	// OAuthScopes are the scopes requested at the token endpoints. Empty
	// means: for the client credentials grant, the scopes the operation's
	// security requirement lists for the scheme (one token per distinct
	// scope set, none sent when the list is empty); for token exchange, no
	// scope parameter.
	OAuthScopes []string
	// TokenExchangeURL is the token endpoint for RFC 8693 token exchange:
	// the MCP client's verified access token (see WithSubjectToken) is
	// exchanged for a backend token of the same caller, cached per caller
	// until shortly before it expires. It serves the same schemes as
	// OAuthTokenURL and wins over it when both are set: it carries the
	// caller's identity. A call without a subject token (an anonymous
	// caller) is then a tool error. Empty means no token exchange.
	TokenExchangeURL string
	// TokenExchangeAudience is the exchange's audience parameter, the
	// backend's name at the authorization server. Empty means none is sent.
	TokenExchangeAudience string

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
	// PathTemplates puts each operation request's OpenAPI path template
	// in its context (see PathTemplate), for a Transport that records the
	// request without the argument values its path carries (tracing).
	// False, the default, adds nothing to a request.
	PathTemplates bool
}
