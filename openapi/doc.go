// Package openapi loads a REST backend's OpenAPI description so the gateway
// can turn its operations into MCP tools.
//
// Load and LoadData accept Swagger 2.0, OpenAPI 3.0 and 3.1, as JSON or YAML,
// from a file, an http(s) URL or memory. Every $ref is resolved, including
// relative references to other files or URLs; circular references are kept
// as references (kin-openapi fills Value and keeps Ref). Swagger 2.0 input is
// converted to OpenAPI 3, so consumers only ever see openapi3 types.
//
// What stops a load: unreadable or oversized input, a syntax error, a $ref
// that resolves to nothing, a document that declares neither "openapi" nor
// "swagger", or an unsupported version. Everything kin-openapi's strict
// validation complains about is reported as a Warning instead, together with
// oddities that matter to tool generation (duplicate operationIds, request
// media types the gateway cannot send, operations without any description):
// real-world documents are rarely spotless, and a tool that works is worth
// more than a refusal. LoadOptions.DeferValidation hands kin-openapi's part
// of that to the caller (Validate), to run beside other work.
//
// Reading is bounded: LoadOptions caps the time and the bytes of every file or
// URL read, external references included. A document fetched over http(s)
// never refers to local files, and reaches only its own origin and those
// listed in LoadOptions.RefAllow, redirects included; the server URL that
// would be its default upstream must be on its origin too
// (Document.CheckServerOrigin). A document from a file is the operator's
// own and may refer to anything.
//
// This package is a leaf: it imports no sibling package of the gateway, and it
// is, with toolgen, the only place kin-openapi is used.
package openapi
