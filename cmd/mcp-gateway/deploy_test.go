package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// The manifests and the chart configure the gateway through the same keys
// as the binary; a renamed or misspelt key must fail here, not in a cluster.
// The Kubernetes side (strict k8s.io/api types, selectors, probes, drain) is
// checked by deploy/validate, which .ci/run runs on the rendered chart and
// the kustomize builds.

// deployFiles are the manifest sources: the Dockerfile, deploy/kubernetes
// and the chart (templates, values, examples).
func deployFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, root := range []string{"../../deploy/Dockerfile", "../../deploy/kubernetes", "../../helm/mcp-gateway"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch ext := filepath.Ext(p); {
			case d.IsDir():
			case ext == ".yaml" || ext == ".yml" || ext == ".tpl" || ext == ".json" || d.Name() == "Dockerfile":
				files = append(files, p)
			}
			return nil
		})
		require.NoError(t, err)
	}
	require.NotEmpty(t, files)
	return files
}

func knownEnv() map[string]bool {
	known := map[string]bool{}
	for _, o := range options {
		known[o.envName()] = true
	}
	return known
}

func TestManifestsUseKnownEnvironmentVariables(t *testing.T) {
	known := knownEnv()
	envRef := regexp.MustCompile(`MCPGW_[A-Z0-9_]+`)
	for _, f := range deployFiles(t) {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, name := range envRef.FindAllString(string(b), -1) {
			require.True(t, known[name], "%s uses unknown setting %s", f, name)
		}
	}
}

func TestManifestConfigsAreValid(t *testing.T) {
	// The configuration files of the kustomize bases and overlays (their
	// configMapGenerators read them).
	var found []string
	err := filepath.WalkDir("../../deploy/kubernetes", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "gateway.yaml" {
			found = append(found, p)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			checkConfigFile(t, string(b))
		}
		return err
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(found), 2, "the base and the sidecar overlay each have a gateway.yaml")

	// The chart's default config (the template adds redis_url).
	b, err := os.ReadFile("../../helm/mcp-gateway/values.yaml")
	require.NoError(t, err)
	var values struct {
		Config map[string]any `yaml:"config"`
	}
	require.NoError(t, yaml.Unmarshal(b, &values))
	values.Config["redis_url"] = "redis://redis:6379/0"
	out, err := yaml.Marshal(values.Config)
	require.NoError(t, err)
	checkConfigFile(t, string(out))
	// The examples' configurations need the chart's environment (secret
	// files, the Redis URL): TestRenderedGatewayConfigsLoad loads them as
	// rendered.
}

func checkConfigFile(t *testing.T, body string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(f, []byte(body), 0o600))
	c, _, err := loadConfig("t", []string{"--config", f}, env(nil), &bytes.Buffer{})
	require.NoError(t, err, "config:\n%s", body)
	require.True(t, c.OpenAPI != "" || len(c.APIs) > 0, "config:\n%s", body)
}

