package call

// Backend tokens obtained per call: the gateway's own, by the client
// credentials grant (tokens_client.go), or the caller's, by RFC 8693 token
// exchange (tokens_exchange.go). They satisfy oauth2 and openIdConnect
// schemes, and http bearer schemes when no static BearerToken is
// configured; token exchange wins when both are configured.
//
// The MCP client's own access token reaches this package only through
// WithSubjectToken, and only token exchange reads it: it goes to the
// exchange endpoint as subject_token and nowhere else. Backend requests are
// still built from the arguments alone.
//
// A fetch is shared: concurrent calls that need the same token wait for one
// request to the token endpoint (singleflight), each for as long as its own
// context allows. The shared fetch is bounded by tokenFetchTimeout rather
// than by any one call's context, so that one caller giving up does not
// fail the others; its token is cached for the next call.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"golang.org/x/sync/singleflight"

	"github.com/mcp-gateway/mcp-gateway/internal/redact"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

const (
	// tokenFetchTimeout bounds one request to a token endpoint.
	tokenFetchTimeout = 10 * time.Second
	// tokenExpiryMargin: a token is renewed this long before it expires,
	// so that none expires on its way to the backend.
	tokenExpiryMargin = 30 * time.Second
	// maxTokenResponseBytes caps what is read of a token endpoint's answer.
	maxTokenResponseBytes = 64 << 10
	// defaultTokenTTL is how long a token issued without expires_in is
	// taken to live (less the margin, it is kept for 30s): long enough to
	// spare the token endpoint, short enough that a revoked token is not
	// used for long.
	defaultTokenTTL = time.Minute
)

// tokenSource obtains a backend access token for one call. ctx carries the
// caller's subject token (WithSubjectToken) and bounds the wait.
type tokenSource interface {
	token(ctx context.Context) (string, error)
}

var (
	_ tokenSource = (*clientCredentials)(nil)
	_ tokenSource = (*tokenExchange)(nil)
)

type subjectKey struct{}

// callerToken is the MCP client's identity as WithSubjectToken gives it.
type callerToken struct{ subject, token string }

// WithSubjectToken returns a context carrying the MCP client's verified
// identity: its subject and the access token it presented. The gateway sets
// it from the verified principal before calling the tool. Only token
// exchange (Config.TokenExchangeURL) reads it, and sends the token to the
// exchange endpoint alone: no credential mode sends it to the backend. An
// empty token means an anonymous caller.
func WithSubjectToken(ctx context.Context, subject, token string) context.Context {
	return context.WithValue(ctx, subjectKey{}, callerToken{subject: subject, token: token})
}

// subjectFrom returns the caller's subject and token, if ctx has a token.
func subjectFrom(ctx context.Context) (callerToken, bool) {
	s, ok := ctx.Value(subjectKey{}).(callerToken)
	return s, ok && s.token != ""
}

// errAnonymous: token exchange needs the caller's token, and there is none.
var errAnonymous = errors.New("no subject token")

// tokenFetchError is a failed request to a token endpoint. reason is fit
// for a tool result: a status and a short OAuth error code, "unreachable",
// or that the answer was unusable; never a secret or the answer's body.
type tokenFetchError struct {
	exchange bool // token exchange, else client credentials
	reason   string
}

func (e *tokenFetchError) Error() string {
	if e.exchange {
		return "the gateway could not exchange the caller's token for a backend token at its authorization server: " + e.reason
	}
	return "the gateway could not obtain a backend token from its authorization server: " + e.reason
}

// Reasons for a tokenFetchError besides a status.
const (
	reasonUnreachable = "unreachable"
	reasonUnusable    = "its answer held no usable bearer token"
)

// statusReason is a token endpoint's error status with its OAuth error
// code (RFC 6749 5.2) when that is a short plain word.
func statusReason(status int, code string) string {
	reason := "HTTP " + statusText(status)
	if isPlainErrorCode(code) {
		reason += " (" + code + ")"
	}
	return reason
}

