package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The CLI explains itself: --version, tools --help with the flags tools
// reads, and tools --format json saying how the server pages.
func TestBinaryCLI(t *testing.T) {
	bin := gatewayBinary(t)
	for _, args := range [][]string{{"--version"}, {"tools", "--version"}} {
		out, err := exec.Command(bin, args...).Output()
		require.NoError(t, err, "%v", args)
		require.Equal(t, "mcp-gateway dev\n", string(out), "%v", args)
	}
	out, err := exec.Command(bin, "tools", "--help").CombinedOutput()
	require.NoError(t, err)
	require.Contains(t, string(out), "Usage: mcp-gateway tools (--openapi DOC | --demo)")
	require.Contains(t, string(out), "  --format\n")
	require.NotContains(t, string(out), "  --listen\n", "a server-only flag")

	cmd := exec.Command(bin, "tools", "--demo", "--format", "json", "--page-size", "5")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run())
	require.Contains(t, stderr.String(), "the server answers tools/list in 3 pages (page_size 5")
}

const securedDoc = `openapi: 3.0.3
info: {title: secured, version: "1"}
security: [{key: []}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-API-Key}
    tok: {type: http, scheme: bearer}
paths:
  /a:
    get: {operationId: a, summary: a, responses: {"200": {description: ok}}}
  /b:
    get: {operationId: b, summary: b, security: [{tok: []}], responses: {"200": {description: ok}}}
  /c:
    get: {operationId: c, summary: c, security: [], responses: {"200": {description: ok}}}
`

// At startup, one warning per security scheme that operations require and
// no configured credential satisfies, naming the operations; none once the
// credential is configured.
func TestBinaryWarnsOfMissingBackendCredentials(t *testing.T) {
	f := filepath.Join(t.TempDir(), "secured.yaml")
	require.NoError(t, os.WriteFile(f, []byte(securedDoc), 0o600))
	p := startGateway(t, "--openapi", f, "--upstream", "http://127.0.0.1:9", "--listen", freeAddr(t))
	logs := stderrOf(p)
	require.Equal(t, 2, strings.Count(logs, "backend credentials:"), logs)
	require.Contains(t, logs, `security scheme \"key\" (apiKey in header X-API-Key) has no configured credential; set backend_api_keys key=VALUE`)
	require.Contains(t, logs, `scheme=key tools=1 names=a`)
	require.Contains(t, logs, `scheme=tok tools=1 names=b`)

	p = startGateway(t, "--openapi", f, "--upstream", "http://127.0.0.1:9", "--listen", freeAddr(t),
		"--backend-api-keys", "key=k", "--backend-bearer-token", "t")
	require.NotContains(t, stderrOf(p), "backend credentials:")
}

// A 3.0 document with 3.1 schema constructs loads with one warning per
// construct, naming its place.
func TestBinaryWarnsOncePerNewerConstruct(t *testing.T) {
	f := filepath.Join(t.TempDir(), "mixed.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`openapi: 3.0.3
info: {title: mixed, version: "1"}
paths:
  /x:
    post:
      operationId: postX
      summary: x
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                a: {anyOf: [{type: string}, {type: "null"}]}
                b: {type: [integer, "null"]}
      responses:
        "200": {description: ok}
`), 0o600))
	cmd := exec.Command(gatewayBinary(t), "tools", "--openapi", f, "--format", "json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	require.Contains(t, string(out), `"null"`)
	require.Equal(t, 2, strings.Count(stderr.String(), "OpenAPI 3.1 construct in a pre-3.1 document"), stderr.String())
	require.Contains(t, stderr.String(), "at=paths./x.post.requestBody.content.application/json.schema.properties.a.anyOf[1]")
	require.NotContains(t, stderr.String(), "an array of types is for OpenAPI")
}

// The startup says loudly what an unauthenticated public listener means,
// and what identity_header trusts; admin_listen moves metrics and probes
// off the MCP listener.
func TestBinarySecurityStartup(t *testing.T) {
	_, port, _ := strings.Cut(freeAddr(t), ":")
	p := startGateway(t, "--demo", "--listen", "0.0.0.0:"+port, "--identity-header", "X-Forwarded-For")
	logs := stderrOf(p)
	require.Contains(t, logs, "AUTHENTICATION IS OFF on a non-loopback address")
	require.Contains(t, logs, "identity_header is set")

	p = startGateway(t, "--demo", "--listen", freeAddr(t))
	require.NotContains(t, stderrOf(p), "AUTHENTICATION IS OFF", "loopback is the safe default")

	admin := freeAddr(t)
	p = startGateway(t, "--demo", "--listen", freeAddr(t), "--admin-listen", admin)
	base := strings.TrimSuffix(p.url, "/mcp")
	for path, want := range map[string]int{"/metrics": 404, "/healthz": 404, "/readyz": 404} {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, "MCP listener %s", path)
		resp, err = http.Get("http://" + admin + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, "admin listener %s", path)
	}
}

// A document fetched by URL cannot send the gateway's backend
// credentials to another host: its servers must be on its own origin
// unless upstream is set.
func TestBinaryRefusesAForeignDefaultUpstream(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://attacker.example/api"}]
paths:
  /a:
    get: {operationId: a, summary: a, responses: {"200": {description: ok}}}
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write([]byte(doc))
	}))
	defer srv.Close()
	out, err := exec.Command(gatewayBinary(t), "--openapi", srv.URL+"/openapi.yaml", "--listen", freeAddr(t)).CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	require.Equal(t, 2, exit.ExitCode(), "%s", out)
	require.Contains(t, string(out), "http://attacker.example/api is not on the document's origin "+srv.URL)
	require.Contains(t, string(out), "set upstream explicitly")

	// With upstream named, the operator chose: it starts.
	startGateway(t, "--openapi", srv.URL+"/openapi.yaml", "--upstream", "http://127.0.0.1:9", "--listen", freeAddr(t))
}
