package tools

// What one connection is served of the catalog: the operator's toolsets
// (toolsets_enabled), narrowed by the connection's own choice
// (mcp.Surface: toolsets, read-only), in the tool mode and schema dialect
// it asked for, and of that only what its principal may see. Each
// combination is computed once per catalog (views) and then looked up.

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/search"
)

// SessionToolsets keeps the toolsets a session enabled (the toolsets
// mode): in its record, so that every replica serves the same list.
type SessionToolsets interface {
	// Enable adds names to r's session's enabled toolsets and tells the
	// session its tool list changed; it returns the toolsets now enabled.
	Enable(r *mcp.Request, names []string) ([]string, error)
	// Enabled reads r's session's enabled toolsets from the store, for
	// when the copy r came with may be stale (another replica enabled one
	// a moment ago).
	Enabled(r *mcp.Request) ([]string, error)
}

// ValidToolMode and ValidSchemaRefs report the values tool_mode and
// schema_refs take.
func ValidToolMode(m string) bool {
	return m == mcp.ToolModeAll || m == mcp.ToolModeToolsets || m == mcp.ToolModeSearch
}

func ValidSchemaRefs(d string) bool { return d == mcp.SchemaRefsDefs || d == mcp.SchemaRefsInline }

// surfaceOf is r's surface with the operator's defaults filled in, those
// c serves with (one generation: the settings swap with the catalog).
func (f *Feature) surfaceOf(c *catalog, r *mcp.Request) mcp.Surface {
	s := r.Surface
	if s.ToolMode == "" {
		s.ToolMode = c.conf.ToolMode
	}
	if s.SchemaRefs == "" {
		s.SchemaRefs = f.cfg.SchemaRefs
	}
	return s
}

