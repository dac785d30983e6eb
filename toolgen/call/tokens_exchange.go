package call

// RFC 8693 token exchange: the caller's access token (WithSubjectToken) is
// exchanged for a backend token of the same caller. x/oauth2 has no client
// for it; this is the small one the call path needs.
//
// Exchanged tokens are cached by subject and SHA-256 of the subject token
// (the subject token itself is not kept) until expires_in less the margin;
// without expires_in, for defaultTokenTTL less the margin. The cache
// holds at most maxExchangedTokens: a full cache drops every expired entry
// and then, while less than a sixteenth of it is free, the least recently
// used. A new subject token (the client's was renewed) is a new key; its
// predecessor's entry expires.

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
	maxExchangedTokens = 10000
)

// tokenExchange exchanges subject tokens at one endpoint.
type tokenExchange struct {
	endpoint, clientID, secret, audience string
	scope                                string // space-separated; empty: none sent
	client                               *http.Client
	// margin is how long before expiry an exchanged token is renewed, now
	// the clock; tests set them before the first call.
	margin time.Duration
	now    func() time.Time
	// joining, when set, is called as a call starts or joins an exchange
	// (tests count the waiting calls with it).
	joining func()

	group singleflight.Group
	cache exchangeCache
}

func newTokenExchange(tc tokenConfig, client *http.Client) *tokenExchange {
	return &tokenExchange{
		endpoint: tc.exchangeURL, clientID: tc.clientID, secret: tc.secret,
		audience: tc.audience, scope: strings.Join(tc.scopes, " "),
		client: client, margin: tokenExpiryMargin, now: time.Now,
		cache: exchangeCache{max: maxExchangedTokens},
	}
}

func (x *tokenExchange) token(ctx context.Context) (string, error) {
	sub, ok := subjectFrom(ctx)
	if !ok {
		return "", errAnonymous
	}
	sum := sha256.Sum256([]byte(sub.token))
	// The hash has a fixed length, so the key cannot be read two ways.
	key := string(sum[:]) + sub.subject
	if tok, ok := x.cache.get(key, x.now()); ok {
		return tok, nil
	}
	if x.joining != nil {
		x.joining()
	}
	ch := x.group.DoChan(key, func() (any, error) {
		// A call that missed the cache just before an exchange for its
		// key ended finds that exchange's token here.
		if tok, ok := x.cache.get(key, x.now()); ok {
			return tok, nil
		}
		// The exchange serves every call waiting for this key, so no one
		// call's cancellation ends it; the client's timeout does.
		tok, ttl, err := x.exchange(context.WithoutCancel(ctx), sub.token)
		if err != nil {
			return nil, err
		}
		if ttl > x.margin {
			now := x.now()
			x.cache.put(key, tok, now.Add(ttl-x.margin), now)
		}
		return tok, nil
	})
	return awaitToken(ctx, ch)
}

// exchangeAnswer is the token endpoint's answer (RFC 8693 2.2, RFC 6749
// 5.2 for errors).
type exchangeAnswer struct {
	AccessToken     string          `json:"access_token"`
	IssuedTokenType string          `json:"issued_token_type"`
	TokenType       string          `json:"token_type"`
	ExpiresIn       json.RawMessage `json:"expires_in"`
	Error           string          `json:"error"`
}

// exchange makes one exchange request, returning the issued token and
// how long it lives.
func (x *tokenExchange) exchange(ctx context.Context, subjectToken string) (string, time.Duration, error) {
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subjectToken},
		"subject_token_type":   {tokenTypeAccess},
		"requested_token_type": {tokenTypeAccess},
	}
	if x.audience != "" {
		form.Set("audience", x.audience)
	}
	if x.scope != "" {
		form.Set("scope", x.scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, &tokenFetchError{exchange: true, reason: reasonUnreachable}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 2.3.1: the client id and secret are form-encoded first.
	req.SetBasicAuth(url.QueryEscape(x.clientID), url.QueryEscape(x.secret))
	resp, err := x.client.Do(req)
	if err != nil {
		return "", 0, &tokenFetchError{exchange: true, reason: reasonUnreachable}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponseBytes))
	if err != nil {
		return "", 0, &tokenFetchError{exchange: true, reason: reasonUnreachable}
	}
	var ans exchangeAnswer
	jsonErr := json.Unmarshal(body, &ans)
	if resp.StatusCode < 200 || resp.StatusCode > 299 || ans.Error != "" {
		return "", 0, &tokenFetchError{exchange: true, reason: statusReason(resp.StatusCode, ans.Error)}
	}
	if jsonErr != nil || !usableBearer(ans.AccessToken, ans.TokenType) {
		return "", 0, &tokenFetchError{exchange: true, reason: reasonUnusable}
	}
	return ans.AccessToken, expiresIn(ans.ExpiresIn), nil
}

// expiresIn reads expires_in, a number of seconds (some servers quote
// it); absent or unreadable means defaultTokenTTL, and a value of
// zero or less means the token is not to be kept.
func expiresIn(raw json.RawMessage) time.Duration {
	text := strings.Trim(string(raw), `"`)
	if text == "" || text == "null" {
		return defaultTokenTTL
	}
	secs, err := strconv.ParseFloat(text, 64)
	switch {
	case err != nil:
		return defaultTokenTTL
	case secs <= 0:
		return 0
	case secs > (100 * 365 * 24 * time.Hour).Seconds():
		return 100 * 365 * 24 * time.Hour
	}
	return time.Duration(secs * float64(time.Second))
}

// exchangeCache is a bounded cache of exchanged tokens, least recently
// used first.
type exchangeCache struct {
	max int

	mu      sync.Mutex
	entries map[string]*list.Element // of *exchanged
	order   list.List
}

type exchanged struct {
	key, token string
	expires    time.Time
}

func (c *exchangeCache) get(key string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return "", false
	}
	e := el.Value.(*exchanged)
	if !now.Before(e.expires) {
		c.remove(el)
		return "", false
	}
	c.order.MoveToBack(el)
	return e.token, true
}

func (c *exchangeCache) put(key, token string, expires, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*list.Element{}
	}
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	if len(c.entries) >= c.max {
		for el := c.order.Front(); el != nil; {
			next := el.Next()
			if !now.Before(el.Value.(*exchanged).expires) {
				c.remove(el)
			}
			el = next
		}
		// Make room for a sixteenth of the cache at once, so the sweep
		// above runs once per that many new entries, not on each.
		for low := c.max - max(1, c.max/16); len(c.entries) > low; {
			c.remove(c.order.Front())
		}
	}
	c.entries[key] = c.order.PushBack(&exchanged{key: key, token: token, expires: expires})
}

func (c *exchangeCache) remove(el *list.Element) {
	delete(c.entries, el.Value.(*exchanged).key)
	c.order.Remove(el)
}

func (c *exchangeCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
