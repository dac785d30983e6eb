package toolgen

// Toolsets: named groups of tools, so a client can be served part of a
// large API. Every OpenAPI tag is one (its name sanitized, its
// description), a tool without a tag is in "default", and the operator may
// declare more (Options.Toolsets). A tool is in every toolset of its tags
// and in every declared toolset whose globs match it.

import (
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// DefaultToolset holds the tools whose operations have no tag.
const DefaultToolset = "default"

// The gateway's own tools in the toolsets and search tool modes
// (gateway/tools). No operation is given one of these names, whatever the
// mode, so a tool keeps its name when the mode changes.
const (
	ToolListToolsets   = "list_available_toolsets"
	ToolToolsetTools   = "get_toolset_tools"
	ToolEnableToolset  = "enable_toolset"
	ToolSearch         = "search_operations"
	ToolDescribe       = "describe_operation"
	ToolCallOperation  = "call_operation"
	maxToolsetNameLen  = 64
	maxPrefixLen       = 24
	maxToolsetsPerTool = 16
)

// reservedNames are the names no operation may take.
func reservedNames() nameSet {
	return nameSet{ToolListToolsets: true, ToolToolsetTools: true, ToolEnableToolset: true,
		ToolSearch: true, ToolDescribe: true, ToolCallOperation: true}
}

// ToolsetSpec declares a toolset: the tools whose name, operationId, tag
// or path one of Tools matches (path.Match globs).
type ToolsetSpec struct {
	Name        string
	Description string
	Tools       []string
}

// Toolset is one named group of a set's tools, in document order.
type Toolset struct {
	Name        string
	Description string
	Tools       []*Tool
	// Declared: from Options.Toolsets, not from a tag.
	Declared bool
}

// SafeMethod reports whether method is one read-only mode serves: GET,
// HEAD or OPTIONS.
func SafeMethod(method string) bool {
	switch strings.ToUpper(method) {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	return false
}

// ToolsetName is the toolset a tag makes: the tag sanitized to
// [a-z0-9_-] (lower case), "" when nothing is left.
func ToolsetName(tag string) string {
	return strings.ToLower(sanitize(tag, maxToolsetNameLen, func(r rune) bool {
		return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}))
}

// ValidToolsets checks declared toolsets: a valid, unique name and
// valid globs.
func ValidToolsets(specs []ToolsetSpec) error {
	seen := map[string]bool{}
	for i, ts := range specs {
		switch {
		case ts.Name == "" || ToolsetName(ts.Name) != ts.Name:
			return fmt.Errorf("toolsets[%d]: name %q must be lower-case letters, digits, _ and - (at most %d)", i, ts.Name, maxToolsetNameLen)
		case seen[ts.Name]:
			return fmt.Errorf("toolsets[%d]: name %q is declared twice", i, ts.Name)
		case len(ts.Tools) == 0:
			return fmt.Errorf("toolsets[%d] (%s): needs tools (globs)", i, ts.Name)
		}
		for _, g := range ts.Tools {
			if _, err := path.Match(g, ""); err != nil {
				return fmt.Errorf("toolsets[%d] (%s): bad glob %q", i, ts.Name, g)
			}
		}
		seen[ts.Name] = true
	}
	return nil
}

// ValidNamePrefix checks a tool name prefix: letters, digits, _ and -,
// at most 24 characters ("" is none).
func ValidNamePrefix(p string) error {
	if p == "" {
		return nil
	}
	if sanitizeName(p) != p || len(p) > maxPrefixLen {
		return fmt.Errorf("name prefix %q must be letters, digits, _ and -, at most %d characters", p, maxPrefixLen)
	}
	return nil
}

// Toolsets returns the set's toolsets: the declared ones in the order
// declared, then one per tag in the order the document's tags list them
// (tags it does not list: in the order tools use them), then "default".
// A toolset with no tool is left out. The slices are shared; do not
// modify them.
func (s *Set) Toolsets() []*Toolset { return slices.Clip(s.toolsets) }

// Toolset returns the toolset named name.
func (s *Set) Toolset(name string) (*Toolset, bool) {
	for _, ts := range s.toolsets {
		if ts.Name == name {
			return ts, true
		}
	}
	return nil, false
}

// toolsets groups the set's tools.
func (g *generator) toolsets(set *Set) []*Toolset {
	declared := map[string]bool{}
	var out []*Toolset
	for _, spec := range g.opts.Toolsets {
		ts := &Toolset{Name: spec.Name, Description: TruncateText(strings.TrimSpace(spec.Description), g.opts.MaxDescription), Declared: true}
		for _, t := range set.tools {
			if matchTool(spec.Tools, t) {
				ts.Tools = append(ts.Tools, t)
			}
		}
		if len(ts.Tools) == 0 {
			g.warn("", fmt.Sprintf("toolset %q matches no tool", spec.Name))
		}
		if ts.Description == "" {
			ts.Description = fmt.Sprintf("The %s tools.", spec.Name)
		}
		declared[spec.Name] = true
		out = append(out, ts)
	}

	// Tags: the document's order first.
	byName := map[string]*Toolset{}
	var order []string
	add := func(name, desc string) *Toolset {
		if ts, ok := byName[name]; ok {
			return ts
		}
		ts := &Toolset{Name: name, Description: desc}
		byName[name] = ts
		order = append(order, name)
		return ts
	}
	tagOf := map[string]string{} // tag → toolset name
	for _, tag := range g.doc.Tags {
		if tag == nil {
			continue
		}
		name := ToolsetName(tag.Name)
		if name == "" || declared[name] {
			continue
		}
		if prev, ok := byName[name]; ok && prev.Description != "" {
			g.warn("tags", fmt.Sprintf("tags %q and another share the toolset name %q; their tools are one toolset", tag.Name, name))
		}
		add(name, TruncateText(strings.TrimSpace(plainText(tag.Description)), g.opts.MaxDescription))
		tagOf[tag.Name] = name
	}
	var untagged []*Tool
	for _, t := range set.tools {
		var tags []string
		if t.Binding != nil && t.Binding.Operation != nil {
			tags = t.Binding.Operation.Tags
		}
		in := 0
		for _, tag := range tags {
			name, ok := tagOf[tag]
			if !ok {
				name = ToolsetName(tag)
			}
			if name == "" || declared[name] {
				continue
			}
			ts := add(name, "")
			if n := len(ts.Tools); n > 0 && ts.Tools[n-1] == t {
				continue // two tags of one tool, one toolset
			}
			if in++; in > maxToolsetsPerTool {
				break
			}
			ts.Tools = append(ts.Tools, t)
		}
		if in == 0 && !slices.ContainsFunc(tags, func(tag string) bool { return declared[ToolsetName(tag)] }) {
			untagged = append(untagged, t)
		}
	}
	if len(untagged) > 0 && !declared[DefaultToolset] {
		ts := add(DefaultToolset, "Operations without a tag.")
		ts.Tools = append(ts.Tools, untagged...)
	}
	for _, name := range order {
		ts := byName[name]
		if len(ts.Tools) == 0 {
			continue
		}
		if ts.Description == "" {
			ts.Description = fmt.Sprintf("Operations tagged %s.", name)
		}
		out = append(out, ts)
	}
	return out
}

// matchTool reports whether a glob matches the tool's name or, as
// Include's do, its operationId, a tag or its path.
func matchTool(globs []string, t *Tool) bool {
	b := t.Binding
	if b == nil || b.Operation == nil {
		return false
	}
	return confirmGlobbed(globs, openapi.Operation{Path: b.Path, Method: b.Method, PathItem: b.PathItem, Operation: b.Operation}, t.Name)
}

// withPrefix puts prefix before name within maxNameLen, the prefix kept
// whole (a long name is cut and hashed as sanitizeName cuts).
func withPrefix(prefix, name string) string {
	return prefix + truncateName(name, maxNameLen-len(prefix))
}
