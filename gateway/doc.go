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
// The 2024-11-05 HTTP+SSE transport (legacy.go) has endpoints of its own:
// a GET opens the event stream and creates the session, POSTs carry its
// messages, and every answer goes to the session's event log, which the
// stream pumps like any session's push stream, on whichever replica holds it.
//
// The transport builds one request value (mcp.Request: version, client
// capabilities, principal, optional session, a sink for notifications, a
// context that cancels) and dispatches it through the Server's method table
// (dispatch.go), where every request first passes the middleware chain
// (Deps.Middleware). Handlers never look at the transport: where eras
// differ in meaning, the request value carries the difference. The server
// answers the session plumbing itself (session.go: initialize, ping,
// logging/setLevel, server/discover); the MCP features are packages of their
// own that register their methods (gateway/tools, gateway/resources,
// gateway/prompts, gateway/completion).
//
// Transport steps return errors; errors.go's translate is the one place
// that turns an error into an HTTP status and JSON-RPC error, and logs the
// ones whose text the client must not see.
//
// # State
//
// Session records and push-stream logs live in a sessions.Store; wake-up
// hints travel over a pubsub.Bus. With the memory implementations the gateway
// is a single replica; with the Redis ones any replica answers any session.
//
// # Streams
//
// Every session-era SSE event has an id, "<log id>.<stream token>"
// (streamlog.go): a POST answer that turns into a stream logs each message
// in the session's log, tagged with its stream, so a GET with Last-Event-ID
// resumes it on any replica and ends after its final response; 2025-11-25
// streams start with a priming event and a retry hint; at shutdown every
// stream ends with a retry hint while its call finishes. GET push streams
// obey one message, one stream (pushstream.go): the session record lists the
// open GET streams, and only the newest delivers; when it closes, the next
// takes over at the delivered cursor.
//
// # Input from the client
//
// A tool call that needs the client's input (gateway/tools: confirmation,
// a backend's input-required answer) asks through tools.Input (ask.go): in
// a session as server→client requests on the call's stream, recorded in a
// pending.Store so that the answer, POSTed to any replica, is routed over
// the bus to the one waiting; in 2026-07-28 as input_required with the
// continuation sealed in requestState (gateway/mrtr), spent once.
//
// It is the only package that imports the feature packages, and the only
// place echo appears (http.go). No package it imports may import it.
package gateway
