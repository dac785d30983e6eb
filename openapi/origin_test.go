package openapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// site is an httptest server, one origin, serving files and redirects that
// a test sets once both origins' URLs are known.
type site struct {
	*httptest.Server
	mu        sync.Mutex
	files     map[string]string
	redirects map[string]string // path -> absolute or relative target
	hits      map[string]int
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{files: map[string]string{}, redirects: map[string]string{}, hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		body, ok := s.files[r.URL.Path]
		target, redirect := s.redirects[r.URL.Path]
		s.mu.Unlock()
		switch {
		case redirect:
			http.Redirect(w, r, target, http.StatusFound)
		case ok:
			_, _ = w.Write([]byte(body))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) serve(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = body
}

func (s *site) redirect(path, target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redirects[path] = target
}

func (s *site) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// refDoc is a document whose one response schema is $ref.
func refDoc(ref string) string {
	return `
openapi: 3.0.3
info: {title: Origins, version: "1"}
paths:
  /pets:
    get:
      summary: List
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                $ref: "` + ref + `"
`
}

// swaggerRefDoc is refDoc in Swagger 2.0, which takes the bundler's path.
func swaggerRefDoc(ref string) string {
	return `
swagger: "2.0"
info: {title: Origins, version: "1"}
paths:
  /pets:
    get:
      summary: List
      produces: [application/json]
      responses:
        "200":
          description: ok
          schema:
            $ref: "` + ref + `"
`
}

const petSchema = "type: object\nproperties:\n  name:\n    type: string\n"

func requireOriginError(t *testing.T, err error, want openapi.OriginError) {
	t.Helper()
	require.Error(t, err)
	var le *openapi.LoadError
	require.ErrorAs(t, err, &le, "a load error")
	var oe *openapi.OriginError
	require.ErrorAs(t, err, &oe, "%v", err)
	require.Equal(t, want, *oe)
	require.Contains(t, err.Error(), oe.Error())
}

func TestLoadRefOrigins(t *testing.T) {
	api, other := newSite(t), newSite(t)
	require.NotEqual(t, api.URL, other.URL, "two origins")
	other.serve("/pet.yaml", petSchema)
	api.serve("/schemas/pet.yaml", petSchema)
	api.serve("/relative.yaml", refDoc("schemas/pet.yaml"))
	api.serve("/absolute.yaml", refDoc(api.URL+"/schemas/pet.yaml"))
	api.serve("/cross.yaml", refDoc(other.URL+"/pet.yaml#/"))
	api.serve("/cross2.yaml", swaggerRefDoc(other.URL+"/pet.yaml"))
	api.serve("/network-path.yaml", refDoc("//"+strings.TrimPrefix(other.URL, "http://")+"/pet.yaml"))
	api.serve("/file.yaml", refDoc("file:///etc/hostname"))
	api.serve("/ref-redirect.yaml", refDoc("moved/pet.yaml"))
	api.redirect("/moved/pet.yaml", other.URL+"/pet.yaml")
	api.serve("/ref-redirect-here.yaml", refDoc("here/pet.yaml"))
	api.redirect("/here/pet.yaml", "/schemas/pet.yaml")
	api.serve("/loop.yaml", refDoc("loop/pet.yaml"))
	api.redirect("/loop/pet.yaml", "/loop/pet.yaml")

	refused := openapi.OriginError{URL: other.URL + "/pet.yaml", Origin: other.URL, DocumentOrigin: api.URL}
	redirected := refused
	redirected.RedirectedFrom = api.URL + "/moved/pet.yaml"
	for _, tc := range []struct {
		name, path string
		allow      []string
		refused    *openapi.OriginError
		contains   string
	}{
		{name: "relative ref, same origin", path: "/relative.yaml"},
		{name: "absolute ref, same origin", path: "/absolute.yaml"},
		{name: "redirect within the origin", path: "/ref-redirect-here.yaml"},
		{name: "other origin", path: "/cross.yaml", refused: &refused},
		{name: "other origin, swagger 2.0", path: "/cross2.yaml", refused: &refused},
		{name: "network-path ref", path: "/network-path.yaml", contains: "unsupported reference"},
		{name: "other origin allowed", path: "/cross.yaml", allow: []string{other.URL}},
		{name: "other origin allowed, swagger 2.0", path: "/cross2.yaml", allow: []string{other.URL + "/"}},
		{name: "allowing a third origin does not help", path: "/cross.yaml", allow: []string{"https://schemas.example.com"}, refused: &refused},
		{name: "ref redirected to another origin", path: "/ref-redirect.yaml", refused: &redirected},
		{name: "ref redirected to an allowed origin", path: "/ref-redirect.yaml", allow: []string{other.URL}},
		{name: "file ref", path: "/file.yaml", contains: "may not refer to local files"},
		{name: "file ref, even with an allow list", path: "/file.yaml", allow: []string{other.URL}, contains: "may not refer to local files"},
		{name: "redirect loop", path: "/loop.yaml", contains: "stopped after 10 redirects"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := openapi.Load(context.Background(), api.URL+tc.path, openapi.LoadOptions{RefAllow: tc.allow})
			switch {
			case tc.refused != nil:
				requireOriginError(t, err, *tc.refused)
			case tc.contains != "":
				require.ErrorContains(t, err, tc.contains)
			default:
				require.NoError(t, err)
				s := schemaOf(t, doc.T.Paths.Find("/pets").Get.Responses.Status(200).Value.Content.Get("application/json"))
				require.Contains(t, s.Properties, "name")
			}
		})
	}

	_, err := openapi.Load(context.Background(), api.URL+"/cross.yaml", openapi.LoadOptions{})
	require.EqualError(t, err, "openapi: load "+api.URL+"/cross.yaml: error resolving reference \""+other.URL+"/pet.yaml#/\": "+
		other.URL+"/pet.yaml is on "+other.URL+", another origin than the document's ("+api.URL+"); list it in openapi_ref_allow to allow it")
	_, err = openapi.Load(context.Background(), api.URL+"/ref-redirect.yaml", openapi.LoadOptions{})
	require.EqualError(t, err, "openapi: load "+api.URL+"/ref-redirect.yaml: "+api.URL+"/moved/pet.yaml redirects to "+other.URL+"/pet.yaml, on "+other.URL+
		", another origin than the document's ("+api.URL+"); list it in openapi_ref_allow to allow it")
}

// The document's own redirect meets the same rule as its refs' and does
// not move its origin: relative refs still resolve against the URL as
// configured, and must stay on its origin.
func TestLoadRootRedirect(t *testing.T) {
	api, other := newSite(t), newSite(t)
	api.serve("/schemas/pet.yaml", petSchema)
	api.serve("/elsewhere/schemas/pet.yaml", petSchema)
	api.serve("/v2/openapi.yaml", refDoc("../schemas/pet.yaml"))
	api.redirect("/latest/openapi.yaml", "/v2/openapi.yaml")
	api.redirect("/elsewhere/openapi.yaml", other.URL+"/openapi.yaml")
	other.serve("/openapi.yaml", refDoc("schemas/pet.yaml"))
	other.serve("/schemas/pet.yaml", petSchema)
	ctx := context.Background()

	_, err := openapi.Load(ctx, api.URL+"/latest/openapi.yaml", openapi.LoadOptions{})
	require.NoError(t, err, "a redirect within the origin")

	_, err = openapi.Load(ctx, api.URL+"/elsewhere/openapi.yaml", openapi.LoadOptions{})
	requireOriginError(t, err, openapi.OriginError{
		URL: other.URL + "/openapi.yaml", Origin: other.URL, DocumentOrigin: api.URL,
		RedirectedFrom: api.URL + "/elsewhere/openapi.yaml",
	})
	require.Zero(t, other.hit("/openapi.yaml"), "refused before the request")

	doc, err := openapi.Load(ctx, api.URL+"/elsewhere/openapi.yaml", openapi.LoadOptions{RefAllow: []string{other.URL}})
	require.NoError(t, err, "a redirect to an allowed origin")
	require.NotNil(t, schemaOf(t, doc.T.Paths.Find("/pets").Get.Responses.Status(200).Value.Content.Get("application/json")))
	require.Equal(t, 1, api.hit("/elsewhere/schemas/pet.yaml"), "the relative ref resolved against the configured URL")
	require.Zero(t, other.hit("/schemas/pet.yaml"))
}

func TestLoadRedirectClient(t *testing.T) {
	api := newSite(t)
	api.serve("/openapi.yaml", refDoc("schemas/pet.yaml"))
	api.serve("/schemas/pet.yaml", petSchema)
	api.redirect("/old.yaml", "/openapi.yaml")

	var seen []string
	client := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		seen = append(seen, req.URL.Path)
		return nil
	}}
	_, err := openapi.Load(context.Background(), api.URL+"/old.yaml", openapi.LoadOptions{HTTPClient: client})
	require.NoError(t, err)
	require.Equal(t, []string{"/openapi.yaml"}, seen, "the caller's CheckRedirect still has its say")
	probe := httptest.NewRequest(http.MethodGet, "/probe", nil)
	require.NoError(t, client.CheckRedirect(probe, nil))
	require.Equal(t, []string{"/openapi.yaml", "/probe"}, seen, "the caller's client is not changed")

	stop := errors.New("no redirects here")
	client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return stop }}
	_, err = openapi.Load(context.Background(), api.URL+"/old.yaml", openapi.LoadOptions{HTTPClient: client})
	require.ErrorIs(t, err, stop)

	plain := &http.Client{}
	_, err = openapi.Load(context.Background(), api.URL+"/old.yaml", openapi.LoadOptions{HTTPClient: plain})
	require.NoError(t, err)
	require.Nil(t, plain.CheckRedirect, "the caller's client is not changed")
}

