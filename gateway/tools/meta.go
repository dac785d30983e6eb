package tools

// The gateway's own tools of the toolsets and search tool modes: they let
// a model find its way through an API too big to list at once. They
// answer from the connection's view (surface.go), so they never show or
// run more than tools/list in the all mode would.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// Bounds of search_operations.
const (
	defaultSearchLimit = 10
	maxSearchLimit     = 25
)

var (
	readOnly, notReadOnly  = true, false
	openWorld, closedWorld = true, false
)

// metaTools are the gateway's own tools of the two modes, made once per
// Feature (their descriptions held to its max_description).
type metaTools struct{ toolsets, search []*toolgen.Tool }

func newMetaTools(maxDesc int) *metaTools {
	trim := func(s string) string { return toolgen.TruncateText(s, maxDesc) }
	mk := func(name, title, desc, schema string, ro, world bool) *toolgen.Tool {
		idempotent, destructive := ro, false
		if name == toolgen.ToolCallOperation {
			destructive = true // it may call any operation
		}
		return &toolgen.Tool{Name: name, Title: title, Description: trim(desc), InputSchema: json.RawMessage(schema),
			Annotations: &toolgen.Annotations{Title: title, ReadOnlyHint: &ro, DestructiveHint: &destructive, IdempotentHint: &idempotent, OpenWorldHint: &world}}
	}
	const nameArg = `{"type":"string","minLength":1,"maxLength":128,`
	m := &metaTools{
		toolsets: []*toolgen.Tool{
			mk(toolgen.ToolListToolsets, "List available toolsets",
				"Lists the groups of tools (toolsets) this API offers, with what each is for, how many tools it has and whether it is enabled. Enable one with enable_toolset to get its tools.",
				`{"type":"object","properties":{},"additionalProperties":false}`, readOnly, closedWorld),
			mk(toolgen.ToolToolsetTools, "Get a toolset's tools",
				"Lists the tools of one toolset (name, title, description) without enabling it.",
				`{"type":"object","properties":{"toolset":`+nameArg+`"description":"The toolset's name, as list_available_toolsets gives it."}},"required":["toolset"],"additionalProperties":false}`, readOnly, closedWorld),
			mk(toolgen.ToolEnableToolset, "Enable a toolset",
				"Adds the tools of a toolset to this session's tool list (the list changes; list the tools again to see them).",
				`{"type":"object","properties":{"toolset":`+nameArg+`"description":"The toolset's name, as list_available_toolsets gives it."}},"required":["toolset"],"additionalProperties":false}`, notReadOnly, closedWorld),
		},
		search: []*toolgen.Tool{
			mk(toolgen.ToolSearch, "Search operations",
				"Finds the API operations that match a plain-language task (\"merge a pull request\"), best first, with their name, HTTP method, path and summary. Then describe_operation gives one's arguments, and call_operation runs it.",
				`{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":512,"description":"What you want to do, in a few words."},"limit":{"type":"integer","minimum":1,"maximum":`+fmt.Sprint(maxSearchLimit)+`,"default":`+fmt.Sprint(defaultSearchLimit)+`,"description":"How many operations to return."}},"required":["query"],"additionalProperties":false}`, readOnly, closedWorld),
			mk(toolgen.ToolDescribe, "Describe an operation",
				"Gives one operation's description, HTTP method and path, and the JSON Schemas of its arguments (inputSchema) and result (outputSchema).",
				`{"type":"object","properties":{"name":`+nameArg+`"description":"The operation's name, as search_operations gives it."}},"required":["name"],"additionalProperties":false}`, readOnly, closedWorld),
			mk(toolgen.ToolCallOperation, "Call an operation",
				"Runs one operation with its arguments, which must match the inputSchema describe_operation gives; the result is the operation's.",
				`{"type":"object","properties":{"name":`+nameArg+`"description":"The operation's name, as search_operations gives it."},"arguments":{"type":"object","description":"The operation's arguments.","additionalProperties":true}},"required":["name"],"additionalProperties":false}`, notReadOnly, openWorld),
		},
	}
	m.toolsets[2].Annotations.IdempotentHint = &readOnly // enabling twice is enabling once
	return m
}

// isMeta reports whether name is one of mode's own tools.
func isMeta(mode, name string) bool {
	switch mode {
	case mcp.ToolModeToolsets:
		return name == toolgen.ToolListToolsets || name == toolgen.ToolToolsetTools || name == toolgen.ToolEnableToolset
	case mcp.ToolModeSearch:
		return name == toolgen.ToolSearch || name == toolgen.ToolDescribe || name == toolgen.ToolCallOperation
	}
	return false
}

