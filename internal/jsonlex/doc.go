// Package jsonlex is the gateway's one hand-written JSON lexer: a validating
// scanner that hands out the members of an object as sub-slices
// (ScanObject, Valid, String) and the string escaper that writes JSON
// strings byte for byte as encoding/json does (AppendString).
//
// The wire encoder (gateway/mcp), the transport's message reader (gateway)
// and the REST call path (toolgen/call) use it on every request; schema
// generation (toolgen) uses the escaper, and the OpenAPI loader (openapi)
// skips values and strings with it (SkipValue, SkipString) when it cuts a
// JSON document into chunks. Every function is checked against
// encoding/json by a differential fuzzer.
//
// It imports only the standard library: no project package.
package jsonlex
