package call

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/stretchr/testify/require"
)

func TestCallCredentials(t *testing.T) {
	doc := ctDocFile(t, "security.yaml")
	type sent struct {
		uri, auth, apiKey, cookie string
	}
	cases := []struct {
		name string
		cfg  Config
		path string
		args string
		want sent
	}{
		{"document security: header key", Config{APIKeys: map[string]string{"headerKey": "k1"}},
			"/default", `{}`, sent{uri: "/default", apiKey: "k1"}},
		{"query key replaces the model's value", Config{APIKeys: map[string]string{"queryKey": "s3cret"}},
			"/query", `{"api_key": "forged", "page": 2}`, sent{uri: "/query?page=2&api_key=s3cret"}},
		{"cookie key replaces the model's value", Config{APIKeys: map[string]string{"cookieKey": "sess"}},
			"/cookie", `{"theme": "dark", "session": "forged"}`, sent{uri: "/cookie", cookie: "theme=dark; session=sess"}},
		{"http bearer", Config{BearerToken: "tok"}, "/bearer", `{}`, sent{uri: "/bearer", auth: "Bearer tok"}},
		{"oauth2", Config{BearerToken: "tok"}, "/oauth", `{}`, sent{uri: "/oauth", auth: "Bearer tok"}},
		{"openIdConnect", Config{BearerToken: "tok"}, "/oidc", `{}`, sent{uri: "/oidc", auth: "Bearer tok"}},
		{"bearer not configured", Config{}, "/bearer", `{}`, sent{uri: "/bearer"}},
		{"first satisfiable alternative", Config{APIKeys: map[string]string{"queryKey": "q", "headerKey": "h"}},
			"/alternatives", `{}`, sent{uri: "/alternatives", apiKey: "h"}},
		{"alternative with two schemes", Config{APIKeys: map[string]string{"queryKey": "q", "headerKey": "h"}, BearerToken: "tok"},
			"/alternatives", `{}`, sent{uri: "/alternatives?api_key=q", auth: "Bearer tok"}},
		{"no security: no bearer", Config{BearerToken: "tok"}, "/public", `{}`, sent{uri: "/public"}},
		{"no security: BearerAlways", Config{BearerToken: "tok", BearerAlways: true}, "/public", `{}`, sent{uri: "/public", auth: "Bearer tok"}},
		{"an Authorization argument is never sent", Config{}, "/public", `{"Authorization": "Bearer stolen"}`, sent{uri: "/public"}},
		{"configured bearer beats an Authorization argument", Config{BearerToken: "tok", BearerAlways: true},
			"/public", `{"Authorization": "Bearer stolen"}`, sent{uri: "/public", auth: "Bearer tok"}},
		{"static header beats a header argument", Config{Headers: map[string]string{"X-API-Key": "static"}},
			"/public", `{"X-API-Key": "from-model"}`, sent{uri: "/public", apiKey: "static"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backend := ctNewBackend(t, nil)
			c.cfg.BaseURL = backend.URL
			caller := ctCaller(t, doc, c.cfg)
			ctOK(t, ctCall(t, caller, ctTool(t, doc, "GET", c.path), c.args))
			got := backend.last(t)
			require.Equal(t, c.want, sent{
				uri:    got.RequestURI,
				auth:   strings.Join(got.Header.Values("Authorization"), "|"),
				apiKey: strings.Join(got.Header.Values("X-Api-Key"), "|"),
				cookie: strings.Join(got.Header.Values("Cookie"), "|"),
			})
		})
	}
}

func TestCallStaticHeadersAndHost(t *testing.T) {
	doc := ctDocFile(t, "security.yaml")
	backend := ctNewBackend(t, nil)
	caller := ctCaller(t, doc, Config{
		BaseURL: backend.URL,
		Headers: map[string]string{"x-tenant": "t1", "Host": "api.internal", "Cookie": "lb=a"},
	})
	ctOK(t, ctCall(t, caller, ctTool(t, doc, "GET", "/cookie"), `{"theme": "dark"}`))
	got := backend.last(t)
	require.Equal(t, "t1", got.Header.Get("X-Tenant"))
	require.Equal(t, "api.internal", got.Host)
	require.Equal(t, "theme=dark; lb=a", got.Header.Get("Cookie"))
}