// isPlainErrorCode accepts the shape of registered OAuth error codes
// (invalid_client, invalid_grant, ...): anything else could be text the
// authorization server meant for its own operator.
func isPlainErrorCode(code string) bool {
	if code == "" || len(code) > 40 {
		return false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// usableBearer reports whether an issued token can go in an Authorization
// header as a bearer token: a bearer token type (or none said) and only
// visible ASCII.
func usableBearer(token, tokenType string) bool {
	if token == "" || tokenType != "" && !strings.EqualFold(tokenType, "bearer") {
		return false
	}
	for i := 0; i < len(token); i++ {
		if token[i] <= ' ' || token[i] >= 0x7f {
			return false
		}
	}
	return true
}

// tokenCredential is the per-call token credential for an oauth2,
// openIdConnect or (without a static token) http bearer scheme, whose
// requirement lists scopes; false when no token endpoint is configured.
func (c *Caller) tokenCredential(scopes []string) (credential, bool) {
	var src tokenSource
	switch {
	case c.exchange != nil:
		src = c.exchange
	case c.clientCreds != nil:
		src = c.clientCreds.source(scopes)
	default:
		return credential{}, false
	}
	return credential{in: openapi3.ParameterInHeader, name: "Authorization", token: src}, true
}

// addTokens sets the per-call tokens of the plan's credentials. A failure
// is the call's result; nothing has been sent.
//
// It returns the redaction set for the call's response: the configured
// credentials, and the fetched tokens when there are any.
func (c *Caller) addTokens(parent, callCtx context.Context, timeout time.Duration, p *callPlan, req *http.Request) (*redact.Set, *mcp.CallToolResult) {
	var tokens []string
	for _, cred := range p.creds {
		if cred.token == nil {
			continue
		}
		tok, err := cred.token.token(callCtx)
		if err != nil {
			return nil, tokenFailure(parent, callCtx, timeout, err)
		}
		req.Header.Set(cred.name, "Bearer "+tok)
		tokens = append(tokens, tok)
	}
	if tokens == nil {
		return c.redact, nil
	}
	return c.tokenSecrets.with(tokens), nil
}

// tokenFailure explains why a call has no backend token.
func tokenFailure(parent, callCtx context.Context, timeout time.Duration, err error) *mcp.CallToolResult {
	var fe *tokenFetchError
	switch {
	case errors.Is(err, errAnonymous):
		return mcp.ErrorResult("this tool needs an authenticated caller: the gateway calls the backend with the caller's own identity, and this call has none")
	case errors.As(err, &fe):
		return mcp.ErrorResult(fe.Error())
	case errors.Is(context.Cause(callCtx), ErrTimeout):
		return mcp.ErrorResult(fmt.Sprintf("the operation's timeout (%s) passed while the gateway waited for a backend token", timeout))
	case parent.Err() != nil:
		return mcp.ErrorResult(cancelledMessage(parent))
	}
	return mcp.ErrorResult("the call ran out of time while the gateway waited for a backend token")
}

// tokenConfig is the validated token endpoint configuration.
type tokenConfig struct {
	tokenURL, exchangeURL, clientID, secret, audience string
	scopes                                            []string
}

// checkTokenConfig validates the token endpoint settings of cfg.
func checkTokenConfig(cfg Config) (tokenConfig, error) {
	tc := tokenConfig{
		tokenURL: cfg.OAuthTokenURL, exchangeURL: cfg.TokenExchangeURL,
		clientID: cfg.OAuthClientID, secret: cfg.OAuthClientSecret,
		audience: cfg.TokenExchangeAudience, scopes: cfg.OAuthScopes,
	}
	if tc.tokenURL == "" && tc.exchangeURL == "" {
		if tc.clientID != "" || tc.secret != "" || len(tc.scopes) > 0 || tc.audience != "" {
			return tc, errors.New("OAuthClientID, OAuthClientSecret, OAuthScopes and TokenExchangeAudience need OAuthTokenURL or TokenExchangeURL")
		}
		return tc, nil
	}
	for _, u := range []struct{ setting, raw string }{{"OAuthTokenURL", tc.tokenURL}, {"TokenExchangeURL", tc.exchangeURL}} {
		if u.raw == "" {
			continue
		}
		parsed, err := url.Parse(u.raw)
		switch {
		case err != nil || parsed.Scheme != "http" && parsed.Scheme != "https":
			return tc, fmt.Errorf("%s must be an absolute http or https URL", u.setting)
		case parsed.Host == "":
			return tc, fmt.Errorf("%s has no host", u.setting)
		case parsed.User != nil:
			return tc, fmt.Errorf("%s must not contain credentials; use OAuthClientID and OAuthClientSecret", u.setting)
		case parsed.Fragment != "":
			return tc, fmt.Errorf("%s must not have a fragment", u.setting)
		}
	}
	switch {
	case tc.clientID == "":
		return tc, errors.New("OAuthClientID is required with OAuthTokenURL or TokenExchangeURL")
	case tc.secret == "":
		return tc, errors.New("OAuthClientSecret is required with OAuthTokenURL or TokenExchangeURL")
	case strings.ContainsFunc(tc.clientID, isHeaderControl):
		return tc, errors.New("OAuthClientID contains control characters")
	case strings.ContainsFunc(tc.secret, isHeaderControl):
		return tc, errors.New("OAuthClientSecret contains control characters")
	case strings.ContainsFunc(tc.audience, isHeaderControl):
		return tc, errors.New("TokenExchangeAudience contains control characters")
	}
	for i, s := range tc.scopes {
		if !isScopeToken(s) {
			return tc, fmt.Errorf("OAuthScopes[%d] %q is not a scope (RFC 6749 3.3: printable ASCII, no space, quote or backslash)", i, s)
		}
	}
	tc.scopes = scopeSet(tc.scopes)
	return tc, nil
}

// isScopeToken: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
func isScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// scopeSet is scopes sorted, without duplicates or empty entries; nil
// when none is left.
func scopeSet(scopes []string) []string {
	out := slices.DeleteFunc(slices.Clone(scopes), func(s string) bool { return s == "" })
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// newTokenClient is the HTTP client for token endpoints: the backend
// transport, bounded, following no redirect (a redirect would carry the
// client secret or the subject token somewhere the operator did not name).
func newTokenClient(transport http.RoundTripper) *http.Client {
	return &http.Client{
		Transport: transport,
		Timeout:   tokenFetchTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// awaitToken waits for a shared fetch of a token (singleflight) or for
// the call's own end, whichever comes first; the fetch goes on for the
// others.
func awaitToken(ctx context.Context, ch <-chan singleflight.Result) (string, error) {
	select {
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