// CheckSurface reports a connection's choice the gateway cannot serve: a
// toolset it does not serve (unknown, or not enabled by the operator), a
// tool mode or schema dialect it does not know. The error names it.
func (f *Feature) CheckSurface(s mcp.Surface) error {
	if s.ToolMode != "" && !ValidToolMode(s.ToolMode) {
		return fmt.Errorf("unknown tool mode %q (all, toolsets or search)", mcp.Truncate(s.ToolMode))
	}
	if s.SchemaRefs != "" && !ValidSchemaRefs(s.SchemaRefs) {
		return fmt.Errorf("unknown schema dialect %q (defs or inline)", mcp.Truncate(s.SchemaRefs))
	}
	if len(s.Toolsets) == 0 {
		return nil
	}
	c := f.current.Load()
	if c == nil || c.Tools == nil {
		return nil // nothing loaded: the request fails on its own
	}
	var unknown []string
	for _, name := range s.Toolsets {
		if _, ok := c.toolsets[name]; !ok {
			unknown = append(unknown, mcp.Truncate(name))
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("unknown toolset %s (served: %s)", listSome(quoteAll(unknown), 3), listSome(c.toolsetNames, 50))
	}
	return nil
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

// servedToolsets are the toolsets the operator serves: all of the set's,
// or those toolsets_enabled names. An unknown name is an error (the
// gateway refuses to start with it, and keeps the previous document on a
// reload that drops one).
func servedToolsets(set *toolgen.Set, enabled []string) (map[string]*toolgen.Toolset, []string, error) {
	all := set.Toolsets()
	out := make(map[string]*toolgen.Toolset, len(all))
	var names []string
	if len(enabled) == 0 {
		for _, ts := range all {
			out[ts.Name] = ts
			names = append(names, ts.Name)
		}
		return out, names, nil
	}
	var unknown []string
	for _, name := range enabled {
		ts, ok := set.Toolset(name)
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		if _, dup := out[name]; !dup {
			out[name] = ts
			names = append(names, name)
		}
	}
	if len(unknown) > 0 {
		have := make([]string, len(all))
		for i, ts := range all {
			have[i] = ts.Name
		}
		return nil, nil, fmt.Errorf("toolsets_enabled names %s, which the document does not have (it has: %s)",
			strings.Join(quoteAll(unknown), ", "), listSome(have, 20))
	}
	return out, names, nil
}

// servedNames are the names of the tools in sets.
func servedNames(sets map[string]*toolgen.Toolset) map[string]bool {
	served := map[string]bool{}
	for _, ts := range sets {
		for _, t := range ts.Tools {
			served[t.Name] = true
		}
	}
	return served
}

// ServedTools are the tools of list (a set's Tools or InlineTools) that
// the toolsets named by enabled hold, in list's order; all of list when
// enabled is empty. Names the set lacks are ignored (CheckToolsets).
func ServedTools(set *toolgen.Set, enabled []string, list []*toolgen.Tool) []*toolgen.Tool {
	if len(enabled) == 0 {
		return list
	}
	sets := map[string]*toolgen.Toolset{}
	for _, name := range enabled {
		if ts, ok := set.Toolset(name); ok {
			sets[name] = ts
		}
	}
	served := servedNames(sets)
	out := make([]*toolgen.Tool, 0, len(served))
	for _, t := range list {
		if served[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// CheckToolsets reports toolset names the set does not have.
func CheckToolsets(set *toolgen.Set, names []string) error {
	_, _, err := servedToolsets(set, names)
	return err
}

func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s (+%d more)", strings.Join(names[:n], ", "), len(names)-n)
}

// surfaceView is what one combination of principal scopes and surface
// sees: the tools/list answer, and the operation tools callable.
type surfaceView struct {
	listed []*toolgen.Tool // meta tools first, then operation tools
	// ops are the operation tools the connection may call directly (by
	// name), and in the search mode through call_operation; seen, those
	// of them its principal may see (a call of another is refused with a
	// step-up challenge).
	ops   map[string]*toolgen.Tool
	seen  map[string]bool
	shown []*toolgen.Tool // seen ops in document order, in the dialect
}

// surfaceState is a catalog's share of the surfaces: what the operator
// serves and the views made so far.
type surfaceState struct {
	// toolsets are the served toolsets by name, toolsetNames in order;
	// members, each one's tools by name.
	toolsets     map[string]*toolgen.Toolset
	toolsetNames []string
	members      map[string]map[string]bool
	// served are the operation tools the operator serves (in a served
	// toolset); nil: every tool of the set.
	served map[string]bool
	// plain: the operator narrows nothing and serves mode all, defs: a
	// connection that asks for nothing sees the scope views as before.
	plain bool

	surfaceViews sync.Map     // key → *surfaceView
	surfaceCount atomic.Int32 // entries in surfaceViews
	indexOnce    sync.Once
	index        *search.Index
	inlineOnce   sync.Once
	inline       map[string]*toolgen.Tool // by name
}

// initSurfaces fills the catalog's surface state.
func (c *catalog) initSurfaces(cfg *Config) error {
	if c.Tools == nil {
		return nil
	}
	sets, names, err := servedToolsets(c.Tools, cfg.ToolsetsEnabled)
	if err != nil {
		return err
	}
	c.toolsets, c.toolsetNames = sets, names
	c.members = make(map[string]map[string]bool, len(sets))
	for name, ts := range sets {
		m := make(map[string]bool, len(ts.Tools))
		for _, t := range ts.Tools {
			m[t.Name] = true
		}
		c.members[name] = m
	}
	if len(cfg.ToolsetsEnabled) > 0 {
		c.served = servedNames(sets)
	}
	c.plain = c.served == nil && cfg.ToolMode == mcp.ToolModeAll && cfg.SchemaRefs == mcp.SchemaRefsDefs
	return nil
}

// searchIndex is the index of every tool of the set, built on first use.
func (c *catalog) searchIndex() *search.Index {
	c.indexOnce.Do(func() { c.index = search.New(c.Tools.Tools()) })
	return c.index
}

// inlined is t with its schemas inlined (schema_refs: inline).
func (c *catalog) inlined(t *toolgen.Tool) *toolgen.Tool {
	c.inlineOnce.Do(func() {
		list := c.Tools.InlineTools()
		c.inline = make(map[string]*toolgen.Tool, len(list))
		for _, it := range list {
			c.inline[it.Name] = it
		}
	})
	if it, ok := c.inline[t.Name]; ok {
		return it
	}
	return t
}

// surfaceKey names a surface's view, with the principal's scopes; the
// session's enabled toolsets count only in the toolsets mode.
func surfaceKey(s mcp.Surface, scopes string, withEnabled bool) string {
	if !withEnabled {
		s.Enabled = nil
	}
	return s.Key() + "|s:" + scopes
}

// view is what r sees, for its surface s (defaults filled in).
func (f *Feature) view(c *catalog, r *mcp.Request, s mcp.Surface) *surfaceView {
	withEnabled := s.ToolMode == mcp.ToolModeToolsets
	key := surfaceKey(s, scopeKeyFor(c, r.Principal), withEnabled)
	if v, ok := c.surfaceViews.Load(key); ok {
		return v.(*surfaceView)
	}
	v := f.makeView(c, r, s, withEnabled)
	// Combinations are few; a client inventing many does not grow this
	// (and calls do not use views: allows looks at one tool).
	if c.surfaceCount.Load() < maxViews && c.surfaceCount.Add(1) <= maxViews {
		c.surfaceViews.Store(key, v)
	}
	return v
}

// scopeKeyFor is the part of the view key the principal decides.
func scopeKeyFor(c *catalog, p *mcp.Principal) string {
	if !c.authorize {
		return ""
	}
	return mcp.ScopeKey(p)
}

func (f *Feature) makeView(c *catalog, r *mcp.Request, s mcp.Surface, withEnabled bool) *surfaceView {
	v := &surfaceView{ops: map[string]*toolgen.Tool{}, seen: map[string]bool{}}
	for _, t := range c.Tools.Tools() {
		if !c.allows(s, t, withEnabled) {
			continue
		}
		v.ops[t.Name] = t
		// Listed only for a principal with the scopes it needs; a call
		// without them gets the step-up challenge, as in the all mode.
		if tp := c.policy[t.Name]; c.authorize && tp != nil && !granted(r.Principal, tp.scopes) {
			continue
		}
		v.seen[t.Name] = true
		shown := t
		if s.SchemaRefs == mcp.SchemaRefsInline {
			shown = c.inlined(t)
		}
		v.shown = append(v.shown, shown)
	}
	switch s.ToolMode {
	case mcp.ToolModeToolsets:
		v.listed = append(slices.Clip(f.meta.toolsets), v.shown...)
	case mcp.ToolModeSearch:
		v.listed = f.meta.search
	default:
		v.listed = v.shown
	}
	return v
}

// allows reports whether the surface s serves the operation tool t: the
// operator serves it (toolsets_enabled), it is in one of the toolsets
// the connection names (in the toolsets mode with enabledOnly: named or
// enabled by its session; without: named, else every served one), and
// its method is safe when the connection is read-only. It looks at one
// tool, so a call costs a few map lookups whatever the API's size.
func (c *catalog) allows(s mcp.Surface, t *toolgen.Tool, enabledOnly bool) bool {
	if c.served != nil && !c.served[t.Name] {
		return false
	}
	if s.ReadOnly && (t.Binding == nil || !toolgen.SafeMethod(t.Binding.Method)) {
		return false
	}
	in := func(names []string) bool {
		for _, n := range names {
			if c.members[n][t.Name] {
				return true
			}
		}
		return false
	}
	if s.ToolMode == mcp.ToolModeToolsets && enabledOnly {
		return in(s.Toolsets) || in(s.Enabled)
	}
	return s.Toolsets == nil || in(s.Toolsets)
}

// Usable reports whether r's connection is served the tool or resource
// operation name (its surface and the operator's toolsets; scopes are
// Permits'). A resource operation that is no tool is in no toolset: only
// read-only applies to it (it is a GET).
func (f *Feature) usable(r *mcp.Request, c *catalog, name string) bool {
	if c.plain && r.Surface.IsZero() {
		return true
	}
	if t, ok := c.Tools.Lookup(name); ok {
		return c.allows(f.surfaceOf(c, r), t, false)
	}
	return true
}

// listed is r's tools/list: its view's, read afresh in a session of the
// toolsets mode (another replica may have enabled a toolset a moment ago,
// and its record here be a cached copy).
func (f *Feature) listed(r *mcp.Request, c *catalog) ([]*toolgen.Tool, error) {
	if c.plain && r.Surface.IsZero() {
		return c.visible(r.Principal), nil
	}
	s := f.surfaceOf(c, r)
	if s.ToolMode == mcp.ToolModeToolsets && r.SessionID != "" && f.sessions != nil {
		enabled, err := f.sessions.Enabled(r)
		if err != nil {
			return nil, err
		}
		r.Surface.Enabled, s.Enabled = enabled, enabled
	}
	return f.view(c, r, s).listed, nil
}

// surfaceTool is the operation tool name for r, if its surface serves
// it: in the toolsets mode only enabled toolsets' tools are callable (the
// session's record is read afresh before saying no).
func (f *Feature) surfaceTool(r *mcp.Request, c *catalog, s mcp.Surface, name string) (*toolgen.Tool, error) {
	t, exists := c.Tools.Lookup(name)
	if !exists {
		return nil, mcp.InvalidParams("Unknown tool: %q", name)
	}
	session := r.SessionID != "" && f.sessions != nil
	if c.allows(s, t, true) {
		return t, nil
	}
	if s.ToolMode == mcp.ToolModeToolsets && session && c.allows(s, t, false) {
		// Enabled through another replica a moment ago? Ask the record.
		enabled, err := f.sessions.Enabled(r)
		if err != nil {
			return nil, err
		}
		r.Surface.Enabled, s.Enabled = enabled, enabled
		if c.allows(s, t, true) {
			return t, nil
		}
	}
	if s.ToolMode == mcp.ToolModeToolsets && c.allows(s, t, false) {
		if tp := c.policy[t.Name]; !c.authorize || tp == nil || granted(r.Principal, tp.scopes) {
			return nil, mcp.InvalidParams("Tool %q is not enabled: enable a toolset that has it (%s) with enable_toolset", name, strings.Join(c.toolsetsOf(t), ", "))
		}
	}
	// Outside what this connection is served: as if it did not exist.
	return nil, mcp.InvalidParams("Unknown tool: %q", name)
}

// toolsetsOf names the served toolsets that hold t.
func (c *catalog) toolsetsOf(t *toolgen.Tool) []string {
	var out []string
	for _, name := range c.toolsetNames {
		if c.members[name][t.Name] {
			out = append(out, name)
		}
	}
	return out
}
