package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gw.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

func TestConfigDefaults(t *testing.T) {
	c, _, err := loadConfig("t", []string{"--demo"}, env(nil), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8080", c.Listen)
	require.Equal(t, "/mcp", c.MountPath)
	require.Equal(t, 30*time.Minute, c.SessionTTL)
	require.True(t, c.SessionDelete)
	require.Equal(t, int64(4<<20), c.MaxBodyBytes)
	require.Equal(t, 100, c.PageSize)
}

func TestConfigPrecedenceFlagsOverEnvOverFile(t *testing.T) {
	file := writeFile(t, "openapi: from-file.yaml\nlisten: 127.0.0.1:1111\npage_size: 7\nsession_ttl: 1m\nbackend_headers: {X-A: one, X-B: two}\ninclude: [a*, b*]\n")
	c, _, err := loadConfig("t", []string{"--config", file, "--listen", "127.0.0.1:3333"},
		env(map[string]string{"MCPGW_LISTEN": "127.0.0.1:2222", "MCPGW_PAGE_SIZE": "9"}), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, "from-file.yaml", c.OpenAPI)
	require.Equal(t, "127.0.0.1:3333", c.Listen, "flag beats env and file")
	require.Equal(t, 9, c.PageSize, "env beats file")
	require.Equal(t, time.Minute, c.SessionTTL, "file beats default")
	require.Equal(t, map[string]string{"X-A": "one", "X-B": "two"}, c.BackendHeaders)
	require.Equal(t, []string{"a*", "b*"}, c.Include)
}

func TestConfigListsAndMapsFromFlagsAndEnv(t *testing.T) {
	c, _, err := loadConfig("t", []string{"--demo", "--backend-headers", "X-A=1", "--backend-headers", "X-B=a%2Cb", "--exclude", "x,y"},
		env(map[string]string{"MCPGW_ALLOWED_ORIGINS": "https://a.example, https://b.example"}), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"X-A": "1", "X-B": "a,b"}, c.BackendHeaders)
	require.Equal(t, []string{"x", "y"}, c.Exclude)
	require.Equal(t, []string{"https://a.example", "https://b.example"}, c.AllowedOrigins)
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		file string
		want string
	}{
		{"no document", nil, nil, "", "openapi"},
		{"bad listen", []string{"--demo", "--listen", "nope"}, nil, "", "--listen"},
		{"bad env duration", []string{"--demo"}, map[string]string{"MCPGW_SESSION_TTL": "soon"}, "", "MCPGW_SESSION_TTL"},
		{"bad size", []string{"--demo", "--max-body-bytes", "lots"}, nil, "", "--max-body-bytes"},
		{"unknown yaml key", []string{"--demo"}, nil, "demo: true\nlisten_addr: x\n", "listen_addr"},
		{"bad yaml type", []string{}, nil, "demo: true\npage_size: [1]\n", "page_size"},
		{"demo and openapi", []string{"--demo", "--openapi", "x.yaml"}, nil, "", "demo"},
		{"bad upstream", []string{"--openapi", "x", "--upstream", "ftp://x"}, nil, "", "--upstream"},
		{"bad log level", []string{"--demo", "--log-level", "loud"}, nil, "", "--log-level"},
		{"bad mount path", []string{"--demo", "--mount-path", "mcp"}, nil, "", "--mount-path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				args = append(args, "--config", writeFile(t, tc.file))
			}
			_, _, err := loadConfig("t", args, env(tc.env), &bytes.Buffer{})
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

func TestInvalidConfigExitsWith2AndOneLine(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"--demo", "--page-size", "0"}, &out, &errOut, env(nil))
	require.Equal(t, exitConfig, code)
	require.Equal(t, 1, strings.Count(errOut.String(), "\n"), errOut.String())
	require.Contains(t, errOut.String(), "--page-size")
}

