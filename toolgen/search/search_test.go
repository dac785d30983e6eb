package search

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// op makes a tool as toolgen would for one operation.
func op(name, method, path, summary string, tags ...string) *toolgen.Tool {
	return &toolgen.Tool{
		Name:  name,
		Title: summary,
		Binding: &toolgen.Binding{
			Method: method,
			Path:   path,
			Operation: &openapi3.Operation{
				OperationID: name,
				Summary:     summary,
				Tags:        tags,
			},
		},
	}
}

var petstore = []*toolgen.Tool{
	op("listPets", "GET", "/pets", "List all pets", "pets"),
	op("createPet", "POST", "/pets", "Create a pet", "pets"),
	op("getPet", "GET", "/pets/{petId}", "Info for a specific pet", "pets"),
	op("deletePet", "DELETE", "/pets/{petId}", "Delete a pet", "pets"),
	op("updatePet", "PATCH", "/pets/{petId}", "Update a pet", "pets"),
	op("uploadPetPhoto", "POST", "/pets/{petId}/photos", "Upload a photo of a pet", "pets"),
	op("list_repository_tags", "GET", "/repos/{owner}/{repo}/tags", "List repository tags", "repos"),
	op("pulls_merge", "PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge", "Merge a pull request", "pulls"),
	op("listOrgMembers", "GET", "/orgs/{org}/members", "List members", "orgs"),
}

func names(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Tool.Name)
	}
	return out
}

func TestSearchFirst(t *testing.T) {
	ix := New(petstore)
	for _, tc := range []struct {
		what, query, want string
	}{
		{"camelCase name", "list pets", "listPets"},
		{"snake_case name", "list repository tags", "list_repository_tags"},
		{"stemming", "merging pulls", "pulls_merge"},
		{"plural and alias", "repositories tags", "list_repository_tags"},
		{"alias PR", "merge a PR", "pulls_merge"},
		{"alias org", "members of an organization", "listOrgMembers"},
		{"synonym remove", "remove a pet", "deletePet"},
		{"synonym add", "add a new pet", "createPet"},
		{"synonym modify", "modify a pet", "updatePet"},
		{"synonym fetch", "fetch a pet", "getPet"},
		{"path words", "photos", "uploadPetPhoto"},
		{"path param words", "petId photo", "uploadPetPhoto"},
		{"case", "LIST PETS", "listPets"},
	} {
		hits := ix.Search(tc.query, 3)
		require.NotEmpty(t, hits, tc.what)
		require.Equal(t, tc.want, hits[0].Tool.Name, "%s: %q gave %v", tc.what, tc.query, names(hits))
	}
}

func TestSearchMethodBoost(t *testing.T) {
	// The same words on every method: only the verb's method tells them apart.
	same := []*toolgen.Tool{
		op("a", "GET", "/things", "Things"),
		op("b", "POST", "/things", "Things"),
		op("c", "DELETE", "/things", "Things"),
		op("d", "PATCH", "/things", "Things"),
		op("e", "PUT", "/things", "Things"),
	}
	ix := New(same)
	for _, tc := range []struct {
		query, want string
	}{
		{"list things", "a"},
		{"get things", "a"},
		{"add things", "b"},
		{"remove things", "c"},
		{"edit things", "d"},
		{"replace things", "e"},
	} {
		hits := ix.Search(tc.query, 0)
		require.Len(t, hits, 5, tc.query)
		require.Equal(t, tc.want, hits[0].Tool.Name, "%q gave %v", tc.query, names(hits))
	}
	// Adding is POST first, PUT second.
	require.Equal(t, []string{"b", "e", "a", "c", "d"}, names(ix.Search("create things", 0)))
}

func TestSearchTiesKeepOrder(t *testing.T) {
	tools := []*toolgen.Tool{
		op("first", "GET", "/x", "Same words"),
		op("second", "GET", "/x", "Same words"),
		op("third", "GET", "/x", "Same words"),
	}
	ix := New(tools)
	want := []string{"first", "second", "third"}
	for range 20 {
		hits := ix.Search("same words", 0)
		require.Equal(t, want, names(hits))
		require.Equal(t, hits[0].Score, hits[2].Score)
	}
}

func TestSearchPhraseAndAllTerms(t *testing.T) {
	ix := New([]*toolgen.Tool{
		op("k1", "GET", "/x", "Key for deploy"),
		op("k2", "GET", "/y", "Deploy key"),
		op("k3", "GET", "/z", "Deploy deploy"),
	})
	require.Equal(t, []string{"k2", "k1", "k3"}, names(ix.Search("deploy key", 0)))
}

