package call

// The client credentials grant (RFC 6749 4.4), with x/oauth2: its token
// source caches the token and renews it tokenExpiryMargin before expiry
// (a token issued without expires_in is taken to live defaultTokenTTL).
//
// Scopes: the configured OAuthScopes when there are any, for every
// operation. Otherwise each operation asks for the scopes its security
// requirement lists for the scheme, and each distinct scope set has its own
// cached token. The sets come from the document, so their number is bounded
// by it.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
	"golang.org/x/sync/singleflight"
)

// clientCredentialsPool holds one token source per scope set.
type clientCredentialsPool struct {
	tokenURL, clientID, secret string
	scopes                     []string // configured; nil: the operation's
	client                     *http.Client
	// margin is how long before expiry a token is renewed; tests shorten it
	// before the first call.
	margin time.Duration

	mu      sync.Mutex
	sources map[string]*clientCredentials // by space-joined scope set
}

func newClientCredentialsPool(tc tokenConfig, client *http.Client) *clientCredentialsPool {
	return &clientCredentialsPool{
		tokenURL: tc.tokenURL, clientID: tc.clientID, secret: tc.secret, scopes: tc.scopes,
		client: client, margin: tokenExpiryMargin,
		sources: map[string]*clientCredentials{},
	}
}

// source is the token source for an operation whose requirement lists
// these scopes for the scheme. It makes no request.
func (p *clientCredentialsPool) source(required []string) *clientCredentials {
	scopes := p.scopes
	if len(scopes) == 0 {
		scopes = scopeSet(required)
	}
	key := strings.Join(scopes, " ")
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.sources[key]; s != nil {
		return s
	}
	cfg := &clientcredentials.Config{
		ClientID:     p.clientID,
		ClientSecret: p.secret,
		TokenURL:     p.tokenURL,
		Scopes:       scopes,
		// RFC 6749 2.3.1: servers must support Basic. Guessing would send
		// the secret a second time, in the body, after every failure.
		AuthStyle: oauth2.AuthStyleInHeader,
	}
	// The source keeps this context for every renewal, which serves many
	// calls: it only names the HTTP client, and cancels nothing.
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, p.client)
	s := &clientCredentials{src: oauth2.ReuseTokenSourceWithExpiry(nil, usableTokens{cfg, ctx}, p.margin)}
	p.sources[key] = s
	return s
}

// usableTokens fetches a token on every call (the reuse source around it
// caches), refusing one that cannot be sent as a bearer token: the reuse
// source would keep it until it expires.
type usableTokens struct {
	cfg *clientcredentials.Config
	ctx context.Context
}

var errUnusableToken = errors.New("the token endpoint issued no usable bearer token")

func (u usableTokens) Token() (*oauth2.Token, error) {
	t, err := u.cfg.Token(u.ctx)
	if err != nil {
		return nil, err
	}
	if !usableBearer(t.AccessToken, t.TokenType) {
		return nil, errUnusableToken
	}
	if t.Expiry.IsZero() {
		// x/oauth2 would keep a token without expires_in for ever.
		t.Expiry = time.Now().Add(defaultTokenTTL)
	}
	return t, nil
}

// clientCredentials is the gateway's own token for one scope set.
type clientCredentials struct {
	src oauth2.TokenSource
	// last is the token src returned last: while it is valid (its expiry
	// less the margin, which src set on it) calls take it without locking.
	last  atomic.Pointer[oauth2.Token]
	group singleflight.Group
}

func (s *clientCredentials) token(ctx context.Context) (string, error) {
	if t := s.last.Load(); t.Valid() {
		return t.AccessToken, nil
	}
	ch := s.group.DoChan("", func() (any, error) {
		t, err := s.src.Token()
		if err != nil {
			return nil, &tokenFetchError{reason: clientCredentialsReason(err)}
		}
		s.last.Store(t)
		return t.AccessToken, nil
	})
	return awaitToken(ctx, ch)
}

// clientCredentialsReason says why x/oauth2 got no token, without its
// error text: that quotes the token endpoint's body.
func clientCredentialsReason(err error) string {
	var re *oauth2.RetrieveError
	var ue *url.Error
	switch {
	case errors.As(err, &re) && re.Response != nil:
		return statusReason(re.Response.StatusCode, re.ErrorCode)
	case errors.As(err, &ue):
		return reasonUnreachable
	}
	return reasonUnusable
}
