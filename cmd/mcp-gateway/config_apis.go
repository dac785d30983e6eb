package main

// Large APIs and several APIs: toolsets, read-only mode, tool modes,
// schema dialects, and the apis list, each entry one API on its own
// endpoint (or sharing one, with tool_prefix). The top-level settings of
// one API are the shorthand for a one-entry list; an entry inherits
// every top-level setting it does not set itself, except those only an
// entry may set (apiOnly: its operations' selection and its backend's
// credentials).

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

type apisConfig struct {
	ToolsetsEnabled []string
	ReadOnly        bool
	ToolMode        string
	SchemaRefs      string
	ToolPrefix      string
	Toolsets        []toolgen.ToolsetSpec
	// APIs are the apis entries, resolved: each a whole configuration.
	// Nil: the top-level settings are the one API.
	APIs []*apiEntry
	// apisRaw is the YAML list, applied once flags and env are.
	apisRaw []any
}

// apiEntry is one API of the apis list.
type apiEntry struct {
	Name string
	cfg  *config
}

// entryNames are the entries' names, in their order.
func entryNames(entries []*apiEntry) []string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return names
}

var apiOptions = []option{
	{key: "toolsets_enabled", flag: "toolsets", env: "MCPGW_TOOLSETS", tools: true, repeat: true,
		usage: "the toolsets served (comma-separated; default all): one per OpenAPI tag (sanitized, lower case), \"default\" for operations without one, and those toolsets declares",
		set:   list(func(c *config) *[]string { return &c.ToolsetsEnabled })},
	{key: "read_only", tools: true, def: "false", isBool: true,
		usage: "serve only operations with safe methods (GET, HEAD, OPTIONS); an explicit include replaces this allow-list instead of adding to it",
		set:   boolean(func(c *config) *bool { return &c.ReadOnly })},
	{key: "tool_mode", def: "all",
		usage: "how tools are offered: all (one per operation), toolsets (list_available_toolsets, get_toolset_tools, enable_toolset; a session enables toolsets) or search (search_operations, describe_operation, call_operation); a client may ask for another with X-MCP-Tool-Mode",
		set:   oneOf([]string{"all", "toolsets", "search"}, func(c *config) *string { return &c.ToolMode })},
	{key: "schema_refs", tools: true, def: "defs",
		usage: "how tool schemas share subschemas: defs ($defs and $ref) or inline (every $ref inlined, recursive ones cut, for model providers that reject $ref); a client may ask with X-MCP-Schema-Refs",
		set:   oneOf([]string{"defs", "inline"}, func(c *config) *string { return &c.SchemaRefs })},
	{key: "tool_prefix", tools: true,
		usage: "put before every tool name (letters, digits, _ and -, at most 24): keeps names apart when several APIs share one mount_path",
		set:   str(func(c *config) *string { return &c.ToolPrefix })},
}

var apiListOptions = []listOption{
	{key: "toolsets", usage: "declared toolsets besides one per tag: [{name, description, tools: [globs over tool name, operationId, tag or path]}]; one named like a tag replaces it",
		set: func(c *config, raw any) error {
			items, err := decodeList("toolsets", raw, toolsetFields)
			if err != nil {
				return err
			}
			c.Toolsets = items
			return nil
		}},
	{key: "apis", usage: "several APIs on one gateway: [{name, openapi, upstream, mount_path, tool_prefix, …}]; each entry takes the per-API settings and inherits the top-level ones it does not set",
		set: func(c *config, raw any) error {
			list, ok := raw.([]any)
			if !ok || len(list) == 0 {
				return &pathError{path: "apis", reason: "must be a non-empty list of objects"}
			}
			c.apisRaw = list
			return nil
		}},
}

var toolsetFields = []listField[toolgen.ToolsetSpec]{
	{key: "name", required: true, usage: "the toolset's name: lower-case letters, digits, _ and -",
		set: str(func(t *toolgen.ToolsetSpec) *string { return &t.Name })},
	{key: "description", usage: "what the toolset is for (list_available_toolsets shows it)",
		set: str(func(t *toolgen.ToolsetSpec) *string { return &t.Description })},
	{key: "tools", required: true, usage: "globs over tool name, operationId, tag or path",
		set: list(func(t *toolgen.ToolsetSpec) *[]string { return &t.Tools })},
}

