package auth

import (
	"encoding/json"
	"strings"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// Caps on the descriptive claims a principal keeps: they end up in
// session records and audit entries, and a token may be large.
const (
	maxClaimBytes = 256
	maxClaimList  = 64
)

// claims is what the verifier reads from a token. The registered claims
// and the ones that grant access (scope, scp, client_id, azp) must have
// their standard shape or the token is refused; the descriptive ones
// (email, name, groups, roles) are dropped when they have another shape
// or are too large, which can only grant less.
type claims struct {
	jwt.RegisteredClaims
	Scope    scopeClaim `json:"scope"`
	SCP      scopeClaim `json:"scp"`
	ClientID string     `json:"client_id"`
	AZP      string     `json:"azp"`
	Email    textClaim  `json:"email"`
	Name     textClaim  `json:"name"`
	Groups   listClaim  `json:"groups"`
	Roles    listClaim  `json:"roles"`
}

// Validate refuses a token without a subject: a principal must name
// someone. jwt runs it after the signature and the registered claims.
func (c *claims) Validate() error {
	if c.Subject == "" {
		return errNoSubject
	}
	return nil
}

// principal is who the token names.
func (c *claims) principal(raw string) *mcp.Principal {
	p := &mcp.Principal{
		Subject:  c.Subject,
		Scopes:   c.Scope,
		Issuer:   c.Issuer,
		ClientID: c.ClientID,
		Token:    raw,
	}
	if p.Scopes == nil {
		p.Scopes = c.SCP
	}
	if p.ClientID == "" {
		p.ClientID = c.AZP
	}
	m := make(map[string]any, 9)
	m["sub"] = c.Subject
	m["iss"] = c.Issuer
	if len(c.Audience) > 0 {
		m["aud"] = []string(c.Audience)
	}
	put := func(name, v string) {
		if v != "" && len(v) <= maxClaimBytes {
			m[name] = v
		}
	}
	put("client_id", c.ClientID)
	put("azp", c.AZP)
	put("email", string(c.Email))
	put("name", string(c.Name))
	if len(c.Groups) > 0 {
		m["groups"] = []string(c.Groups)
	}
	if len(c.Roles) > 0 {
		m["roles"] = []string(c.Roles)
	}
	p.Claims = m
	return p
}

// scopeClaim is a scope claim: a space-separated string (RFC 9068 §2.2.3,
// RFC 8693 §4.2) or, as some servers send scp, an array of strings.
type scopeClaim []string

func (s *scopeClaim) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = strings.Fields(v)
		return nil
	}
	var v []string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	out := v[:0]
	for _, e := range v {
		if e != "" {
			out = append(out, e)
		}
	}
	*s = out
	return nil
}

// textClaim is a descriptive string claim; another shape leaves it empty.
type textClaim string

func (t *textClaim) UnmarshalJSON(b []byte) error {
	var v string
	if json.Unmarshal(b, &v) == nil {
		*t = textClaim(v)
	}
	return nil
}

// listClaim is a descriptive list claim (groups, roles): an array of
// strings or one string, at most maxClaimList entries of maxClaimBytes
// each; other entries, or another shape, are dropped.
type listClaim []string

func (l *listClaim) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		if one != "" && len(one) <= maxClaimBytes {
			*l = listClaim{one}
		}
		return nil
	}
	var many []any
	if json.Unmarshal(b, &many) != nil {
		return nil
	}
	out := make(listClaim, 0, min(len(many), maxClaimList))
	for _, e := range many {
		if s, ok := e.(string); ok && s != "" && len(s) <= maxClaimBytes && len(out) < maxClaimList {
			out = append(out, s)
		}
	}
	*l = out
	return nil
}
