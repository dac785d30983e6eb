package toolgen

import (
	"fmt"
	"slices"
)

// Merge is the tools of several documents served on one endpoint: their
// tools, resource operations and warnings in the order given, and their
// toolsets, those of one name made one (in the order first seen). Names
// must be unique across the sets (a name prefix per document keeps them
// apart), and so must resource URIs; the first clash is the error. The
// result's options are the first set's.
func Merge(sets ...*Set) (*Set, error) {
	if len(sets) == 1 {
		return sets[0], nil
	}
	out := &Set{byName: map[string]*Tool{}, resourceByName: map[string]*ResourceOp{}}
	if len(sets) > 0 {
		out.opts = sets[0].opts
	}
	byToolset := map[string]*Toolset{}
	uris := map[string]bool{}
	for i, s := range sets {
		for _, t := range s.tools {
			if _, dup := out.byName[t.Name]; dup || out.resourceByName[t.Name] != nil {
				return nil, fmt.Errorf("toolgen: document %d has a tool named %q as an earlier one does: give the documents different name prefixes", i+1, t.Name)
			}
			out.byName[t.Name] = t
			out.tools = append(out.tools, t)
		}
		for _, op := range s.resources {
			if _, dup := out.resourceByName[op.Tool.Name]; dup || (!op.IsTool && out.byName[op.Tool.Name] != nil) {
				return nil, fmt.Errorf("toolgen: document %d has a resource operation named %q as an earlier one does: give the documents different name prefixes", i+1, op.Tool.Name)
			}
			uri := op.URI + op.URITemplate
			if uris[uri] {
				return nil, fmt.Errorf("toolgen: document %d serves the resource %s as an earlier one does: give one an x-mcp-resource uri of its own", i+1, uri)
			}
			uris[uri] = true
			out.resourceByName[op.Tool.Name] = op
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