// metaCall runs one of the gateway's own tools (call_operation aside:
// call unwraps it).
func (f *Feature) metaCall(r *mcp.Request, c *catalog, s mcp.Surface, name string, args json.RawMessage) (any, error) {
	var p struct {
		Toolset *string `json:"toolset"`
		Query   *string `json:"query"`
		Limit   *int    `json:"limit"`
		Name    *string `json:"name"`
	}
	if a := trimmed(args); len(a) > 0 && json.Unmarshal(a, &p) != nil {
		return f.metaResult(r, mcp.ErrorResult(fmt.Sprintf("invalid arguments for %s: they must be an object matching its inputSchema", name))), nil
	}
	v := f.view(c, r, s)
	switch name {
	case toolgen.ToolListToolsets:
		type entry struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Tools       int    `json:"tools"`
			Enabled     bool   `json:"enabled"`
		}
		enabled := enabledSet(s)
		all := f.view(c, r, availableSurface(s))
		out := []entry{}
		for _, tsName := range c.toolsetNames {
			n := countIn(c.toolsets[tsName], all)
			if n == 0 {
				continue // nothing in it this connection may use
			}
			out = append(out, entry{Name: tsName, Description: c.toolsets[tsName].Description, Tools: n, Enabled: enabled[tsName]})
		}
		return f.structured(r, map[string]any{"toolsets": out})
	case toolgen.ToolToolsetTools:
		ts, err := f.toolsetArg(c, p.Toolset)
		if err != nil {
			return f.metaResult(r, mcp.ErrorResult(err.Error())), nil
		}
		type entry struct {
			Name        string `json:"name"`
			Title       string `json:"title,omitempty"`
			Description string `json:"description"`
		}
		all := f.view(c, r, availableSurface(s))
		out := []entry{}
		for _, t := range ts.Tools {
			if all.seen[t.Name] {
				out = append(out, entry{Name: t.Name, Title: t.Title, Description: t.Description})
			}
		}
		return f.structured(r, map[string]any{"toolset": ts.Name, "tools": out})
	case toolgen.ToolEnableToolset:
		ts, err := f.toolsetArg(c, p.Toolset)
		if err != nil {
			return f.metaResult(r, mcp.ErrorResult(err.Error())), nil
		}
		if r.SessionID == "" || f.sessions == nil {
			return f.metaResult(r, mcp.ErrorResult(fmt.Sprintf(
				"this request has no session to remember an enabled toolset: select toolsets per request instead, with the header X-MCP-Toolsets: %s (several: comma-separated) or the path .../x/%s of this endpoint",
				ts.Name, ts.Name))), nil
		}
		if s.Toolsets != nil && !slices.Contains(s.Toolsets, ts.Name) {
			return f.metaResult(r, mcp.ErrorResult(fmt.Sprintf("toolset %s is not available on this connection: it was opened for %s only", ts.Name, strings.Join(s.Toolsets, ", ")))), nil
		}
		if enabledSet(s)[ts.Name] {
			return f.structured(r, map[string]any{"toolset": ts.Name, "enabled": true, "changed": false,
				"message": fmt.Sprintf("toolset %s is already enabled", ts.Name)})
		}
		now, err := f.sessions.Enable(r, []string{ts.Name})
		if err != nil {
			return nil, err
		}
		r.Surface.Enabled = now
		added := len(f.view(c, r, f.surfaceOf(c, r)).shown) - len(v.shown)
		return f.structured(r, map[string]any{"toolset": ts.Name, "enabled": true, "changed": true, "toolsAdded": added,
			"message": fmt.Sprintf("enabled toolset %s: %d tools added; the tool list changed, list the tools again to see them", ts.Name, added)})
	case toolgen.ToolSearch:
		if p.Query == nil || strings.TrimSpace(*p.Query) == "" {
			return f.metaResult(r, mcp.ErrorResult("search_operations needs a query: a few words saying what you want to do")), nil
		}
		limit := defaultSearchLimit
		if p.Limit != nil {
			limit = min(max(*p.Limit, 1), maxSearchLimit)
		}
		type hit struct {
			Name    string `json:"name"`
			Method  string `json:"method"`
			Path    string `json:"path"`
			Summary string `json:"summary"`
		}
		out := []hit{}
		// The index knows every tool; keep the ones this connection sees.
		for _, h := range c.searchIndex().Search(*p.Query, len(c.Tools.Tools())) {
			if !v.seen[h.Tool.Name] {
				continue
			}
			m, path := h.Tool.Route()
			out = append(out, hit{Name: h.Tool.Name, Method: m, Path: path, Summary: cmpOr(h.Tool.Title, h.Tool.Description)})
			if len(out) == limit {
				break
			}
		}
		return f.structured(r, map[string]any{"operations": out})
	case toolgen.ToolDescribe:
		if p.Name == nil || *p.Name == "" {
			return f.metaResult(r, mcp.ErrorResult("describe_operation needs the operation's name, as search_operations gives it")), nil
		}
		t, ok := v.ops[*p.Name]
		if !ok || !v.seen[t.Name] {
			return f.metaResult(r, mcp.ErrorResult(fmt.Sprintf("no operation named %q; search_operations finds operations by what they do", mcp.Truncate(*p.Name)))), nil
		}
		shown := t
		if s.SchemaRefs == mcp.SchemaRefsInline {
			shown = c.inlined(t)
		}
		m, path := t.Route()
		d := map[string]any{"name": t.Name, "title": t.Title, "description": t.Description, "method": m, "path": path,
			"inputSchema": shown.InputSchema, "annotations": shown.Annotations}
		if len(shown.OutputSchema) > 0 {
			d["outputSchema"] = shown.OutputSchema
		}
		return f.structured(r, d)
	}
	return nil, mcp.InvalidParams("Unknown tool: %q", name)
}

