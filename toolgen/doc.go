// Package toolgen turns the operations of an OpenAPI document into MCP tool
// definitions (Generate, Set, Print): names, descriptions, annotations and
// input/output schemas, plus the Binding of each tool's arguments to the
// parts of its HTTP request, which the REST call path (toolgen/call) reads.
// GET operations may also be described as MCP resources (Set.Resources),
// read through the same Binding.
// It does no HTTP. It imports only the openapi and internal/jsonlex packages
// of the gateway; never toolgen/call or anything under gateway.
//
// # Which operations
//
// Every operation of the document's paths becomes one tool, except when the
// operation or its path item says x-mcp: false (the operation's own x-mcp
// wins), or Options.Include / Options.Exclude leave it out: a glob matches
// an operation by its operationId, any of its tags, or its path.
//
// # Names, titles, descriptions, annotations
//
// The name is x-mcp-name, else the operationId, else one made from method
// and path (GET /pets/{petId} → get_pets_by_petId). Names are sanitized to
// [A-Za-z0-9_-] (each run of other characters becomes "_") and kept to 64
// characters; a longer one ends in "_" and a hash of the full name. A name
// already taken gets "_" and a hash of the operation's method and path.
// Explicit names are claimed first, then operationIds, then made-up names,
// so a collision renames the less deliberate name. All of it depends only
// on the document, so names are the same on every run and every replica.
//
// The description is x-mcp-description, else summary and description, else
// "METHOD /path", cut to Options.MaxDescription characters. The title is the
// summary's first line, else the name made readable. Annotations follow the
// method and are all set explicitly:
//
//	GET HEAD OPTIONS TRACE  read-only, idempotent, not destructive
//	PUT DELETE              destructive, idempotent
//	PATCH                   destructive, not idempotent
//	POST                    not destructive (it adds), not idempotent
//
// openWorldHint is always true.
//
// # Arguments
//
// inputSchema is a JSON Schema 2020-12 object with one property per path,
// query, header and cookie parameter (header parameters named Accept,
// Content-Type or Authorization are not arguments: OpenAPI says they are
// ignored) plus the request body, and additionalProperties: false, because
// the call path rejects arguments the tool does not declare. An argument is
// named after its parameter, sanitized to [A-Za-z0-9_.-]; when parameters in
// different locations share a name, the first in the order path, query,
// header, cookie keeps it and the others get "_" and their location
// (id_query). Path parameters are always required.
//
// Body placement: the request media type is chosen in this order:
// application/json, other JSON types (+json), application/x-www-form-urlencoded,
// multipart/form-data, text/plain, other text types, application/octet-stream,
// other binary types, wildcards, anything else. The body's properties become
// top-level arguments (flattened) when all of these hold: the media type is
// JSON, form or multipart; the schema is a plain object with properties (no
// allOf/anyOf/oneOf/not, no discriminator, not nullable, no
// additionalProperties schema or true, no patternProperties or other
// whole-object constraints); no property name, sanitized, equals a parameter
// argument; every required property is described; and the body is required
// or has no required properties (an optional body's required properties
// could not be expressed as top-level arguments). Otherwise the whole body is
// one argument named body (body_, requestBody, body_2, ... when a parameter
// already uses the name): the body's JSON value, a string of text for text
// media types, or a base64 string for binary ones. readOnly properties are
// never arguments.
//
// # Schemas
//
// Component $refs become "$ref": "#/$defs/Name" with the referenced schemas
// under $defs, only those the tool reaches; circular schemas stay
// references. OpenAPI 3.0 nullable becomes a "null" type (or anyOf with
// {"type":"null"} when there is no type), boolean exclusive bounds become
// numeric ones, example becomes examples; OpenAPI 3.1 schemas pass through.
// Discriminator mappings are rewritten to $defs. Binary strings in
// arguments are base64 (contentEncoding). Input schemas leave out readOnly
// properties, output schemas writeOnly ones.
//
// outputSchema comes from the 200 response (else 201, else the lowest 2xx)
// when it has a JSON schema that every other 2xx response shares. An object
// schema is used as is (without adding additionalProperties: false, and
// dropping it where the document says it, so that real responses validate);
// anything else is wrapped as {"result": <schema>} and the call path wraps
// structuredContent the same way.
//
// # Confirmation and asynchronous operations
//
// x-mcp-confirm: true, or a message, sets Tool.Confirm: the gateway has the
// user confirm each call before it is sent, with that message or its own.
// Options.ConfirmOperations marks tools the same way by glob (a tool's
// name, or what Include's globs match), also over x-mcp-confirm: false.
// x-mcp-async: true marks an operation whose 202 Accepted answer's
// Location header is a status URL to poll for the final answer;
// {"location": "/statusUrl"} names, as a JSON pointer, where in the 202
// body that URL is (Binding.Async). Other values of either are warnings,
// and ignored.
//
// # Resources
//
// A GET operation is also an MCP resource (a ResourceOp) when it says
// x-mcp-resource: true, or an object of uri, name, title, description,
// mimeType and pollInterval (a Go duration such as "10s", or a number of
// seconds; at least 1s), or when a glob of Options.ResourceOperations
// matches it as Include's do (x-mcp-resource: false does not keep it out
// then). Resources are chosen from all the document's operations,
// whatever Include, Exclude and x-mcp say: an operation may be a tool, a
// resource or both. x-mcp-resource on another method, or a value that is
// not one of these (a field of the wrong type, a bad pollInterval), is a
// warning, and the operation is not a resource.
//
// Each resource has a Tool, the one listed when the operation is also a
// tool, else one made and named the same way but not listed, named after
// all the listed tools so that resources change nothing about them. Its
// name is unique among tools and resources; policy and audit know the
// resource by it.
//
// A resource's URI is x-mcp-resource.uri, else rest://api and the path,
// each path parameter {p} the template variable {p} (simple expansion: it
// matches one path segment): GET /pets/{petId} is rest://api/pets/{petId},
// GET /pets is the fixed URI rest://api/pets. A parameter name that is not
// an RFC 6570 varname (letters, digits, _, pct-encoded, and . between
// them) becomes one of letters, digits and _ (ResourceOp.Vars maps each
// variable to its argument); characters a template may not hold are
// percent-encoded. An explicit uri is a fixed URI or a template of {name}
// and {+name} (reserved expansion, for a value that may hold slashes)
// whose variables are the path parameters' variable names, each exactly
// once; it must begin with a scheme other than gateway:, http: and
// https:. Name defaults to the tool name, title to the summary,
// description to the tool's, mimeType to the success response's media
// type (application/json when it has it). Completion values for a
// variable are its parameter's enum and examples.
//
// An operation with a required parameter that is not in the path, or a
// required request body, cannot be read from a URI: a warning, and no
// resource. Of two resources with the same URI or template (up to
// variable names), the second is dropped with a warning.
package toolgen