// Every option is documented in the README and the example config.
func TestEveryOptionIsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	example, err := os.ReadFile("../../configs/gateway.example.yaml")
	require.NoError(t, err)
	for _, o := range options {
		require.Contains(t, string(readme), "`--"+o.flagName()+"`", "README lacks the flag of %s", o.key)
		require.Contains(t, string(readme), "`"+o.envName()+"`", "README lacks the env of %s", o.key)
		if !o.noYAML {
			require.Contains(t, string(readme), "`"+o.key+"`", "README lacks the YAML key %s", o.key)
			require.Contains(t, string(example), "\n"+o.key+":", "example config lacks %s", o.key)
		}
	}
	for _, o := range listOptions {
		require.Contains(t, string(readme), "`"+o.key+"`", "README lacks the YAML key %s", o.key)
		require.Contains(t, string(example), o.key+":", "example config lacks %s", o.key)
	}
	for _, f := range operationFields {
		require.Contains(t, string(readme), "`"+f.key+"`", "README lacks operations[].%s", f.key)
	}
	// And the example config itself is valid (apart from the document path).
	c, _, err := loadConfig("t", []string{"--config", "../../configs/gateway.example.yaml"}, env(nil), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, "./openapi.yaml", c.OpenAPI)
}

func TestConfigOperationsFromTheFile(t *testing.T) {
	file := writeFile(t, "demo: true\noperations:\n  - tool: getNote\n    backend_timeout: 5s\n  - tool: listNotes\n")
	c, _, err := loadConfig("t", []string{"--config", file}, env(nil), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, []operationSetting{{Tool: "getNote", BackendTimeout: 5 * time.Second}, {Tool: "listNotes"}}, c.Operations)
	timeouts, err := checkOperations(c, func(string) bool { return true })
	require.NoError(t, err)
	require.Equal(t, map[string]time.Duration{"getNote": 5 * time.Second}, timeouts)
}

// A list setting's errors name the key path of the item and field.
func TestConfigListErrorsNameTheKeyPath(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"operations: {tool: a}", "operations (%s): must be a list of objects"},
		{"operations: [getNote]", "operations[0] (%s): must be an object"},
		{"operations: [{backend_timeout: 5s}]", "operations[0].tool (%s): required"},
		{"operations: [{tool: a}, {tool: ''}]", "operations[1].tool (%s): required"},
		{"operations: [{tool: a, timeout: 5s}]", "operations[0].timeout (%s): unknown key (known: tool, backend_timeout)"},
		{"operations: [{tool: a}, {tool: b, backend_timeout: soon}]", `operations[1].backend_timeout (%s): must be a duration such as 30s or 5m, got "soon"`},
		{"operations: [{tool: a, backend_timeout: 0s}]", "operations[0].backend_timeout (%s): must be more than 0"},
		{"operations: [{tool: a}, {tool: a}]", `operations[1].tool (%s): "a" is already configured by operations[0]`},
	} {
		t.Run(tc.yaml, func(t *testing.T) {
			file := writeFile(t, "demo: true\n"+tc.yaml+"\n")
			_, _, err := loadConfig("t", []string{"--config", file}, env(nil), &bytes.Buffer{})
			require.Error(t, err)
			require.Contains(t, err.Error(), strings.Replace(tc.want, "%s", file, 1))
		})
	}
}

// An operation the document does not have stops the gateway (and the tools
// subcommand) with exit 2 and the key path.
func TestConfigOperationsMustNameATool(t *testing.T) {
	file := writeFile(t, "demo: true\noperations:\n  - tool: getNote\n  - tool: getNoot\n")
	for _, args := range [][]string{{"--config", file, "--listen", "127.0.0.1:0"}, {"tools", "--config", file}} {
		var out, errOut bytes.Buffer
		code := run(t.Context(), args, &out, &errOut, env(nil))
		require.Equal(t, exitConfig, code, errOut.String())
		require.Contains(t, errOut.String(), `operations[1].tool (`+file+`): no tool named "getNoot"`)
	}
}

// A declared resource or prompt naming a tool the document lacks stops the
// gateway with the entry's key path, once the document is loaded.
func TestConfigContentOperationsMustExist(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"resources:\n  - {uri: 'a://b', name: b, operation: getNoot}\n", `resources[0].operation (%s): no tool named "getNoot"`},
		{"prompts:\n  - {name: p, arguments: [{name: a, values: {operation: listNoots, field: id}}], messages: [{role: user, text: hi}]}\n",
			`prompts[0].arguments[0].values.operation (%s): no tool named "listNoots"`},
		{"prompts:\n  - {name: p, messages: [{role: user, operation: {name: getNoot}}]}\n", `prompts[0].messages[0].operation.name (%s): no tool named "getNoot"`},
		{"resources:\n  - {uri: 'a://b', name: b, operation: deleteNote}\n", `resources[0].operation (%s): "deleteNote" is a DELETE operation: only a GET`},
		{"prompts:\n  - {name: p, arguments: [{name: a, values: {operation: createNote, field: id}}], messages: [{role: user, text: hi}]}\n",
			`prompts[0].arguments[0].values.operation (%s): "createNote" is a POST operation`},
	} {
		file := writeFile(t, "demo: true\nlisten: 127.0.0.1:0\n"+tc.yaml)
		var out, errOut bytes.Buffer
		code := run(t.Context(), []string{"--config", file}, &out, &errOut, env(nil))
		require.Equal(t, exitConfig, code, errOut.String())
		require.Contains(t, errOut.String(), fmt.Sprintf(tc.want, file))
	}
}

