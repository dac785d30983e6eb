package openapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v4"
)

// sniffVersion finds the top-level "openapi" or "swagger" field without
// decoding the whole document, when it can: from the parsed tree of a JSON
// document, or from the top-level lines of a YAML one. Anything unusual
// (flow-style YAML, JSON the fast reader refused) gets a full parse.
func sniffVersion(data []byte, node *yaml.Node) (field, version string, err error) {
	if node != nil {
		if field, version, ok := versionFromNode(node); ok {
			return field, version, nil
		}
		return "", "", errNoVersion
	}
	if !mayBeJSON(data) {
		if field, version, ok := versionFromYAMLLines(data); ok {
			return field, version, nil
		}
	}
	if mayBeJSON(data) {
		var v struct {
			OpenAPI json.RawMessage `json:"openapi"`
			Swagger json.RawMessage `json:"swagger"`
		}
		if json.Unmarshal(data, &v) == nil {
			return versionFromRaw(v.OpenAPI, v.Swagger)
		}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return "", "", fmt.Errorf("not JSON or YAML: %w", err)
	}
	if field, version, ok := versionFromNode(&root); ok {
		return field, version, nil
	}
	return "", "", errNoVersion
}

var errNoVersion = errors.New(`not an OpenAPI document: no top-level "openapi" or "swagger" field`)

func versionFromNode(n *yaml.Node) (field, version string, ok bool) {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return "", "", false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if (k.Value == "openapi" || k.Value == "swagger") && v.Kind == yaml.ScalarNode {
			return k.Value, v.Value, true
		}
	}
	return "", "", false
}

func versionFromRaw(openapi, swagger json.RawMessage) (field, version string, err error) {
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"openapi", openapi}, {"swagger", swagger}} {
		if len(f.raw) == 0 {
			continue
		}
		var s string
		if json.Unmarshal(f.raw, &s) != nil {
			s = string(f.raw) // a number such as 2.0, as written
		}
		return f.name, s, nil
	}
	return "", "", errNoVersion
}

// versionFromYAMLLines looks for `openapi: ...` or `swagger: ...` on an
// unindented line of a block-style YAML document.
func versionFromYAMLLines(data []byte) (field, version string, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line[0] == '-' || line[0] == '%' {
			continue
		}
		key, value, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		key = strings.Trim(strings.TrimSpace(key), `"'`)
		if key != "openapi" && key != "swagger" {
			continue
		}
		if i := strings.Index(value, " #"); i >= 0 {
			value = value[:i]
		}
		value = strings.TrimSpace(value)
		value = strings.Trim(value, `"'`)
		if value == "" {
			return "", "", false
		}
		return key, value, true
	}
	return "", "", false
}