// availableSurface is s in the all mode: what the connection may enable
// (toolsets it named bound that too: a connection cannot widen itself).
func availableSurface(s mcp.Surface) mcp.Surface {
	if s.ToolMode == mcp.ToolModeToolsets {
		s.ToolMode, s.Enabled = mcp.ToolModeAll, nil
	}
	return s
}

// countIn counts the tools of ts in the view all.
func countIn(ts *toolgen.Toolset, all *surfaceView) int {
	n := 0
	for _, t := range ts.Tools {
		if all.seen[t.Name] {
			n++
		}
	}
	return n
}

func enabledSet(s mcp.Surface) map[string]bool {
	out := map[string]bool{}
	if s.ToolMode == mcp.ToolModeToolsets {
		for _, n := range s.Toolsets {
			out[n] = true
		}
		for _, n := range s.Enabled {
			out[n] = true
		}
	}
	return out
}

// toolsetArg resolves the toolset argument.
func (f *Feature) toolsetArg(c *catalog, name *string) (*toolgen.Toolset, error) {
	if name == nil || *name == "" {
		return nil, fmt.Errorf("needs the toolset's name; list_available_toolsets lists them")
	}
	ts, ok := c.toolsets[strings.ToLower(strings.TrimSpace(*name))]
	if !ok {
		return nil, fmt.Errorf("no toolset named %q; it is one of: %s", mcp.Truncate(*name), listSome(c.toolsetNames, 40))
	}
	return ts, nil
}

// structured is a meta tool's answer: v as structuredContent and as text.
func (f *Feature) structured(r *mcp.Request, v any) (any, error) {
	raw, err := mcp.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("tools: encode a meta tool's result: %w", err)
	}
	res := mcp.TextResult(string(raw))
	res.StructuredContent = raw
	return f.metaResult(r, res), nil
}

func (f *Feature) metaResult(r *mcp.Request, res *mcp.CallToolResult) *mcp.PooledResult {
	res.ResultMeta = r.StampResult(false)
	return mcp.Pooled(res)
}

// unwrapCallOperation reads call_operation's arguments: the operation's
// name and its own arguments.
func unwrapCallOperation(args json.RawMessage) (string, json.RawMessage, error) {
	var p struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if a := trimmed(args); len(a) > 0 && json.Unmarshal(a, &p) != nil {
		return "", nil, fmt.Errorf("call_operation's arguments must be an object with name and arguments")
	}
	if p.Name == nil || *p.Name == "" {
		return "", nil, fmt.Errorf("call_operation needs the operation's name, as search_operations gives it")
	}
	if a := trimmed(p.Arguments); len(a) > 0 && a[0] != '{' && string(a) != "null" {
		return "", nil, fmt.Errorf("call_operation's arguments must be an object (the operation's arguments)")
	}
	return *p.Name, p.Arguments, nil
}

func trimmed(b json.RawMessage) json.RawMessage {
	return json.RawMessage(strings.TrimSpace(string(b)))
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