// perAPIKeys are the settings an apis entry may set: those of its
// document, its tools and its backend.
var perAPIKeys = []string{
	"openapi", "upstream", "mount_path", "tool_prefix", "include", "exclude", "read_only", "toolsets_enabled", "toolsets",
	"tool_mode", "schema_refs", "max_description", "max_schema_bytes", "output_schema", "openapi_timeout", "openapi_max_bytes",
	"openapi_ref_allow", "openapi_reload_interval", "resource_operations", "confirm", "operations", "resources", "prompts",
	"backend_timeout", "backend_max_response_bytes", "backend_headers", "backend_api_keys", "backend_bearer_token",
	"backend_bearer_token_file", "backend_bearer_always", "backend_error_body", "max_request_url_bytes",
	"backend_oauth_token_url", "backend_oauth_client_id", "backend_oauth_client_secret_file", "backend_oauth_scopes",
	"backend_token_exchange_url", "backend_token_exchange_audience", "legacy_sse_path", "legacy_messages_path",
}

func init() {
	options = append(options, apiOptions...)
	listOptions = append(listOptions, apiListOptions...)
}

// resolveAPIs turns the apis list into whole configurations: a copy of
// the top-level one (flags and env applied) with the entry's settings on
// top. It checks names and mount paths.
func (c *config) resolveAPIs(file string) error {
	if c.apisRaw == nil {
		return nil
	}
	bad := func(key, reason string) error { return &configError{key: key, source: file, reason: reason} }
	switch {
	case c.Demo:
		return bad("apis", "--demo serves one API of its own; do not also set apis")
	case c.OpenAPI != "":
		return bad("apis", "set openapi in each apis entry, not at the top level too")
	case len(c.Resources) > 0 || len(c.Prompts) > 0 || len(c.Operations) > 0:
		return bad("apis", "resources, prompts and operations belong to an API: set them in its apis entry")
	}
	// What names one document's operations, and the credentials of one
	// backend, are never shared by every API: a top-level one is an
	// error rather than a token sent to every backend.
	if keys := apiOnly(c); len(keys) > 0 {
		return bad(keys[0], "with apis this belongs to an API: set it in the apis entry it is for")
	}
	seen := map[string]int{}
	for i, rawItem := range c.apisRaw {
		at := fmt.Sprintf("apis[%d]", i)
		obj, ok := rawItem.(map[string]any)
		if !ok {
			return bad(at, "must be an object")
		}
		name, _ := obj["name"].(string)
		switch {
		case name == "":
			return bad(at+".name", "required")
		case toolgen.ToolsetName(name) != name:
			return bad(at+".name", fmt.Sprintf("%q must be lower-case letters, digits, _ and -", name))
		}
		if j, dup := seen[name]; dup {
			return bad(at+".name", fmt.Sprintf("%q is already apis[%d]", name, j))
		}
		seen[name] = i
		if _, ok := obj["openapi"]; !ok {
			return bad(at+".openapi", "required")
		}
		ec := *c
		ec.apisRaw, ec.APIs = nil, nil
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "name" {
				continue
			}
			if !slices.Contains(perAPIKeys, k) {
				return bad(at+"."+k, "not a per-API setting (an entry takes: name, "+strings.Join(perAPIKeys, ", ")+"); set it at the top level")
			}
			if err := setKey(&ec, k, obj[k]); err != nil {
				return keyError(err, k, at+".", file)
			}
		}
		if err := ec.validate(); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		c.APIs = append(c.APIs, &apiEntry{Name: name, cfg: &ec})
	}
	return nil
}

