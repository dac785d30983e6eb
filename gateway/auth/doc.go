// Package auth is the gateway's OAuth 2.1 resource server: it verifies the
// bearer access tokens MCP clients send (RFC 6750, RFC 9068 JWTs) against
// the keys of one authorization server, found by RFC 8414 / OpenID
// discovery, and turns a valid token into an mcp.Principal.
//
// A Verifier reads only the Authorization header of an *http.Request and
// never a body; keys are cached (scheduled refresh, and a rate-limited
// refresh when a token names an unknown key), so in steady state
// Authenticate makes no network round trip. Every refusal is a *Failure,
// whose Error text and WWW-Authenticate challenge are safe to send to the
// client. Beside it are the RFC 9728 protected resource metadata document
// and the scope checks the gateway's 403 step-up uses.
//
// golang-jwt and keyfunc are used only here. The package imports no
// project package except gateway/mcp, and never package gateway.
package auth
