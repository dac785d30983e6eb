package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestToolsSubcommandPrintsWhatToolsListReturns(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"tools", "--demo", "--format", "json"}, &out, &errOut, env(nil))
	require.Equal(t, exitOK, code, errOut.String())
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &list))
	require.NotEmpty(t, list.Tools)
	for _, tool := range list.Tools {
		require.NotEmpty(t, tool.Name)
		require.NotEmpty(t, tool.Description)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(tool.InputSchema, &schema))
		require.Equal(t, "object", schema["type"])
	}

	out.Reset()
	code = run(t.Context(), []string{"tools", "--demo", "--format=table"}, &out, &errOut, env(nil))
	require.Equal(t, exitOK, code)
	require.Contains(t, out.String(), "getNote")
	require.Contains(t, out.String(), "GET /notes/{id}")
}

func TestToolsSubcommandErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, exitConfig, run(t.Context(), []string{"tools", "--demo", "--format", "xml"}, &out, &errOut, env(nil)))
	require.Contains(t, errOut.String(), "--format")

	// A document that does not load: exit 1 with the file named; no upstream is needed.
	f := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(f, []byte("openapi: 3.0.3\npaths: {\n"), 0o600))
	errOut.Reset()
	require.Equal(t, exitFailure, run(t.Context(), []string{"tools", "--openapi", f}, &out, &errOut, env(nil)))
	require.True(t, strings.Contains(errOut.String(), "bad.yaml"), errOut.String())
}

func TestToolsSubcommandLogsTheDocumentsWarnings(t *testing.T) {
	f := filepath.Join(t.TempDir(), "odd.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`openapi: 3.0.3
info: {title: odd, version: "1"}
paths:
  /a:
    get:
      summary: kin-openapi rejects a pattern Go cannot compile
      parameters:
        - {name: q, in: query, schema: {type: string, pattern: "(?<=a)b"}}
      responses: {"200": {description: ok}}
    post:
      responses: {"200": {description: ok}}
`), 0o600))
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run(t.Context(), []string{"tools", "--openapi", f}, &out, &errOut, env(nil)), errOut.String())
	require.Contains(t, errOut.String(), "at=paths./a.get", "kin-openapi's validation finding")
	require.Contains(t, errOut.String(), "neither summary nor description", "the document's own check")
}

func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"tools", "--version"}, {"--demo", "--version"}} {
		var out, errOut bytes.Buffer
		require.Equal(t, exitOK, run(t.Context(), args, &out, &errOut, env(nil)), errOut.String())
		require.Equal(t, "mcp-gateway "+version+"\n", out.String())
	}
}

// tools --help lists the flags the subcommand reads, and no server-only one.
func TestToolsHelpListsItsOwnFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run(t.Context(), []string{"tools", "--help"}, &out, &errOut, env(nil)))
	help := errOut.String()
	require.Contains(t, help, "Usage: mcp-gateway tools (--openapi DOC | --demo)")
	require.NotContains(t, help, "tools tools")
	for _, flag := range []string{"--format", "--version", "--openapi", "--demo", "--include", "--exclude", "--max-description", "--page-size", "--config"} {
		require.Contains(t, help, "  "+flag+"\n", "tools --help lacks %s", flag)
	}
	for _, o := range options {
		if !o.tools {
			require.NotContains(t, help, "  --"+o.flagName()+"\n", "tools --help lists the server-only %s", o.flagName())
		}
	}

	errOut.Reset()
	require.Equal(t, exitOK, run(t.Context(), []string{"--help"}, &out, &errOut, env(nil)))
	for _, o := range options {
		require.Contains(t, errOut.String(), "  --"+o.flagName()+"\n")
	}
}

func TestToolsJSONSaysHowTheServerPages(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run(t.Context(), []string{"tools", "--demo", "--format", "json", "--page-size", "4"}, &out, &errOut, env(nil)))
	require.Contains(t, errOut.String(), "this is all 11 tools in one list; the server answers tools/list in 3 pages (page_size 4")
}