// apiOnly names the settings set at c's top level that only an apis
// entry may set.
func apiOnly(c *config) []string {
	var out []string
	for _, f := range []struct {
		key string
		set bool
	}{
		{"upstream", c.Upstream != ""},
		{"include", len(c.Include) > 0},
		{"exclude", len(c.Exclude) > 0},
		{"resource_operations", len(c.ResourceOperations) > 0},
		{"confirm", len(c.Confirm) > 0},
		{"toolsets", len(c.Toolsets) > 0},
		{"toolsets_enabled", len(c.ToolsetsEnabled) > 0},
		{"tool_prefix", c.ToolPrefix != ""},
		{"backend_headers", len(c.BackendHeaders) > 0},
		{"backend_api_keys", len(c.BackendAPIKeys) > 0},
		{"backend_bearer_token", c.BackendBearerToken != ""},
		{"backend_bearer_token_file", c.BackendBearerFile != ""},
		{"backend_bearer_always", c.BackendBearerAlways},
		{"backend_oauth_token_url", c.BackendOAuthTokenURL != ""},
		{"backend_oauth_client_id", c.BackendOAuthClientID != ""},
		{"backend_oauth_client_secret_file", c.BackendOAuthSecretFile != ""},
		{"backend_oauth_scopes", len(c.BackendOAuthScopes) > 0},
		{"backend_token_exchange_url", c.BackendTokenExchangeURL != ""},
		{"backend_token_exchange_audience", c.BackendTokenExchangeAudience != ""},
	} {
		if f.set {
			out = append(out, f.key)
		}
	}
	return out
}

// errUnknownKey: no setting has the key.
var errUnknownKey = errors.New("unknown key")

// setKey sets one YAML key of c, as the file does: a list setting's
// error is a *pathError naming the item; a null value leaves the setting
// as it is (a known key only).
func setKey(c *config, key string, raw any) error {
	if j := slices.IndexFunc(listOptions, func(o listOption) bool { return o.key == key }); j >= 0 {
		if raw == nil {
			return nil
		}
		return listOptions[j].set(c, raw)
	}
	i := slices.IndexFunc(options, func(o option) bool { return o.key == key && !o.noYAML })
	if i < 0 {
		return errUnknownKey
	}
	if raw == nil {
		return nil
	}
	return options[i].set(c, raw)
}

// keyError is setKey's error as the configuration error of key, its
// path after at ("" at the top level, "apis[0]." in an entry).
func keyError(err error, key, at, file string) error {
	var pe *pathError
	if errors.As(err, &pe) {
		return &configError{key: at + pe.path, source: file, reason: pe.reason}
	}
	return &configError{key: at + key, source: file, reason: err.Error()}
}

// apiConfigs are the configurations of the APIs served: the entries of
// apis, or the top level as the one API (named "").
func (c *config) apiConfigs() []*apiEntry {
	if len(c.APIs) > 0 {
		return c.APIs
	}
	return []*apiEntry{{cfg: c}}
}

// api finds the entry named name (tools --api).
func (c *config) api(name string) (*apiEntry, error) {
	var names []string
	for _, e := range c.APIs {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	if len(names) == 0 {
		return nil, &configError{key: "--api", source: "command line", reason: "the configuration has no apis list"}
	}
	return nil, &configError{key: "--api", source: "command line", reason: fmt.Sprintf("no API named %q (the apis list has: %s)", name, strings.Join(names, ", "))}
}

// endpointGroups are the APIs by mount path, in the order first named:
// one endpoint each. APIs that share a mount path share its
// endpoint-wide settings: they must agree on them.
func (c *config) endpointGroups() ([][]*apiEntry, error) {
	var groups [][]*apiEntry
	at := map[string]int{}
	for _, e := range c.apiConfigs() {
		i, ok := at[e.cfg.MountPath]
		if !ok {
			at[e.cfg.MountPath] = len(groups)
			groups = append(groups, []*apiEntry{e})
			continue
		}
		first := groups[i][0].cfg
		for _, k := range []struct {
			key  string
			same bool
		}{
			{"tool_mode", first.ToolMode == e.cfg.ToolMode},
			{"schema_refs", first.SchemaRefs == e.cfg.SchemaRefs},
			{"toolsets_enabled", slices.Equal(first.ToolsetsEnabled, e.cfg.ToolsetsEnabled)},
			{"legacy_sse_path", first.LegacySSEPath == e.cfg.LegacySSEPath},
			{"legacy_messages_path", first.LegacyMessagesPath == e.cfg.LegacyMessagesPath},
			{"max_description", first.MaxDescription == e.cfg.MaxDescription},
		} {
			if !k.same {
				return nil, &configError{key: "apis", source: c.fileName(), reason: fmt.Sprintf("apis %s and %s share mount_path %s but not %s: APIs on one endpoint share its %s",
					groups[i][0].Name, e.Name, e.cfg.MountPath, k.key, k.key)}
			}
		}
		groups[i] = append(groups[i], e)
	}
	return groups, nil
}