// The chart's values.schema.json lists the config keys, so that `helm lint`
// refuses a misspelt one; it must list exactly the keys the binary reads.
func TestChartSchemaKnowsEveryConfigKey(t *testing.T) {
	b, err := os.ReadFile("../../helm/mcp-gateway/values.schema.json")
	require.NoError(t, err)
	var schema struct {
		Properties struct {
			Config struct {
				AdditionalProperties *bool                      `json:"additionalProperties"`
				Properties           map[string]json.RawMessage `json:"properties"`
			} `json:"config"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(b, &schema))
	cfg := schema.Properties.Config
	require.NotNil(t, cfg.AdditionalProperties)
	require.False(t, *cfg.AdditionalProperties, "config refuses unknown keys")
	var keys []string
	for _, o := range options {
		if !o.noYAML {
			keys = append(keys, o.key)
		}
	}
	for _, o := range listOptions {
		keys = append(keys, o.key)
	}
	var inSchema []string
	for k := range cfg.Properties {
		inSchema = append(inSchema, k)
	}
	sort.Strings(keys)
	sort.Strings(inSchema)
	var missing, extra []string
	for _, k := range keys {
		if !slices.Contains(inSchema, k) {
			missing = append(missing, k)
		}
	}
	for _, k := range inSchema {
		if !slices.Contains(keys, k) {
			extra = append(extra, k)
		}
	}
	require.Empty(t, missing, "add these config keys to helm/mcp-gateway/values.schema.json (properties.config.properties)")
	require.Empty(t, extra, "helm/mcp-gateway/values.schema.json lists config keys the gateway does not have")
}

// Every value of the chart says what it is for: a comment line above its
// key, or one at the end of its line.
func TestChartValuesAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../../helm/mcp-gateway/values.yaml")
	require.NoError(t, err)
	key := regexp.MustCompile(`^\s*[A-Za-z0-9_]+:`)
	prev := ""
	for i, line := range strings.Split(string(b), "\n") {
		if key.MatchString(line) {
			require.True(t, strings.HasPrefix(strings.TrimSpace(prev), "#") || strings.Contains(line, "#"),
				"values.yaml:%d: %q has no comment", i+1, strings.TrimSpace(line))
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
}

// renderedGateway is one gateway container of the rendered chart or of a
// kustomize build, as deploy/validate -gateway-out writes it.
type renderedGateway struct {
	Source    string            `json:"source"`
	Workload  string            `json:"workload"`
	Container string            `json:"container"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	EnvFrom   []string          `json:"envFrom"`
	Files     map[string]string `json:"files"`
}

// TestRenderedGatewayConfigsLoad loads the configuration of every gateway
// container .ci/run rendered (helm template with each values file, each
// kustomize build) as the binary would: arguments, environment and the
// mounted ConfigMap files together. It needs MCPGW_RENDERED_DIR (the
// -gateway-out directory of deploy/validate) and skips without it.
func TestRenderedGatewayConfigsLoad(t *testing.T) {
	dir := os.Getenv("MCPGW_RENDERED_DIR")
	if dir == "" {
		t.Skip("MCPGW_RENDERED_DIR is not set (.ci/run sets it after rendering the chart)")
	}
	matches, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, matches, "deploy/validate wrote no gateway container to %s", dir)
	known := knownEnv()
	for _, m := range matches {
		b, err := os.ReadFile(m)
		require.NoError(t, err)
		var g renderedGateway
		require.NoError(t, json.Unmarshal(b, &g))
		t.Run(filepath.Base(m), func(t *testing.T) {
			where := g.Source + " " + g.Workload + " container " + g.Container
			// The mounted files go under a temporary root; every path that
			// names one is moved there.
			root := t.TempDir()
			var paths []string
			for p, body := range g.Files {
				require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(body), 0o600))
				paths = append(paths, p)
			}
			sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
			move := func(s string) string {
				for _, p := range paths {
					s = strings.ReplaceAll(s, p, filepath.Join(root, p))
				}
				return s
			}
			for _, p := range paths {
				require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(move(g.Files[p])), 0o600))
			}
			args := make([]string, len(g.Args))
			for i, a := range g.Args {
				args[i] = move(a)
			}
			vars := map[string]string{}
			for k, v := range g.Env {
				if strings.HasPrefix(k, "MCPGW_") {
					require.True(t, known[k], "%s: unknown setting %s", where, k)
				}
				vars[k] = move(v)
			}
			for _, k := range g.EnvFrom {
				if strings.HasPrefix(k, "MCPGW_") {
					require.True(t, known[k], "%s: unknown setting %s", where, k)
				}
			}
			// A Secret's URL stands in for the one Kubernetes would set.
			if slices.Contains(g.EnvFrom, "MCPGW_REDIS_URL") {
				vars["MCPGW_REDIS_URL"] = "redis://redis:6379/0"
			}
			var stderr bytes.Buffer
			c, _, err := loadConfig("mcp-gateway", args, env(vars), &stderr)
			require.NoError(t, err, "%s: %s", where, stderr.String())
			require.True(t, c.OpenAPI != "" || len(c.APIs) > 0 || c.Demo, "%s: nothing to serve", where)
		})
	}
}

func TestDockerfileBuildsTheBinary(t *testing.T) {
	b, err := os.ReadFile("../../deploy/Dockerfile")
	require.NoError(t, err)
	require.Contains(t, string(b), "./cmd/mcp-gateway")
	lines := strings.Split(string(b), "\n")
	require.True(t, slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "ENTRYPOINT") }))
	// Numeric: with runAsNonRoot and no runAsUser the kubelet refuses to
	// start an image whose USER is a name ("cannot verify user is non-root").
	require.Contains(t, lines, "USER 65532:65532", "the image runs as distroless nonroot, by number")
}
