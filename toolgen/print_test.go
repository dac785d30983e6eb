package toolgen

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPrintJSON(t *testing.T) {
	_, set := generateFile(t, "testdata/names.yaml", Options{})
	var buf bytes.Buffer
	require.NoError(t, Print(&buf, set, "json"))
	var got struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	require.Len(t, got.Tools, set.Len())
	for _, tl := range got.Tools {
		for k := range tl {
			require.Contains(t, []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}, k)
		}
	}
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, buf.Bytes()))
	direct, err := json.Marshal(struct {
		Tools []*Tool `json:"tools"`
	}{set.Tools()})
	require.NoError(t, err)
	require.JSONEq(t, string(direct), compact.String(), "the same JSON tools/list marshals")

	buf.Reset()
	require.NoError(t, Print(&buf, &Set{}, "json"))
	require.JSONEq(t, `{"tools":[]}`, buf.String())
}

func TestPrintTable(t *testing.T) {
	_, set := generateFile(t, "testdata/names.yaml", Options{})
	var buf bytes.Buffer
	require.NoError(t, Print(&buf, set, "table"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, set.Len()+1)
	require.Regexp(t, `^NAME +METHOD PATH +HINTS +DESCRIPTION$`, lines[0])
	require.Regexp(t, `^listPets +GET /pets +read-only,idempotent +List pets, newest first\.$`, findLine(lines, "listPets "))
	require.Regexp(t, `^oldThing +DELETE /repos/\{owner\}/\{repo\} +destructive,idempotent +Deprecated\. Old thing`, findLine(lines, "oldThing "))
	require.Regexp(t, `^pets_create_new +POST /pets +- +Only a description`, findLine(lines, "pets_create_new "))

	require.ErrorContains(t, Print(&buf, set, "yaml"), `unknown format "yaml"`)
}

func findLine(lines []string, prefix string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