// The declared resources and prompts come from the file, file sources
// read at once; a bad entry names its key path.
func TestConfigResourcesAndPrompts(t *testing.T) {
	c, _, err := loadConfig("t", []string{"--config", "../../e2e/conformance.yaml", "--demo"}, env(nil), &bytes.Buffer{})
	require.NoError(t, err)
	require.Len(t, c.Resources, 5)
	require.Equal(t, "test://template/{id}/data", c.Resources[2].URITemplate)
	require.Equal(t, "listNotes", c.Resources[3].Operation)
	require.NotEmpty(t, c.Resources[1].Blob)
	require.Len(t, c.Prompts, 4)
	require.Equal(t, "{{.resourceUri}}", c.Prompts[2].Messages[0].ResourceURI)
	require.Equal(t, "image/png", c.Prompts[3].Messages[0].Image.MIMEType)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/h.md", []byte("# Handbook"), 0o600))
	file := writeFile(t, "demo: true\nresources:\n  - {uri: 'docs://h', name: h, file: '"+dir+"/h.md', mime_type: text/markdown}\n")
	c, _, err = loadConfig("t", []string{"--config", file}, env(nil), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, "# Handbook", *c.Resources[0].Text)

	file = writeFile(t, `demo: true
resources:
  - {uri_template: 'live://notes/{id}', name: n, operation: getNote, arguments: {verbose: true}}
prompts:
  - name: p
    arguments: [{name: id, values: {operation: listNotes, field: id}}]
    messages: [{role: user, operation: {name: getNote, arguments: {id: "{{.id}}", n: 2}}}]
`)
	c, _, err = loadConfig("t", []string{"--config", file}, env(nil), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, "getNote", c.Resources[0].Operation)
	require.Equal(t, map[string]any{"verbose": true}, c.Resources[0].Arguments)
	require.Equal(t, &gateway.PromptValuesFrom{Operation: "listNotes", Field: "id"}, c.Prompts[0].Arguments[0].ValuesFrom)
	require.Equal(t, &gateway.PromptOperation{Name: "getNote", Arguments: map[string]string{"id": "{{.id}}", "n": "2"}}, c.Prompts[0].Messages[0].Operation)

	for _, tc := range []struct{ yaml, want string }{
		{"resources:\n  - {uri: 'a://b', name: b}\n", "resources[0]"},
		{"resources:\n  - {uri: 'a://b', name: b, file: /no/such/file}\n", "resources[0].file"},
		{"resources:\n  - {uri: 'a://b', name: b, blob: '!!'}\n", "resources[0].blob"},
		{"prompts:\n  - {name: p, messages: [{role: system, text: hi}]}\n", "prompts[0].messages"},
		{"prompts:\n  - {name: p, messages: [{role: user, image: {mime_type: image/png}}]}\n", "prompts[0].messages[0].image"},
		{"resources:\n  - {uri: 'a://b', name: b, operation: listNotes, text: x}\n", "needs exactly one of text, blob, file or operation"},
		{"resources:\n  - {uri: 'a://b', name: b, text: x, arguments: {limit: 1}}\n", "resources[0].arguments"},
		{"prompts:\n  - {name: p, arguments: [{name: a, values: {operation: listNotes}}], messages: [{role: user, text: hi}]}\n", "arguments[0].values: field: required"},
		{"prompts:\n  - {name: p, messages: [{role: user, operation: {arguments: {id: '1'}}}]}\n", "messages[0].operation: name: required"},
	} {
		_, _, err := loadConfig("t", []string{"--config", writeFile(t, "demo: true\n"+tc.yaml)}, env(nil), &bytes.Buffer{})
		require.ErrorContains(t, err, tc.want, tc.yaml)
	}
}