func TestSearchEmpty(t *testing.T) {
	ix := New(petstore)
	for _, q := range []string{"", "   \t\n", "the of a", "?!—"} {
		require.Nil(t, ix.Search(q, 5), "%q", q)
	}
	require.Nil(t, ix.Search("nothing matches zebra", 5))
	require.Nil(t, New(nil).Search("pets", 5))
}

func TestSearchLimit(t *testing.T) {
	ix := New(petstore)
	require.Len(t, ix.Search("pet", 2), 2)
	require.Len(t, ix.Search("pet", 0), 6)
	require.Len(t, ix.Search("pet", -1), 6)
	// A limit keeps the first hits of the whole ranking.
	for _, q := range []string{"pet", "list pets", "delete a pet photo"} {
		all := ix.Search(q, 0)
		for k := 1; k <= len(all)+1; k++ {
			require.Equal(t, all[:min(k, len(all))], ix.Search(q, k), "%q limit %d", q, k)
		}
	}
}

func TestSearchBounded(t *testing.T) {
	ix := New(petstore)
	// A huge query reads MaxQueryBytes of it.
	huge := strings.Repeat("pets ", 1<<20)
	require.Len(t, ix.Search(huge, 1), 1)
	q := parseQuery(huge)
	require.Len(t, q.groups, 1)
	require.LessOrEqual(t, len(q.phrase), MaxQueryBytes/2)

	// A word past MaxQueryBytes is not read.
	require.Nil(t, ix.Search(strings.Repeat("x ", MaxQueryBytes/2)+"pets", 5))

	// Only the first MaxQueryTerms distinct terms are searched.
	var many []string
	for i := range MaxQueryTerms {
		many = append(many, "w"+strconv.Itoa(i))
	}
	q = parseQuery(strings.Join(many, " ") + " pets")
	require.Len(t, q.groups, MaxQueryTerms)
	require.Nil(t, ix.Search(strings.Join(many, " ")+" pets", 5))

	// A cut in the middle of a rune drops the rune.
	q = parseQuery(strings.Repeat("a", MaxQueryBytes-1) + "é")
	require.Equal(t, []string{strings.Repeat("a", MaxQueryBytes-1)}, q.phrase)
}

func TestSearchToolWithoutOperation(t *testing.T) {
	ix := New([]*toolgen.Tool{
		nil,
		{Name: "send_invoice", Title: "Send invoice", Description: "Emails an invoice to the customer."},
	})
	hits := ix.Search("email a customer", 5)
	require.Len(t, hits, 1)
	require.Equal(t, "send_invoice", hits[0].Tool.Name)
}

func TestSearchArguments(t *testing.T) {
	tl := op("searchThings", "GET", "/things", "Search")
	tl.Binding.Params = []toolgen.ParamBinding{{Arg: "colour", Param: &openapi3.Parameter{Name: "colour", In: "query"}}}
	tl.Binding.Body = &toolgen.BodyBinding{Flattened: true, Props: map[string]string{"shapeKind": "shapeKind"}}
	ix := New([]*toolgen.Tool{tl, op("other", "GET", "/other", "Other")})
	require.Equal(t, []string{"searchThings"}, names(ix.Search("colour", 5)))
	require.Equal(t, []string{"searchThings"}, names(ix.Search("shape", 5)))
}

// Run with -race: one index, many searches at once.
func TestSearchConcurrent(t *testing.T) {
	ix := New(petstore)
	want := names(ix.Search("delete a pet", 0))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if got := names(ix.Search("delete a pet", 0)); !equal(got, want) {
					t.Errorf("got %v, want %v", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

func FuzzSearch(f *testing.F) {
	for _, q := range []string{"list pets", "removeAPet", "PR merge", "\xff\xfe", "ÉTÉ été", strings.Repeat("ab ", 300)} {
		f.Add(q, 3)
	}
	ix := New(petstore)
	f.Fuzz(func(t *testing.T, q string, limit int) {
		hits := ix.Search(q, limit)
		if limit > 0 {
			require.LessOrEqual(t, len(hits), limit)
		}
		for i, h := range hits {
			require.Positive(t, h.Score)
			if i > 0 {
				require.LessOrEqual(t, h.Score, hits[i-1].Score)
			}
		}
		require.LessOrEqual(t, len(parseQuery(q).groups), MaxQueryTerms)
	})
}
