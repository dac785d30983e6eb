package toolgen

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSanitizeName(t *testing.T) {
	long := strings.Repeat("x", 70)
	for in, want := range map[string]string{
		"listPets":              "listPets",
		"repos/get-content":     "repos_get-content",
		"find pet by id":        "find_pet_by_id",
		"  spaced  out!! ":      "spaced_out",
		"_private":              "_private",
		"a..b//c":               "a_b_c",
		"émoji🙂name":            "moji_name",
		"日本語":                   "",
		"":                      "",
		long:                    long[:57] + "_" + shortHash(long),
		strings.Repeat("x", 64): strings.Repeat("x", 64),
	} {
		require.Equal(t, want, sanitizeName(in), "sanitizeName(%q)", in)
	}
	require.Equal(t, "filter_status", sanitizeArg("filter[status]"))
	require.Equal(t, "a.b", sanitizeArg("a.b"), "arguments may keep dots")
}

func TestFallbackName(t *testing.T) {
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/pets/{petId}", "get_pets_by_petId"},
		{"DELETE", "/repos/{owner}/{repo}/issues/{number}", "delete_repos_by_owner_and_repo_issues_by_number"},
		{"GET", "/", "get_root"},
		{"POST", "/files/{name}.{ext}", "post_files_name_ext"},
		{"PUT", "/v1/über-thing", "put_v1_ber-thing"},
	} {
		require.Equal(t, tc.want, fallbackName(tc.method, tc.path), "%s %s", tc.method, tc.path)
	}
}

func TestHumanize(t *testing.T) {
	for in, want := range map[string]string{
		"listPets":          "List pets",
		"repos_get-content": "Repos get content",
		"getHTTPServerInfo": "Get HTTP server info",
		"get_pets_by_petId": "Get pets by pet id",
		"v2Things":          "V2 things",
		"already Human":     "Already human",
		"___":               "___",
	} {
		require.Equal(t, want, humanize(in), "humanize(%q)", in)
	}
}

func TestNameSetClaim(t *testing.T) {
	ns := nameSet{}
	require.Equal(t, "a", ns.claim("a", "GET /a", maxNameLen))
	second := ns.claim("a", "GET /b", maxNameLen)
	require.Equal(t, "a_"+shortHash("GET /b"), second)
	require.Equal(t, second, nameSet{"a": true}.claim("a", "GET /b", maxNameLen), "the suffix depends only on the operation")
	ns[withSuffix("x", shortHash("K"), maxNameLen)] = true
	ns["x"] = true
	third := ns.claim("x", "K", maxNameLen)
	require.Equal(t, "x_"+shortHash("K#1"), third, "a taken suffix moves on to a counter")
	full := strings.Repeat("y", 64)
	ns[full] = true
	got := ns.claim(full, "P", maxNameLen)
	require.Len(t, got, 64)
	require.True(t, strings.HasSuffix(got, "_"+shortHash("P")))
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]*$`)
var validArg = regexp.MustCompile(`^[A-Za-z0-9_.-]*$`)

// The sanitizers always return a valid name of at most 64 characters, the
// same one for the same input, and leave a valid name alone.
func FuzzSanitizeName(f *testing.F) {
	for _, s := range []string{"listPets", "repos/get content", "", "日本語", strings.Repeat("ab/", 40), "\xff\xfe", "a\x00b", "__--..", "x.y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tc := range []struct {
			fn    func(string) string
			valid *regexp.Regexp
		}{{sanitizeName, validName}, {sanitizeArg, validArg}} {
			got := tc.fn(s)
			if len(got) > maxNameLen {
				t.Fatalf("%q → %q: %d characters", s, got, len(got))
			}
			if !tc.valid.MatchString(got) {
				t.Fatalf("%q → %q: invalid characters", s, got)
			}
			if again := tc.fn(got); again != got {
				t.Fatalf("not idempotent: %q → %q → %q", s, got, again)
			}
			if tc.valid.MatchString(s) && len(s) <= maxNameLen && got != s {
				t.Fatalf("valid name %q changed to %q", s, got)
			}
		}
		if n := fallbackName("GET", s); n == "" || len(n) > maxNameLen || !validName.MatchString(n) {
			t.Fatalf("fallbackName(GET, %q) = %q", s, n)
		}
	})
}
