// Package demo is a small "notes & files" REST backend bundled with
// mcp-gateway. `mcp-gateway --demo` starts it in-process on loopback and
// exposes it as MCP tools; tests use it as a real backend.
//
// The API is described by an embedded OpenAPI 3.0.3 document (OpenAPI) and
// the handler answers exactly what that document declares; the tests check
// every example request and response against it so the two cannot drift.
//
// demo imports only the standard library (kin-openapi appears in its tests
// alone) and no sibling package.
package demo
