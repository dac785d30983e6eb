// Package mcp holds the wire types every MCP feature needs: the per-request
// value handlers receive (Request: era, revision, client capabilities,
// principal, session, notification sink, context), the handler and
// middleware types of the method table, JSON-RPC error codes and the Error
// type, the protocol revisions, content items and result types, the cursor
// codec and the hot-path response encoder.
//
// It is the vocabulary shared by the transport (package gateway) and the
// feature packages (gateway/tools, gateway/resources, ...), and by the REST
// call path (toolgen/call) for the results it builds. It must import no
// project package except internal/jsonlex, and never the transport: handlers
// that use it cannot tell which HTTP exchange, or which era's framing,
// carries their request.
package mcp
