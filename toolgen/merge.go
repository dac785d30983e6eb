package toolgen

import (
	"fmt"
	"slices"
)

// Merge is the tools of several documents served on one endpoint: their
// tools, resource operations and warnings in the order given, and their
// toolsets, those of one name made one (in the order first seen). Names
// must be unique across the sets (a name prefix per document keeps them
// apart), and so must resource URIs; the first clash is the error, which
// names the documents by names (one per set). The result's options are
// the first set's.
func Merge(names []string, sets ...*Set) (*Set, error) {
	if len(sets) == 1 {
		return sets[0], nil
	}
	if len(names) != len(sets) {
		return nil, fmt.Errorf("toolgen: %d names for %d documents", len(names), len(sets))
	}
	out := &Set{byName: map[string]*Tool{}, resourceByName: map[string]*ResourceOp{}}
	if len(sets) > 0 {
		out.opts = sets[0].opts
	}
	byToolset := map[string]*Toolset{}
	uris := map[string]string{}  // URI → the document serving it
	owner := map[string]string{} // tool or resource name → its document
	for i, s := range sets {
		for _, t := range s.tools {
			if _, dup := out.byName[t.Name]; dup || out.resourceByName[t.Name] != nil {
				return nil, fmt.Errorf("%s and %s both have a tool named %q: give them different tool_prefix values", owner[t.Name], names[i], t.Name)
			}
			out.byName[t.Name] = t
			owner[t.Name] = names[i]
			out.tools = append(out.tools, t)
		}
		for _, op := range s.resources {
			if _, dup := out.resourceByName[op.Tool.Name]; dup || (!op.IsTool && out.byName[op.Tool.Name] != nil) {
				return nil, fmt.Errorf("%s and %s both have a tool or resource operation named %q: give them different tool_prefix values", owner[op.Tool.Name], names[i], op.Tool.Name)
			}
			uri := op.URI + op.URITemplate
			if uris[uri] != "" {
				return nil, fmt.Errorf("%s and %s both serve the resource %s: give one an x-mcp-resource uri of its own", uris[uri], names[i], uri)
			}
			uris[uri] = names[i]
			out.resourceByName[op.Tool.Name] = op
			if owner[op.Tool.Name] == "" {
				owner[op.Tool.Name] = names[i]
			}
			out.resources = append(out.resources, op)
		}
		for _, ts := range s.toolsets {
			m, ok := byToolset[ts.Name]
			if !ok {
				m = &Toolset{Name: ts.Name, Description: ts.Description, Declared: ts.Declared}
				byToolset[ts.Name] = m
				out.toolsets = append(out.toolsets, m)
			}
			m.Tools = append(slices.Clip(m.Tools), ts.Tools...)
		}
		out.warnings = append(out.warnings, s.warnings...)
	}
	return out, nil
}
