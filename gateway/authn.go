package gateway

// Authentication at the transport: every request to an MCP endpoint
// (both eras, the event streams, DELETE, the 2024-11-05 transport) is
// authenticated before anything else reads it; the principal travels with
// the request's context into the mcp.Request the handlers see.

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// Authenticator verifies the credentials of a request to an MCP endpoint.
type Authenticator interface {
	// Authenticate returns the caller's principal, or nil for an
	// anonymous caller when anonymous access is allowed. An error that
	// implements Challenge is answered with its status and
	// WWW-Authenticate header; any other error is a 401 without details.
	Authenticate(r *http.Request) (*mcp.Principal, error)
}

// Challenge is an authentication failure that says how to answer it.
type Challenge interface {
	error
	// HTTPStatus is the status to answer with (401, or 400 for a
	// malformed request).
	HTTPStatus() int
	// WWWAuthenticate is the WWW-Authenticate header value.
	WWWAuthenticate() string
}

// reasoned is a failure that names why in a closed set (auth.Failure's
// Reason), the label of mcpgw_auth_failures_total.
type reasoned interface{ FailureReason() string }

// failureReason is why authentication refused: "other" when the
// Authenticator does not say.
func failureReason(err error) string {
	var r reasoned
	if errors.As(err, &r) {
		return r.FailureReason()
	}
	return "other"
}

type principalKey struct{}

// principalOf is the principal the transport authenticated for the
// request, nil when anonymous.
func principalOf(ctx context.Context) *mcp.Principal {
	p, _ := ctx.Value(principalKey{}).(*mcp.Principal)
	return p
}

// authenticate runs the Authenticator, if any: it returns the request
// carrying the principal, or false when it has answered (401/400).
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if s.auth == nil {
		return r, true
	}
	p, err := s.auth.Authenticate(r)
	if err != nil {
		status, challenge, msg := http.StatusUnauthorized, `Bearer`, "Unauthorized"
		var c Challenge
		if errors.As(err, &c) {
			status, challenge = c.HTTPStatus(), c.WWWAuthenticate()
			msg = err.Error()
		}
		s.metrics.authFailed(failureReason(err))
		s.auditAuthFailure(w, r)
		s.fail(w, r, nil, reject(status, mcp.CodeInvalidRequest, "%s", mcp.Verbatim(msg)).WithHeader("WWW-Authenticate", challenge))
		return r, false
	}
	if p == nil {
		return r, true
	}
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p)), true
}

// subjectOf is the session-binding identity of a principal: empty for
// anonymous callers.
func subjectOf(p *mcp.Principal) string {
	if p == nil {
		return ""
	}
	return p.Subject
}

// boundSubject is the subject a new session is bound to: the
// authenticated principal's, or none without authentication.
func (s *Server) boundSubject(p *mcp.Principal) string {
	if s.auth == nil {
		return ""
	}
	return subjectOf(p)
}

// checkSessionPrincipal refuses a request on a session that another
// principal opened: a session id is not a credential.
func (s *Server) checkSessionPrincipal(r *http.Request, sess *sessions.Session) error {
	if s.auth == nil || sess.Principal == subjectOf(principalOf(r.Context())) {
		return nil
	}
	s.metrics.authFailed(reasonForbiddenSession)
	return reject(http.StatusForbidden, mcp.CodeInvalidRequest, "Forbidden: this session was opened by another principal; send initialize with your own token").
		WithData(map[string]any{"kind": kindForbiddenSession})
}

// kindForbiddenSession marks the refusal of another principal's session.
const kindForbiddenSession = "forbidden_session"

// clientOf is the client identity of an unauthenticated caller: the
// remote address, or the first value of the configured identity header
// (set by a trusted proxy).
func (s *Server) clientOf(r *http.Request) string {
	if s.cfg.IdentityHeader != "" {
		if v := r.Header.Get(s.cfg.IdentityHeader); v != "" {
			if i := strings.IndexByte(v, ','); i >= 0 {
				v = v[:i]
			}
			if v = strings.TrimSpace(v); v != "" {
				return mcp.TruncateTo(v, 256, "")
			}
		}
	}
	return clientAddress(remoteHost(r))
}

// clientAddress is an address as a client identity: an IPv6 address
// counts as its /64 (one subscriber's network: a client holding a /64
// must not get 2^64 identities); IPv4 addresses are themselves.
func clientAddress(host string) string {
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Is6() || ip.Is4In6() {
		return host
	}
	p, err := ip.Prefix(64)
	if err != nil {
		return host
	}
	return p.String()
}
