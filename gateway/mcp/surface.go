package mcp

import (
	"slices"
	"strings"
)

// Surface is what one connection chose to be served of what the operator
// serves: fewer toolsets, only read-only tools, another tool mode or
// schema dialect. The transport reads it from the connection's headers and
// path (a session keeps what its initialize chose); the zero Surface is
// the operator's choice throughout. A surface can only narrow what a
// principal may use, never widen it.
type Surface struct {
	// Toolsets names the toolsets the connection wants (lower case); nil
	// means every toolset the operator serves. In the toolsets tool mode
	// they are the ones enabled from the start.
	Toolsets []string
	// ReadOnly keeps only tools of safe methods (GET, HEAD, OPTIONS).
	ReadOnly bool
	// ToolMode is all, toolsets or search; "" means the operator's.
	ToolMode string
	// SchemaRefs is defs or inline; "" means the operator's.
	SchemaRefs string
	// Enabled are the toolsets the session enabled with enable_toolset,
	// as its record (possibly a cached copy) says.
	Enabled []string
}

// IsZero reports whether the surface asks for nothing but the operator's
// choice.
func (s Surface) IsZero() bool {
	return s.Toolsets == nil && !s.ReadOnly && s.ToolMode == "" && s.SchemaRefs == "" && len(s.Enabled) == 0
}

// The tool modes and schema dialects (tool_mode, schema_refs).
const (
	ToolModeAll      = "all"
	ToolModeToolsets = "toolsets"
	ToolModeSearch   = "search"
	SchemaRefsDefs   = "defs"
	SchemaRefsInline = "inline"
)

// Key names the surface: equal keys, equal surfaces (toolset order aside).
func (s Surface) Key() string {
	if s.IsZero() {
		return ""
	}
	var b strings.Builder
	b.WriteString(s.ToolMode)
	b.WriteByte('|')
	b.WriteString(s.SchemaRefs)
	if s.ReadOnly {
		b.WriteString("|ro")
	}
	b.WriteString("|t:")
	if s.Toolsets == nil {
		b.WriteByte('*')
	}
	for _, n := range sortedUnique(s.Toolsets) {
		b.WriteString(n)
		b.WriteByte(',')
	}
	b.WriteString("|e:")
	for _, n := range sortedUnique(s.Enabled) {
		b.WriteString(n)
		b.WriteByte(',')
	}
	return b.String()
}

func sortedUnique(names []string) []string {
	if len(names) < 2 {
		return names
	}
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}
