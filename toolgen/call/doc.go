// Package call is the REST call path behind tools/call: it turns a
// generated tool's arguments (toolgen.Tool, through its Binding) into one
// validated HTTP request to the backend, adds the configured backend
// credentials, sends it, and maps the response to an MCP tool result
// (gateway/mcp content types). Caller is the entry point; CallPooled is the
// hot path, whose result may view a pooled buffer (see mcp.PooledResult).
//
// The Caller sees only tool arguments, never the incoming MCP request, so
// the client's own credentials cannot reach the backend.
//
// It imports toolgen, openapi, gateway/mcp and internal/jsonlex of the
// gateway, never package gateway or a feature package.
package call