// A local document is the operator's: it may refer to local files and to
// any origin, with no allow list.
func TestLoadLocalDocumentRefs(t *testing.T) {
	other := newSite(t)
	other.serve("/pet.yaml", petSchema)
	other.redirect("/moved.yaml", "/pet.yaml")
	dir := writeFiles(t, map[string]string{
		"url.yaml":   refDoc(other.URL + "/pet.yaml"),
		"moved.yaml": refDoc(other.URL + "/moved.yaml"),
		"file.yaml":  refDoc("pet.yaml"),
		"pet.yaml":   petSchema,
	})
	for _, name := range []string{"url.yaml", "moved.yaml", "file.yaml"} {
		t.Run(name, func(t *testing.T) {
			doc, err := openapi.Load(context.Background(), filepath.Join(dir, name), openapi.LoadOptions{})
			require.NoError(t, err)
			s := schemaOf(t, doc.T.Paths.Find("/pets").Get.Responses.Status(200).Value.Content.Get("application/json"))
			require.Contains(t, s.Properties, "name")
		})
	}
}

func TestLoadRefAllowInvalid(t *testing.T) {
	_, err := openapi.LoadData(context.Background(), []byte(refDoc("#/x")), "https://api.example.com/openapi.yaml",
		openapi.LoadOptions{RefAllow: []string{"https://schemas.example.com/v1"}})
	var le *openapi.LoadError
	require.ErrorAs(t, err, &le)
	require.ErrorContains(t, err, `RefAllow: origin "https://schemas.example.com/v1" must be scheme://host[:port] only`)
}

func TestParseOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://schemas.example.com":       "https://schemas.example.com",
		"https://schemas.example.com/":      "https://schemas.example.com",
		"HTTPS://Schemas.Example.COM:443":   "https://schemas.example.com",
		"http://schemas.example.com:80":     "http://schemas.example.com",
		"http://schemas.example.com:443":    "http://schemas.example.com:443",
		"https://schemas.example.com:8443/": "https://schemas.example.com:8443",
		"http://127.0.0.1:8080":             "http://127.0.0.1:8080",
		"http://[::1]:8080":                 "http://[::1]:8080",
		"https://[::1]:443":                 "https://[::1]",
	} {
		got, err := openapi.ParseOrigin(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for in, msg := range map[string]string{
		"":                                    "want http://host[:port] or https://host[:port]",
		"schemas.example.com":                 "want http://host[:port] or https://host[:port]",
		"ftp://schemas.example.com":           "want http://host[:port] or https://host[:port]",
		"file:///etc":                         "want http://host[:port] or https://host[:port]",
		"https://":                            "has no host",
		"https://user:pw@schemas.example.com": "must not contain credentials",
		"https://schemas.example.com/v1":      "without a path, query or fragment",
		"https://schemas.example.com?x=1":     "without a path, query or fragment",
		"https://schemas.example.com#x":       "without a path, query or fragment",
		"https://schemas.example.com:":        "has an empty port",
		"https://schemas.example.com:0":       "has an invalid port",
		"https://schemas.example.com:99999":   "has an invalid port",
		"https://schemas.example.com:x":       "origin",
		"https:schemas.example.com":           "origin",
	} {
		_, err := openapi.ParseOrigin(in)
		require.ErrorContains(t, err, msg, "%q", in)
	}
}

func TestCheckServerOrigin(t *testing.T) {
	const docURL = "https://api.example.com/specs/openapi.yaml"
	servers := func(yaml string) string {
		return "openapi: 3.0.3\ninfo: {title: s, version: '1'}\n" + yaml + minimalPaths
	}
	for _, tc := range []struct {
		name, location, doc string
		err                 string // "" for none
	}{
		{name: "no servers", location: docURL, doc: servers("")},
		{name: "relative", location: docURL, doc: servers("servers: [{url: /api}]")},
		{name: "relative path", location: docURL, doc: servers("servers: [{url: v1}]")},
		{name: "same origin", location: docURL, doc: servers("servers: [{url: 'https://api.example.com/api'}]")},
		{name: "same origin, default port spelt out", location: docURL, doc: servers("servers: [{url: 'https://API.example.com:443/api'}]")},
		{name: "only the first server counts", location: docURL, doc: servers("servers: [{url: /api}, {url: 'https://other.example/api'}]")},
		{name: "variables", location: docURL, doc: servers("servers: [{url: 'https://{host}/{base}', variables: {host: {default: api.example.com}, base: {default: v1}}}]")},
		{
			name: "other origin", location: docURL, doc: servers("servers: [{url: 'https://other.example/api'}]"),
			err: "the document's server https://other.example/api is not on the document's origin https://api.example.com; set upstream explicitly to use it",
		},
		{
			name: "other scheme", location: docURL, doc: servers("servers: [{url: 'http://api.example.com/api'}]"),
			err: "the document's server http://api.example.com/api is not on the document's origin https://api.example.com; set upstream explicitly to use it",
		},
		{
			name: "other port", location: docURL, doc: servers("servers: [{url: 'https://api.example.com:8443/api'}]"),
			err: "the document's server https://api.example.com:8443/api is not on the document's origin https://api.example.com; set upstream explicitly to use it",
		},
		{
			name: "network-path reference", location: docURL, doc: servers("servers: [{url: '//other.example/api'}]"),
			err: "the document's server https://other.example/api is not on the document's origin https://api.example.com; set upstream explicitly to use it",
		},
		{
			name: "variable default on another origin", location: docURL, doc: servers("servers: [{url: 'https://{host}/api', variables: {host: {default: other.example}}}]"),
			err: "the document's server https://other.example/api is not on the document's origin https://api.example.com; set upstream explicitly to use it",
		},
		{
			name: "variable naming a variable", location: docURL, doc: servers("servers: [{url: 'https://{a}/api', variables: {a: {default: '{b}'}, b: {default: other.example}}}]"),
			err: `names another variable; set upstream explicitly`,
		},
		{
			name: "credentials in the document URL are not repeated", location: "https://user:secret@api.example.com/openapi.yaml", doc: servers("servers: [{url: 'https://other.example/api'}]"),
			err: "the document's server https://other.example/api is not on the document's origin https://api.example.com; set upstream explicitly to use it",
		},
		{name: "local file, other origin", location: "testdata/x.yaml", doc: servers("servers: [{url: 'https://other.example/api'}]")},
		{name: "no location", doc: servers("servers: [{url: 'https://other.example/api'}]")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := openapi.LoadData(context.Background(), []byte(tc.doc), tc.location, openapi.LoadOptions{})
			require.NoError(t, err)
			err = doc.CheckServerOrigin()
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.err)
			require.NotContains(t, err.Error(), "secret")
			if !strings.Contains(tc.err, "names another variable") {
				var oe *openapi.OriginError
				require.ErrorAs(t, err, &oe)
				require.True(t, oe.Server)
				require.Equal(t, tc.err, err.Error())
			}
		})
	}
}

// Over real servers: a document fetched from one origin whose server is
// the other.
func TestCheckServerOriginHTTP(t *testing.T) {
	api, other := newSite(t), newSite(t)
	api.serve("/relative.yaml", "openapi: 3.0.3\ninfo: {title: s, version: '1'}\nservers: [{url: /api}]\n"+minimalPaths)
	api.serve("/other.yaml", "openapi: 3.0.3\ninfo: {title: s, version: '1'}\nservers: [{url: '"+other.URL+"/api'}]\n"+minimalPaths)

	doc, err := openapi.Load(context.Background(), api.URL+"/relative.yaml", openapi.LoadOptions{})
	require.NoError(t, err)
	require.NoError(t, doc.CheckServerOrigin())

	doc, err = openapi.Load(context.Background(), api.URL+"/other.yaml", openapi.LoadOptions{})
	require.NoError(t, err, "the server URL is not the load's business")
	require.EqualError(t, doc.CheckServerOrigin(), "the document's server "+other.URL+"/api is not on the document's origin "+api.URL+"; set upstream explicitly to use it")
}
