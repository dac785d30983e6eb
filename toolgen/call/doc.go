// Package call is the REST call path behind tools/call: it turns a
// generated tool's arguments (toolgen.Tool, through its Binding) into one
// validated HTTP request to the backend, adds the configured backend
// credentials, sends it, and maps the response to an MCP tool result
// (gateway/mcp content types). Caller is the entry point; CallPooled is the
// hot path, whose result may view a pooled buffer (see mcp.PooledResult);
// CallWith also returns a backend's request for input (InputRequired) and
// takes the answers on the next round (InputAnswer).
// Fetch is the same request path for a REST-backed resource: a GET whose
// raw body (credentials redacted) and media type are returned, optionally
// conditional (If-None-Match / If-Modified-Since) for change polling.
//
// The Caller sees only tool arguments, never the incoming MCP request, so
// the client's own credentials cannot reach the backend. Backend tokens can
// also come from a token endpoint per call (tokens.go): the client
// credentials grant, or RFC 8693 token exchange of the client's verified
// token (WithSubjectToken), which goes to that endpoint alone.
//
// It imports toolgen, openapi, gateway/mcp and internal/jsonlex of the
// gateway, never package gateway or a feature package; x/oauth2 only in
// tokens_client.go.
package call
