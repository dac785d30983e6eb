package auth

import (
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// A client sends the same token with every request until it expires, and
// checking a signature is the dearest part of a request (RS256 about
// 50 µs, ES256 about 130 µs of CPU). The verifier remembers tokens it has
// verified: a repeat costs one map lookup. An entry lives until the
// token expires (with the clock skew), at most cacheFor, so a token
// signed by a key the issuer has since withdrawn stops working within
// cacheFor. Only accepted tokens are kept; a refusal is checked afresh
// each time.
const (
	cacheFor     = 5 * time.Minute
	cacheEntries = 10000
)

type verified struct {
	p     *mcp.Principal
	kid   string // the signing key's id; empty for HMAC or a kid-less token
	until time.Time
}

// tokenCache maps a raw token to the principal it was verified as.
type tokenCache struct {
	mu sync.RWMutex
	m  map[string]verified
}

func (c *tokenCache) get(raw string, now time.Time) (*mcp.Principal, string) {
	c.mu.RLock()
	e, ok := c.m[raw]
	c.mu.RUnlock()
	if !ok || now.After(e.until) {
		return nil, ""
	}
	return e.p, e.kid
}

// put remembers a verified token; expires is its exp (zero: none).
func (c *tokenCache) put(raw, kid string, p *mcp.Principal, expires, now time.Time) {
	until := now.Add(cacheFor)
	if !expires.IsZero() && expires.Before(until) {
		until = expires
	}
	if !until.After(now) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]verified)
	}
	if len(c.m) >= cacheEntries {
		// Expired entries go first; if that frees too little, any half
		// (map order), so the cache stays bounded under a token flood.
		for k, e := range c.m {
			if now.After(e.until) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < cacheEntries/2 {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[raw] = verified{p: p, kid: kid, until: until}
}
