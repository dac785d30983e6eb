package mcp

import "strings"

// Identity names the caller for limits that must survive session cycling
// (per-client rate limits, session caps, quotas): the principal's subject
// when authenticated, else the client address (or the identity header a
// trusted proxy sets, as the transport filled Client).
func (r *Request) Identity() string { return IdentityOf(r.Principal, r.Client) }

// IdentityOf is Identity for a caller known before its request is
// (a stream that opens a session, a refusal the transport answers).
func IdentityOf(p *Principal, client string) string {
	if p != nil {
		return "sub:" + p.Subject
	}
	return "addr:" + client
}

// LimitIdentity is the identity a request's limits count against: the
// opener of its session when it has one (the session cannot change
// hands: authenticated sessions are bound to their subject), else
// Identity.
func (r *Request) LimitIdentity() string {
	if r.SessionID != "" && r.SessionClient != "" {
		return r.SessionClient
	}
	return r.Identity()
}

// ScopeKey names what p may see: principals with the same key see the
// same lists (tools, resources, prompts). Anonymous callers see less than
// a token without scopes does; NUL separates scopes (an scp array may hold
// one with a space).
func ScopeKey(p *Principal) string {
	if p == nil {
		return "\x01anonymous"
	}
	return strings.Join(p.Scopes, "\x00")
}
