package toolgen

// Options controls which operations become tools and how they are described.
type Options struct {
	// Include, when non-empty, keeps only operations matched by at least one
	// glob. A glob matches an operation when it matches its operationId, any of
	// its tags, or its path (path.Match syntax; "**" is not special).
	Include []string
	// Exclude drops operations matched by any glob (same matching as Include);
	// it wins over Include.
	Exclude []string
	// ResourceOperations selects GET operations to serve as MCP resources
	// besides those marked x-mcp-resource (same matching as Include; other
	// methods are never resources). It is independent of Include, Exclude
	// and x-mcp: an operation may be a resource, a tool or both. Empty
	// means only x-mcp-resource selects.
	ResourceOperations []string
	// ConfirmOperations marks the tools a glob matches as needing the
	// user's confirmation before each call (Tool.Confirm, with the
	// gateway's own message), as x-mcp-confirm does. A glob matches a tool
	// by its name or as Include's do (operationId, tag, path); it wins over
	// x-mcp-confirm: false. Empty means only x-mcp-confirm marks.
	ConfirmOperations []string
	// ReadOnly keeps only operations with safe methods (GET, HEAD,
	// OPTIONS) — unless Include is set: an explicit Include list replaces
	// that default allow-list rather than adding to it, so it alone
	// decides, whatever the methods.
	ReadOnly bool
	// NamePrefix is put before every tool name (tool_prefix: several APIs
	// on one endpoint); names stay within 64 characters, the prefix kept
	// whole. It must be made of [A-Za-z0-9_-].
	NamePrefix string
	// Toolsets are named groups of tools besides the one per tag
	// (toolsets.go); one with a tag's name replaces that tag's.
	Toolsets []ToolsetSpec
	// MaxDescription trims tool descriptions to this many characters.
	// Zero means 1024.
	MaxDescription int
	// MaxSchemaBytes bounds each tool's inputSchema and outputSchema: a
	// bigger one is simplified step by step (simplify.go). Zero means
	// DefaultMaxSchemaBytes (32 KiB); negative means no bound.
	MaxSchemaBytes int
	// OutputSchema is how tools declare their outputSchema: OutputLenient
	// (the default, also for ""), OutputStrict or OutputOff. An operation's
	// x-mcp-output-schema overrides it.
	OutputSchema string
}

// The output_schema modes.
const (
	// OutputLenient declares the response's shape (types, properties,
	// items, nesting, composition) without the constraints real backends
	// break most (enum, const, required, format, pattern, bounds, lengths,
	// additionalProperties: false, item counts); oneOf becomes anyOf, since
	// without their constraints several branches may match.
	OutputLenient = "lenient"
	// OutputStrict declares the document's response schema as it is.
	OutputStrict = "strict"
	// OutputOff declares no outputSchema; a JSON object body is still
	// structuredContent, other JSON only text.
	OutputOff = "off"
)

// ValidOutputSchema reports whether mode is an output_schema mode.
func ValidOutputSchema(mode string) bool {
	return mode == OutputLenient || mode == OutputStrict || mode == OutputOff
}
