package auth

import (
	"net/http"
	"slices"
	"strings"
)

// OAuth error codes of RFC 6750 §3.1.
const (
	// CodeInvalidRequest: the request is malformed (a token in the URL,
	// two Authorization headers, an empty token). Status 400.
	CodeInvalidRequest = "invalid_request"
	// CodeInvalidToken: the token is expired, revoked, malformed or not
	// for this resource. Status 401.
	CodeInvalidToken = "invalid_token"
	// CodeInsufficientScope: the token lacks a scope the call needs.
	// Status 403; see InsufficientScope.
	CodeInsufficientScope = "insufficient_scope"
)

// Failure is why Authenticate refused a request. Its Error text is the
// Description: written for the client, it never holds the token, key
// material or anything the client did not send. What went wrong inside
// (a key lookup, a refresh) is the cause Unwrap returns, for logs only.
type Failure struct {
	// Status is the HTTP status to answer with: 401, or 400 for a
	// malformed request.
	Status int
	// Code is the OAuth error code (CodeInvalidToken, CodeInvalidRequest),
	// or empty when the request carried no credentials: RFC 6750 §3.1
	// says a challenge to such a request has no error code.
	Code string
	// Description is a short sentence for the client.
	Description string
	// ResourceMetadata is the absolute URL of the protected resource
	// metadata (RFC 9728 §5.1); empty leaves it out of the challenge.
	ResourceMetadata string
	// Reason is why, in a closed set (the Reason* constants) that
	// metrics may use as a label; empty means ReasonInvalidToken.
	Reason string

	cause error
}

// Reasons of a Failure, finer than its Code and never more than these.
const (
	ReasonMissingToken     = "missing_token"     // no credentials, or not a Bearer token
	ReasonMalformedRequest = "malformed_request" // a token in the URL or a form, two headers, an empty token
	ReasonMalformedToken   = "malformed_token"   // not a JWT, too large, a bad key id
	ReasonInvalidSignature = "invalid_signature" // the signature, its algorithm or key does not verify
	ReasonWrongIssuer      = "wrong_issuer"
	ReasonWrongAudience    = "wrong_audience"
	ReasonExpired          = "expired"
	ReasonNotYetValid      = "not_yet_valid" // nbf in the future, or issued in the future
	ReasonMissingClaim     = "missing_claim" // no iss, aud, exp or sub
	ReasonUnverifiable     = "unverifiable"  // the keys could not be had
	ReasonInvalidToken     = "invalid_token" // anything else
)

// FailureReason is Reason, ReasonInvalidToken when unset.
func (f *Failure) FailureReason() string {
	if f.Reason == "" {
		return ReasonInvalidToken
	}
	return f.Reason
}

// Error is the Description, safe to send to the client.
func (f *Failure) Error() string { return f.Description }

// Unwrap is the internal cause, if any. Its text may name key ids, URLs
// or library detail: log it, never send it.
func (f *Failure) Unwrap() error { return f.cause }

// HTTPStatus is Status, the status to answer the request with.
func (f *Failure) HTTPStatus() int { return f.Status }

// WWWAuthenticate is the WWW-Authenticate header value for the answer:
//
//	Bearer resource_metadata="https://gw.example/.well-known/oauth-protected-resource/mcp"
//	Bearer error="invalid_token", error_description="the token has expired", resource_metadata="..."
func (f *Failure) WWWAuthenticate() string {
	var b strings.Builder
	b.WriteString("Bearer")
	sep := " "
	param := func(name, value string) {
		if value == "" {
			return
		}
		b.WriteString(sep)
		b.WriteString(name)
		b.WriteString("=")
		writeQuoted(&b, value)
		sep = ", "
	}
	param("error", f.Code)
	if f.Code != "" {
		param("error_description", f.Description)
	}
	param("resource_metadata", f.ResourceMetadata)
	return b.String()
}

// Challenge is the WWW-Authenticate header value that asks a caller
// without a token for one: Bearer resource_metadata="...".
func Challenge(resourceMetadataURL string) string {
	return (&Failure{ResourceMetadata: resourceMetadataURL}).WWWAuthenticate()
}

// InsufficientScope is the WWW-Authenticate header value of a 403 that
// asks the client to step up (RFC 6750 §3.1, MCP's scope challenge):
// scopes are what the call needs (the tools feature picks them; empty ones are skipped),
// resourceMetadataURL the protected resource metadata; either may be
// empty.
//
//	Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="..."
func InsufficientScope(scopes []string, resourceMetadataURL string) string {
	var b strings.Builder
	b.WriteString(`Bearer error="insufficient_scope"`)
	if slices.ContainsFunc(scopes, func(s string) bool { return s != "" }) {
		b.WriteString(", scope=")
		writeQuoted(&b, strings.Join(slices.DeleteFunc(slices.Clone(scopes), func(s string) bool { return s == "" }), " "))
	}
	if resourceMetadataURL != "" {
		b.WriteString(", resource_metadata=")
		writeQuoted(&b, resourceMetadataURL)
	}
	return b.String()
}

// writeQuoted writes s as an RFC 9110 quoted-string. A quote or backslash
// is escaped; any other byte RFC 6750 forbids in its parameters (a
// control character, tab, DEL or non-ASCII) becomes '?', so no value can
// end the header or smuggle another.
func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			b.WriteByte('?')
		}
	}
	b.WriteByte('"')
}

// failure builds a refusal carrying the verifier's metadata URL.
func (v *Verifier) failure(status int, code, reason, description string, cause error) *Failure {
	return &Failure{Status: status, Code: code, Reason: reason, Description: description, ResourceMetadata: v.cfg.ResourceMetadataURL, cause: cause}
}

// missingToken is the 401 of a request without a bearer token.
func (v *Verifier) missingToken(description string) *Failure {
	return v.failure(http.StatusUnauthorized, "", ReasonMissingToken, description, nil)
}

// invalidToken is a 401 invalid_token refusal.
func (v *Verifier) invalidToken(reason, description string, cause error) *Failure {
	return v.failure(http.StatusUnauthorized, CodeInvalidToken, reason, description, cause)
}

// invalidRequest is a 400 invalid_request refusal.
func (v *Verifier) invalidRequest(description string) *Failure {
	return v.failure(http.StatusBadRequest, CodeInvalidRequest, ReasonMalformedRequest, description, nil)
}
