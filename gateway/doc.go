// Package gateway is the core of mcp-gateway: it serves MCP over Streamable
// HTTP on one endpoint for every protocol revision clients use, and turns
// tools/call into REST calls through toolgen.
//
// # The flow of one request
//
// The HTTP layer (http.go, the only file that knows echo) hands every request
// on the MCP endpoint to the transport (transport.go). The transport checks
// Origin/Host, Accept, Content-Type and size, reads the JSON-RPC message, and
// decides the era of the request:
//
//   - stateless (2026-07-28): the body carries the protocol version in
//     params._meta; no session exists; headers mirror the body and must agree.
//   - session (2025-03-26, 2025-06-18, 2025-11-25): initialize mints a session
//     id; every later request names it in Mcp-Session-Id.
//
// The transport builds one request value (version, client capabilities,
// optional session, a sink for notifications, a context that cancels) and
// dispatches it through a table (dispatch.go). Method handlers (handlers.go)
// never look at the transport: where eras differ in meaning, the request
// value carries the difference.
//
// # State
//
// Session records and push-stream logs live in a sessions.Store; wake-up
// hints travel over a pubsub.Bus. With the memory implementations the gateway
// is a single replica; with the Redis ones any replica answers any session.
//
// The package may import openapi, toolgen, sessions, pubsub and quota; none
// of them imports it.
package gateway
