package main

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

func TestConfigLargeAPISettings(t *testing.T) {
	c, _, err := loadConfig("t", []string{"--demo", "--toolsets", "notes, admin", "--read-only", "--tool-mode", "search", "--schema-refs", "inline", "--tool-prefix", "n_"},
		env(nil), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, []string{"notes", "admin"}, c.ToolsetsEnabled)
	require.True(t, c.ReadOnly)
	require.Equal(t, "search", c.ToolMode)
	require.Equal(t, "inline", c.SchemaRefs)
	require.Equal(t, "n_", c.ToolPrefix)

	c, _, err = loadConfig("t", []string{"--demo"}, env(map[string]string{"MCPGW_TOOLSETS": "a,b", "MCPGW_READ_ONLY": "true", "MCPGW_TOOL_MODE": "toolsets"}), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, c.ToolsetsEnabled)
	require.True(t, c.ReadOnly)
	require.Equal(t, "toolsets", c.ToolMode)
	require.Equal(t, "defs", c.SchemaRefs, "the default")

	file := writeFile(t, "demo: true\ntoolsets_enabled: [notes]\ntoolsets:\n  - {name: writes, description: Changes, tools: ['create*', 'delete*']}\n")
	c, _, err = loadConfig("t", []string{"--config", file}, env(nil), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, []string{"notes"}, c.ToolsetsEnabled)
	require.Equal(t, []toolgen.ToolsetSpec{{Name: "writes", Description: "Changes", Tools: []string{"create*", "delete*"}}}, c.Toolsets)

	_, _, err = loadConfig("t", []string{"--demo", "--tool-mode", "lazy"}, env(nil), &bytes.Buffer{})
	require.ErrorContains(t, err, "tool-mode")
}

func TestConfigAPIs(t *testing.T) {
	file := writeFile(t, `
backend_timeout: 7s
redis_prefix: "gw:"
apis:
  - name: pets
    openapi: ./pets.yaml
    mount_path: /pets
    read_only: true
  - name: github
    openapi: ./github.json
    mount_path: /gh
    toolsets_enabled: [repos, pulls]
    tool_mode: toolsets
    backend_timeout: 3s
    backend_headers: {X-Team: platform}
`)
	c, _, err := loadConfig("t", []string{"--config", file, "--page-size", "50"}, env(map[string]string{"MCPGW_BACKEND_TIMEOUT": "9s"}), &bytes.Buffer{})
	require.NoError(t, err)
	require.Len(t, c.APIs, 2)
	pets, gh := c.APIs[0], c.APIs[1]
	require.Equal(t, "pets", pets.Name)
	require.Equal(t, "./pets.yaml", pets.cfg.OpenAPI)
	require.Equal(t, "/pets", pets.cfg.MountPath)
	require.True(t, pets.cfg.ReadOnly)
	require.Equal(t, 50, pets.cfg.PageSize, "an entry inherits the top level, flags included")
	require.Equal(t, "9s", pets.cfg.BackendTimeout.String(), "…and the environment")
	require.Equal(t, "3s", gh.cfg.BackendTimeout.String(), "the entry's own setting wins")
	require.Equal(t, []string{"repos", "pulls"}, gh.cfg.ToolsetsEnabled)
	require.Equal(t, "toolsets", gh.cfg.ToolMode)
	require.Equal(t, "all", pets.cfg.ToolMode)
	require.Equal(t, map[string]string{"X-Team": "platform"}, gh.cfg.BackendHeaders)
	require.Nil(t, pets.cfg.BackendHeaders, "an entry's map is its own")
	groups, err := c.endpointGroups()
	require.NoError(t, err)
	require.Len(t, groups, 2)

	e, err := c.api("github")
	require.NoError(t, err)
	require.Equal(t, gh, e)
	_, err = c.api("nope")
	require.ErrorContains(t, err, `no API named "nope" (the apis list has: pets, github)`)

	for _, tc := range []struct{ yaml, want string }{
		{"openapi: ./x.yaml\napis: [{name: a, openapi: ./a.yaml}]", "set openapi in each apis entry"},
		{"apis: [{openapi: ./a.yaml}]", "apis[0].name"},
		{"apis: [{name: A, openapi: ./a.yaml}]", "must be lower-case"},
		{"apis: [{name: a}]", "apis[0].openapi"},
		{"apis: [{name: a, openapi: ./a.yaml}, {name: a, openapi: ./b.yaml}]", `"a" is already apis[0]`},
		{"apis: [{name: a, openapi: ./a.yaml, listen: '0.0.0.0:1'}]", "apis[0].listen (" + "%s): not a per-API setting"},
		{"apis: [{name: a, openapi: ./a.yaml, tool_mode: lazy}]", "apis[0].tool_mode"},
		{"apis: []", "non-empty list"},
		{"backend_bearer_token: t\napis: [{name: a, openapi: ./a.yaml}]", "backend_bearer_token (%s): with apis this belongs to an API"},
		{"include: [x]\napis: [{name: a, openapi: ./a.yaml}]", "include (%s): with apis this belongs to an API"},
		{"prompts: [{name: p, messages: [{role: user, text: hi}]}]\napis: [{name: a, openapi: ./a.yaml}]", "belong to an API"},
	} {
		f := writeFile(t, tc.yaml)
		_, _, err := loadConfig("t", []string{"--config", f}, env(nil), &bytes.Buffer{})
		require.Error(t, err, tc.yaml)
		want := tc.want
		if bytes.Contains([]byte(want), []byte("%s")) {
			want = fmt.Sprintf(want, f)
		}
		require.ErrorContains(t, err, want, tc.yaml)
	}

	// APIs on one mount path share it, and its endpoint-wide settings.
	f := writeFile(t, "apis:\n  - {name: a, openapi: ./a.yaml, tool_prefix: a_}\n  - {name: b, openapi: ./b.yaml, tool_prefix: b_}\n  - {name: c, openapi: ./c.yaml, mount_path: /c}\n")
	c, _, err = loadConfig("t", []string{"--config", f}, env(nil), &bytes.Buffer{})
	require.NoError(t, err)
	groups, err = c.endpointGroups()
	require.NoError(t, err)
	require.Len(t, groups, 2)
	require.Len(t, groups[0], 2, "a and b share /mcp")
	f = writeFile(t, "apis:\n  - {name: a, openapi: ./a.yaml, tool_prefix: a_}\n  - {name: b, openapi: ./b.yaml, tool_prefix: b_, tool_mode: search}\n")
	c, _, err = loadConfig("t", []string{"--config", f}, env(nil), &bytes.Buffer{})
	require.NoError(t, err)
	_, err = c.endpointGroups()
	require.ErrorContains(t, err, "apis a and b share mount_path /mcp but not tool_mode")
}
