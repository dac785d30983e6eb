// Package e2e holds tests that run the real mcp-gateway binary as a separate
// process, and (conformance.sh) the official MCP conformance suite.
package e2e
