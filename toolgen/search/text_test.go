package search

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"listPetsByOwner", []string{"list", "pets", "by", "owner"}},
		{"list_repository_tags", []string{"list", "repository", "tags"}},
		{"repos/create-deploy-key", []string{"repos", "create", "deploy", "key"}},
		{"HTTPServerURL", []string{"http", "server", "url"}},
		{"getV2Beta", []string{"get", "v2", "beta"}},
		{"oauth2 token", []string{"oauth2", "token"}},
		{"/repos/{owner}/{repo}", []string{"repos", "owner", "repo"}},
		{"Größe ändern", []string{"größe", "ändern"}},
		{"  ", nil},
	} {
		require.Equal(t, tc.want, words(tc.in), tc.in)
	}
}

func TestStem(t *testing.T) {
	for _, group := range [][]string{
		{"merge", "merges", "merged", "merging"},
		{"create", "creates", "created", "creating"},
		{"repository", "repositories"},
		{"policy", "policies"},
		{"modify", "modified", "modifies"},
		{"branch", "branches"},
		{"status", "statuses"},
		{"address", "addresses"},
		{"star", "stars", "starred", "starring"},
		{"commit", "commits", "committed"},
		{"tag", "tags", "tagged"},
		{"run", "runs", "running"},
		{"add", "adds", "added"},
		{"pull", "pulls", "pulled"},
		{"label", "labels", "labeled"},
		{"file", "files"},
	} {
		for _, w := range group[1:] {
			require.Equal(t, stem(group[0]), stem(w), "%s and %s", group[0], w)
		}
	}
	// Words that must survive: no vowel before -ing, -s after s/u/i,
	// short words, and words that are not plain ASCII letters.
	for _, w := range []string{"string", "status", "access", "analysis", "id", "oauth2", "größe"} {
		require.Equal(t, w, stem(w))
	}
	require.NotEqual(t, stem("general"), stem("generic"))
}

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"List all the repositories of my organization", []string{"list", "all", "repo", "org"}},
		{"merge a PR", []string{"merg", "pull", "request"}},
		{"listOrgRepos", []string{"list", "org", "repo"}},
		{"the of a", nil},
	} {
		require.Equal(t, tc.want, terms(nil, tc.in), tc.in)
	}
}

func TestSynonyms(t *testing.T) {
	has := func(term, syn string) float64 {
		for _, s := range synonyms[normalize(term)] {
			if s.term == normalize(syn) {
				return s.weight
			}
		}
		return 0
	}
	require.Equal(t, strongSynonym, has("remove", "delete"))
	require.Equal(t, strongSynonym, has("delete", "remove"))
	require.Equal(t, strongSynonym, has("add", "create"))
	require.Equal(t, strongSynonym, has("list", "all"))
	require.Equal(t, weakSynonym, has("list", "get"))
	require.Equal(t, strongSynonym, has("update", "set"), "the higher of two groups")
	require.Zero(t, has("delete", "create"))
	require.Zero(t, has("delete", "delete"), "a term is not its own synonym")
}

func TestClip(t *testing.T) {
	require.Equal(t, "short", clip("short", 10))
	require.Equal(t, "one two", clip("one two three", 10))
	require.Equal(t, "abcdefghij", clip("abcdefghijkl", 10))
	require.Equal(t, "ab", clip("abé", 3), "no rune cut in two")
}