// TestCallCredentialsNotInResults: the request URL that appears in results
// (resource URIs) is taken before credentials are added.
func TestCallCredentialsNotInResults(t *testing.T) {
	doc := ctDocFile(t, "security.yaml")
	backend := ctNewBackend(t, ctReply(200, "application/pdf", []byte("%PDF")))
	caller := ctCaller(t, doc, Config{BaseURL: backend.URL, APIKeys: map[string]string{"queryKey": "s3cret"}})
	res := ctCall(t, caller, ctTool(t, doc, "GET", "/query"), `{"page": 1}`)
	ctOK(t, res)
	require.Equal(t, backend.URL+"/query?page=1", res.Content[0].Resource.URI)
	require.Equal(t, "/query?page=1&api_key=s3cret", backend.last(t).RequestURI)

	failing := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "key "+r.URL.Query().Get("api_key")+" rejected", http.StatusUnauthorized)
	})
	caller = ctCaller(t, doc, Config{BaseURL: failing.URL, APIKeys: map[string]string{"queryKey": "s3cret"}})
	res = ctCall(t, caller, ctTool(t, doc, "GET", "/query"), `{"page": 1}`)
	require.True(t, res.IsError)
	// The path in the message carries no query; the backend's own body is
	// quoted as it is (it is the backend's choice to echo the key).
	require.True(t, strings.HasPrefix(ctText(res), "backend returned HTTP 401 Unauthorized for GET /query: "), ctText(res))
}

func TestNewCallerRejectsBadConfig(t *testing.T) {
	doc := ctDocFile(t, "security.yaml")
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown scheme", Config{APIKeys: map[string]string{"nope": "x"}}, `APIKeys["nope"]: the document declares no security scheme "nope"`},
		{"not an apiKey scheme", Config{APIKeys: map[string]string{"bearer": "x"}}, `APIKeys["bearer"]: security scheme "bearer" has type "http", not apiKey`},
		{"empty key", Config{APIKeys: map[string]string{"headerKey": ""}}, `APIKeys["headerKey"] is empty`},
		{"key with newline", Config{APIKeys: map[string]string{"headerKey": "a\nb"}}, `APIKeys["headerKey"] contains control characters`},
		{"header name", Config{Headers: map[string]string{"Bad Name": "x"}}, `Headers["Bad Name"]: not a valid header name`},
		{"header value", Config{Headers: map[string]string{"X-A": "a\r\nX-B: b"}}, `Headers["X-A"]: the value contains control characters`},
		{"managed header", Config{Headers: map[string]string{"content-length": "1"}}, `Headers["content-length"]: this header is managed by the HTTP client`},
		{"bearer token", Config{BearerToken: "a\nb"}, `BearerToken contains control characters`},
		{"negative timeout", Config{Timeout: -1}, `Timeout must not be negative`},
		{"negative cap", Config{MaxResponseBytes: -1}, `MaxResponseBytes must not be negative`},
		{"base URL scheme", Config{BaseURL: "ftp://x.test"}, `BaseURL must be an absolute http or https URL`},
		{"base URL relative", Config{BaseURL: "/api"}, `BaseURL must be an absolute http or https URL`},
		{"base URL query", Config{BaseURL: "http://x.test/?a=1"}, `BaseURL must not have a query`},
		{"base URL fragment", Config{BaseURL: "http://x.test/#a"}, `BaseURL must not have a fragment`},
		{"base URL user", Config{BaseURL: "http://u:p@x.test/"}, `BaseURL must not contain credentials`},
		{"base URL no host", Config{BaseURL: "http:///path"}, `BaseURL has no host`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.cfg.BaseURL == "" {
				c.cfg.BaseURL = "http://backend.test"
			}
			_, err := NewCaller(doc, c.cfg)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
		})
	}
	_, err := NewCaller(nil, Config{})
	require.Error(t, err)
}

