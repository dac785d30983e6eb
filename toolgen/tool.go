package toolgen

import (
	"encoding/json"

	"github.com/getkin/kin-openapi/openapi3"
)

// Tool is one generated MCP tool and the OpenAPI operation it calls.
// The exported fields marshal to the MCP Tool shape used by tools/list.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  *Annotations    `json:"annotations,omitempty"`

	// binding is what the call path needs to turn arguments into a request.
	binding *binding
}

// Annotations are the MCP tool hints derived from the HTTP method.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// binding ties a tool's arguments to the parts of one HTTP request.
// Generation (generate*.go) fills it; the call path (call*.go) reads it.
type binding struct {
	Method    string              // upper-case HTTP method
	Path      string              // path template as in the document, e.g. /pets/{petId}
	PathItem  *openapi3.PathItem  // resolved
	Operation *openapi3.Operation // resolved
	// Params are the effective parameters (path-item ones overridden by
	// operation ones with the same name+in), each with the argument name
	// that carries it in the tool's arguments.
	Params []paramBinding
	// Body is nil when the operation has no request body.
	Body *bodyBinding
	// Security is the effective security requirement (operation, else document).
	Security openapi3.SecurityRequirements
	// OutputIsWrapped is true when the success schema is not an object and the
	// outputSchema wraps it as {"result": <schema>}; structuredContent must then
	// be wrapped the same way.
	OutputIsWrapped bool
	// HasOutputSchema is true when OutputSchema is set.
	HasOutputSchema bool
}

type paramBinding struct {
	Arg   string              // argument name in the tool's input
	Param *openapi3.Parameter // resolved
}

type bodyBinding struct {
	MediaType string // chosen request media type, e.g. application/json
	Required  bool
	Schema    *openapi3.SchemaRef
	// Flattened: the body object's properties are top-level arguments;
	// Props maps argument name → body property name.
	Flattened bool
	Props     map[string]string
	// Arg: when not flattened, the one argument that holds the whole body.
	Arg string
}

// Route returns the HTTP method and path template the tool calls.
func (t *Tool) Route() (method, path string) {
	if t.binding == nil {
		return "", ""
	}
	return t.binding.Method, t.binding.Path
}
