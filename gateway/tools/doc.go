// Package tools is the MCP tools feature: tools/list over the generated
// tool set (toolgen) and tools/call over the REST call path (toolgen/call),
// with the per-client tool-call rate limit.
//
// It registers its methods on the server's method table (Register) and sees
// requests only as gateway/mcp values. It must not import package gateway,
// the transport, or another feature package.
package tools