func TestNewCallerBaseURL(t *testing.T) {
	spec := func(servers string) string {
		return `
openapi: 3.0.3
info: {title: t, version: "1"}
` + servers + `
paths:
  /ping:
    get:
      responses: {"200": {description: ok}}
`
	}
	cases := []struct {
		name, servers, location, configured string
		want, wantErr                       string
	}{
		{"configured wins", `servers: [{url: "http://doc.test/v1"}]`, "", "https://api.test/base/", "https://api.test/base", ""},
		{"configured keeps its escaping", "", "", "http://api.test/a%2Fb/", "http://api.test/a%2Fb", ""},
		{"first server", `servers: [{url: "http://one.test/v1/"}, {url: "http://two.test"}]`, "", "", "http://one.test/v1", ""},
		{"server variables", `servers: [{url: "https://{region}.api.test/{version}", variables: {region: {default: eu}, version: {default: v2, enum: [v1, v2]}}}]`,
			"", "", "https://eu.api.test/v2", ""},
		{"relative server against URL location", `servers: [{url: "/v2"}]`, "http://docs.test/specs/openapi.yaml", "", "http://docs.test/v2", ""},
		{"relative server without slash", `servers: [{url: "api"}]`, "http://docs.test/specs/openapi.yaml", "", "http://docs.test/specs/api", ""},
		{"no servers against URL location", ``, "https://docs.test/specs/openapi.yaml", "", "https://docs.test", ""},
		{"relative server against a file", `servers: [{url: "/v2"}]`, "/etc/api/openapi.yaml", "", "",
			`document server URL "/v2" is relative and the document was not loaded from an http(s) URL; set BaseURL`},
		{"no servers and a file", ``, "openapi.yaml", "", "", `document server URL "/" is relative`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := ctDoc(t, spec(c.servers))
			doc.Location = c.location
			caller, err := NewCaller(doc, Config{BaseURL: c.configured})
			if c.wantErr != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, caller.base.String())
		})
	}
}

// Each scheme that some tool needs and the configuration cannot satisfy is
// reported once, with the tools; an optional or satisfied alternative
// needs nothing.
func TestMissingCredentials(t *testing.T) {
	doc := ctDocFile(t, "security-gaps.yaml")
	set, err := toolgen.Generate(doc, toolgen.Options{})
	require.NoError(t, err)
	missing := func(cfg Config) []MissingCredential {
		cfg.BaseURL = "http://backend.test"
		c, err := NewCaller(doc, cfg)
		require.NoError(t, err)
		return c.MissingCredentials(set.Tools())
	}
	require.Equal(t, []MissingCredential{
		{Scheme: "basic", Type: "http", HTTPScheme: "basic", Tools: []string{"b", "e"}},
		{Scheme: "key", Type: "apiKey", In: "header", Name: "X-API-Key", Tools: []string{"a", "e"}},
		{Scheme: "tok", Type: "http", HTTPScheme: "bearer", Tools: []string{"b"}},
	}, missing(Config{}))
	require.Equal(t, []MissingCredential{{Scheme: "basic", Type: "http", HTTPScheme: "basic", Tools: []string{"e"}}},
		missing(Config{APIKeys: map[string]string{"key": "k"}, BearerToken: "t"}), "e needs key and basic")
	require.Empty(t, missing(Config{Headers: map[string]string{"X-Api-Key": "k", "Authorization": "Basic eDp5"}}),
		"static headers satisfy an apiKey in that header and any http scheme")
	require.Equal(t, []string{"a", "e"}, func() []string {
		m := missing(Config{BearerToken: "t"})
		require.Len(t, m, 2)
		return m[1].Tools
	}())

	// An alternative of two schemes, one from a key and one from a static
	// header: reported satisfied, and on the call the key is sent beside
	// the static header (the check and the call use one rule).
	require.Empty(t, missing(Config{APIKeys: map[string]string{"key": "k"}, Headers: map[string]string{"Authorization": "Basic eDp5"}, BearerToken: "t"}))
	backend := ctNewBackend(t, func(w http.ResponseWriter, r *http.Request) {})
	c, err := NewCaller(doc, Config{BaseURL: backend.URL, APIKeys: map[string]string{"key": "k"}, Headers: map[string]string{"Authorization": "Basic eDp5"}})
	require.NoError(t, err)
	tl, ok := set.Lookup("e")
	require.True(t, ok)
	ctCall(t, c, tl, `{}`)
	reqs := backend.requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "k", reqs[0].Header.Get("X-API-Key"))
	require.Equal(t, "Basic eDp5", reqs[0].Header.Get("Authorization"))
}
