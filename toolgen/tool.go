package toolgen

import (
	"encoding/json"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// Tool is one generated MCP tool and the OpenAPI operation it calls.
// The exported fields but Binding marshal to the MCP Tool shape used by
// tools/list.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  *Annotations    `json:"annotations,omitempty"`

	// Confirm, when set, asks the gateway to have the user confirm each
	// call before it is sent (x-mcp-confirm, Options.ConfirmOperations;
	// confirm.go). It is not part of the listed tool.
	Confirm *Confirm `json:"-"`

	// Binding is what the call path (toolgen/call) needs to turn the
	// tool's arguments into a request. Read-only once generated.
	Binding *Binding `json:"-"`
}

// Annotations are the MCP tool hints derived from the HTTP method.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Binding ties a tool's arguments to the parts of one HTTP request: the
// one definition generation and the call path share. Generation
// (generate*.go) fills it; the call path reads it.
type Binding struct {
	Method    string              // upper-case HTTP method
	Path      string              // path template as in the document, e.g. /pets/{petId}
	PathItem  *openapi3.PathItem  // resolved
	Operation *openapi3.Operation // resolved
	// Params are the effective parameters (path-item ones overridden by
	// operation ones with the same name+in), each with the argument name
	// that carries it in the tool's arguments.
	Params []ParamBinding
	// Body is nil when the operation has no request body.
	Body *BodyBinding
	// Security is the effective security requirement (operation, else document).
	Security openapi3.SecurityRequirements
	// Scopes are the OAuth scopes a caller needs, from Security: one
	// alternative must be fully granted. Only oauth2 and openIdConnect
	// schemes ask for scopes; nil means none are needed (no requirement,
	// or an alternative without such a scheme).
	Scopes [][]string
	// OutputIsWrapped is true when the success schema is not an object and the
	// outputSchema wraps it as {"result": <schema>}; structuredContent must then
	// be wrapped the same way.
	OutputIsWrapped bool
	// HasOutputSchema is true when OutputSchema is set.
	HasOutputSchema bool
	// OutputOff: output_schema is off for this tool; only a JSON object
	// body becomes structuredContent.
	OutputOff bool
	// OutputSchema is the declared outputSchema (the same bytes as the
	// tool's), which the call path checks every structuredContent against.
	OutputSchema json.RawMessage
	// Async, when set, marks the operation asynchronous (x-mcp-async,
	// async.go): its 202 Accepted answer names a status URL that the call
	// path polls until the final answer. nil: a 202 is polled only when it
	// has a Location header.
	Async *AsyncSpec
}

// ParamBinding is one parameter and the argument that carries it.
type ParamBinding struct {
	Arg   string              // argument name in the tool's input
	Param *openapi3.Parameter // resolved
}

// BodyBinding is the request body and the arguments that carry it.
type BodyBinding struct {
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
	if t.Binding == nil {
		return "", ""
	}
	return t.Binding.Method, t.Binding.Path
}

// BodyKind is how a request body is sent.
type BodyKind uint8

const (
	BodyJSON BodyKind = iota
	BodyForm
	BodyMultipart
	BodyText
	BodyBinary
)

func (k BodyKind) String() string {
	switch k {
	case BodyJSON:
		return "JSON"
	case BodyForm:
		return "a form"
	case BodyMultipart:
		return "multipart form data"
	case BodyText:
		return "text"
	case BodyBinary:
		return "binary data"
	}
	return "unknown"
}

// BodyEncoding decides how a body of the declared media type and schema is
// sent: its kind and the Content-Type header. Generation shapes the body
// argument by it and the call path sends by it, so the two always agree.
func BodyEncoding(declared string, schema *openapi3.SchemaRef) (kind BodyKind, contentType string) {
	if schema != nil && schema.Value == nil {
		schema = nil
	}
	mt := MediaBase(declared)
	switch {
	case mt == "" || strings.Contains(mt, "*"):
		switch {
		case schema == nil || IsBinarySchema(schema):
			return BodyBinary, "application/octet-stream"
		case schema.Value.Type.Is(openapi3.TypeString):
			return BodyText, "text/plain; charset=utf-8"
		default:
			return BodyJSON, "application/json"
		}
	case openapi.IsJSONMediaType(mt):
		return BodyJSON, mt
	case mt == "application/x-www-form-urlencoded":
		return BodyForm, mt
	case strings.HasPrefix(mt, "multipart/"):
		return BodyMultipart, mt
	case openapi.IsTextMediaType(mt):
		if strings.HasPrefix(mt, "text/") {
			return BodyText, mt + "; charset=utf-8"
		}
		return BodyText, mt
	case schema == nil || IsBinarySchema(schema):
		return BodyBinary, mt
	case schema.Value.Type.Is(openapi3.TypeString):
		return BodyText, mt
	default:
		// An object or array for a media type we do not know (say
		// application/vnd.acme.pet): send it as JSON.
		return BodyJSON, mt
	}
}

// IsBinarySchema reports whether a schema describes raw bytes: a string
// with format binary (3.0) or contentMediaType/contentEncoding (3.1), or no
// type at all.
func IsBinarySchema(ref *openapi3.SchemaRef) bool {
	if ref == nil || ref.Value == nil {
		return false
	}
	s := ref.Value
	if !s.Type.Permits(openapi3.TypeString) {
		return false
	}
	return s.Format == "binary" || (s.ContentMediaType != "" && s.ContentEncoding == "")
}

// MediaBase is a media type without parameters, lower case.
func MediaBase(ct string) string {
	base, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(base))
}
