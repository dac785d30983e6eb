package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// The manifests and the chart configure the gateway through the same keys
// as the binary; a renamed or misspelt key must fail here, not in a cluster.

func TestManifestsUseKnownEnvironmentVariables(t *testing.T) {
	known := map[string]bool{}
	for _, o := range options {
		known[o.envName()] = true
	}
	var files []string
	for _, glob := range []string{"../../deploy/Dockerfile", "../../deploy/kubernetes/*.yaml", "../../helm/mcp-gateway/templates/*", "../../helm/mcp-gateway/values.yaml"} {
		m, err := filepath.Glob(glob)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.NotEmpty(t, files)
	envRef := regexp.MustCompile(`MCPGW_[A-Z0-9_]+`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, name := range envRef.FindAllString(string(b), -1) {
			require.True(t, known[name], "%s uses unknown setting %s", f, name)
		}
	}
}

func TestManifestConfigsAreValid(t *testing.T) {
	// The ConfigMap of the Kubernetes example.
	b, err := os.ReadFile("../../deploy/kubernetes/gateway.yaml")
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(b))
	found := false
	for {
		var doc struct {
			Kind string            `yaml:"kind"`
			Data map[string]string `yaml:"data"`
		}
		if dec.Decode(&doc) != nil {
			break
		}
		if doc.Kind == "ConfigMap" {
			found = true
			checkConfigFile(t, doc.Data["gateway.yaml"])
		}
	}
	require.True(t, found)

	// The chart's default config (the template adds redis_url).
	b, err = os.ReadFile("../../helm/mcp-gateway/values.yaml")
	require.NoError(t, err)
	var values struct {
		Config map[string]any `yaml:"config"`
	}
	require.NoError(t, yaml.Unmarshal(b, &values))
	values.Config["redis_url"] = "redis://redis:6379/0"
	out, err := yaml.Marshal(values.Config)
	require.NoError(t, err)
	checkConfigFile(t, string(out))
}

func checkConfigFile(t *testing.T, body string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(f, []byte(body), 0o600))
	c, _, err := loadConfig("t", []string{"--config", f}, env(nil), &bytes.Buffer{})
	require.NoError(t, err, "config:\n%s", body)
	require.NotEmpty(t, c.OpenAPI)
}

func TestDockerfileBuildsTheBinary(t *testing.T) {
	b, err := os.ReadFile("../../deploy/Dockerfile")
	require.NoError(t, err)
	require.Contains(t, string(b), "./cmd/mcp-gateway")
	lines := strings.Split(string(b), "\n")
	require.True(t, slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "ENTRYPOINT") }))
}
