// Package e2e holds tests that run the real mcp-gateway binary as a separate
// process, and (conformance.sh) the official MCP conformance suite. The
// tests talk to the binary over HTTP only: of the gateway they import only
// openapi (to read the documents they drive) and the helpers under
// internal/, never the request path (gateway, toolgen).
package e2e
