package auth

import (
	"context"
	"crypto/elliptic"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
)

const (
	oauthPath = "/.well-known/oauth-authorization-server"
	oidcPath  = "/.well-known/openid-configuration"
)

func TestDiscovery(t *testing.T) {
	key := rsaKey(0, "k1", jwt.SigningMethodRS256)
	for _, tc := range []struct {
		name   string
		path   string   // of the issuer identifier
		served []string // metadata paths served
		want   string   // the one read
		tried  []string // paths that answered 404 first
	}{
		{name: "RFC 8414", served: []string{oauthPath, oidcPath}, want: oauthPath},
		{name: "OpenID fallback", served: []string{oidcPath}, want: oidcPath, tried: []string{oauthPath}},
		{name: "path: RFC 8414 insertion first", path: "/tenant",
			served: []string{oauthPath + "/tenant", "/tenant" + oauthPath, oidcPath + "/tenant", "/tenant" + oidcPath}, want: oauthPath + "/tenant"},
		{name: "path: appended", path: "/tenant", served: []string{"/tenant" + oauthPath, "/tenant" + oidcPath},
			want: "/tenant" + oauthPath, tried: []string{oauthPath + "/tenant"}},
		{name: "path: OpenID insertion", path: "/tenant", served: []string{oidcPath + "/tenant", "/tenant" + oidcPath},
			want: oidcPath + "/tenant", tried: []string{oauthPath + "/tenant", "/tenant" + oauthPath}},
		{name: "path: OpenID appended", path: "/realms/a", served: []string{"/realms/a" + oidcPath},
			want: "/realms/a" + oidcPath, tried: []string{oauthPath + "/realms/a", "/realms/a" + oauthPath, oidcPath + "/realms/a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := newIssuer(t, key)
			is.URL += tc.path
			is.meta = map[string]string{}
			for _, p := range tc.served {
				is.meta[p] = is.URL
			}
			v := is.verifier(t)
			require.Equal(t, 1, is.hitsOf(tc.want))
			for _, p := range tc.tried {
				require.Equal(t, 1, is.hitsOf(p), p)
			}
			for _, p := range tc.served {
				if p != tc.want {
					require.Zero(t, is.hitsOf(p), p)
				}
			}
			_, err := v.Authenticate(request("Bearer " + key.sign(t, is.claims())))
			require.NoError(t, err)
		})
	}
}

func TestDiscoveryRefuses(t *testing.T) {
	key := rsaKey(0, "k1", jwt.SigningMethodRS256)

	t.Run("metadata names another issuer", func(t *testing.T) {
		is := newIssuer(t, key)
		is.meta = map[string]string{oauthPath: "https://evil.example", oidcPath: is.URL}
		_, err := New(t.Context(), Config{Issuer: is.URL, Audiences: []string{audience}})
		require.ErrorContains(t, err, `has issuer "https://evil.example", want "`+is.URL+`"`)
		require.Zero(t, is.hitsOf(oidcPath), "a mismatch stops discovery")
		require.Zero(t, is.jwksHits.Load())
	})
	t.Run("metadata issuer with a trailing slash", func(t *testing.T) {
		is := newIssuer(t, key)
		is.meta = map[string]string{oauthPath: is.URL + "/"}
		_, err := New(t.Context(), Config{Issuer: is.URL, Audiences: []string{audience}})
		require.ErrorContains(t, err, "has issuer")
	})
	t.Run("no metadata", func(t *testing.T) {
		is := newIssuer(t, key)
		is.meta = map[string]string{}
		_, err := New(t.Context(), Config{Issuer: is.URL, Audiences: []string{audience}})
		require.ErrorContains(t, err, "no authorization server metadata for issuer "+is.URL)
		require.ErrorContains(t, err, "GET "+is.URL+oauthPath+": status 404")
		require.ErrorContains(t, err, "GET "+is.URL+oidcPath+": status 404")
	})
	t.Run("issuer unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		_, err := New(t.Context(), Config{Issuer: srv.URL, Audiences: []string{audience}})
		require.ErrorContains(t, err, "GET "+srv.URL+oauthPath)
	})
	t.Run("JWKS unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		is := newIssuer(t, key)
		_, err := New(t.Context(), Config{Issuer: is.URL, JWKSURL: srv.URL + "/jwks", Audiences: []string{audience}})
		require.ErrorContains(t, err, "auth: fetch JWKS "+srv.URL+"/jwks")
		require.Zero(t, is.hitsOf(oauthPath), "a configured JWKS URL skips discovery")
	})
	t.Run("JWKS fails", func(t *testing.T) {
		is := newIssuer(t, key)
		is.status = http.StatusServiceUnavailable
		_, err := New(t.Context(), Config{Issuer: is.URL, Audiences: []string{audience}})
		require.ErrorContains(t, err, "auth: fetch JWKS "+is.URL+"/jwks")
		require.ErrorContains(t, err, "503")
	})
	t.Run("JWKS empty", func(t *testing.T) {
		is := newIssuer(t)
		_, err := New(t.Context(), Config{Issuer: is.URL, Audiences: []string{audience}})
		require.ErrorContains(t, err, "auth: JWKS "+is.URL+"/jwks has no key this verifier can use")
	})
	t.Run("JWKS URL with a password", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		u := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1) + "/jwks"
		_, err := New(t.Context(), Config{Issuer: srv.URL, JWKSURL: u, Audiences: []string{audience}})
		require.Error(t, err)
		require.NotContains(t, err.Error(), "hunter2")
		require.ErrorContains(t, err, "user:xxxxx@")
	})

	// Odd documents, served by hand.
	for _, tc := range []struct {
		name string
		doc  func(base string) string
		want string
	}{
		{"no jwks_uri", func(base string) string { return `{"issuer":"` + base + `"}` }, "has no jwks_uri"},
		{"jwks_uri not a URL", func(base string) string {
			return `{"issuer":"` + base + `","jwks_uri":"/jwks"}`
		}, "jwks_uri: /jwks is not an http or https URL"},
		{"not JSON", func(string) string { return `<html>` }, "decode metadata"},
		{"too large", func(base string) string {
			return `{"issuer":"` + base + `","x":"` + strings.Repeat("a", maxDocument) + `"}`
		}, "decode metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var base string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(tc.doc(base)))
			}))
			defer srv.Close()
			base = srv.URL
			_, err := New(t.Context(), Config{Issuer: base, Audiences: []string{audience}})
			require.ErrorContains(t, err, tc.want)
		})
	}

	t.Run("https issuer, http jwks_uri", func(t *testing.T) {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": "https://" + r.Host, "jwks_uri": "http://" + r.Host + "/jwks"})
		}))
		defer srv.Close()
		_, err := New(t.Context(), Config{Issuer: srv.URL, Audiences: []string{audience}, HTTPClient: srv.Client()})
		require.ErrorContains(t, err, "is not https")
	})
}

func TestDiscoveryOverTLS(t *testing.T) {
	key := ecKey(t, "e1", elliptic.P256(), jwt.SigningMethodES256)
	set := jwksJSON(t, key)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case oauthPath:
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": "https://" + r.Host, "jwks_uri": "https://" + r.Host + "/jwks"})
		case "/jwks":
			_, _ = w.Write(set)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	v, err := New(t.Context(), Config{Issuer: srv.URL, Audiences: []string{audience}, HTTPClient: srv.Client(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer v.Close()
	c := jwt.MapClaims{"iss": srv.URL, "sub": "bob", "aud": audience, "exp": time.Now().Add(time.Minute).Unix()}
	p, err := v.Authenticate(request("Bearer " + key.sign(t, c)))
	require.NoError(t, err)
	require.Equal(t, "bob", p.Subject)
}

// TestNewFailureStopsRefresh: jwkset starts its refresh loop before its
// first fetch; when that fetch fails New must end the loop, which the
// bubble would otherwise report as a goroutine left blocked.
func TestNewFailureStopsRefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := New(context.Background(), Config{
			Issuer:     fakeIssuerURL,
			JWKSURL:    fakeIssuerURL + "/jwks",
			Audiences:  []string{audience},
			HTTPClient: &http.Client{Transport: &fakeJWKS{set: []byte("not json")}},
		})
		require.ErrorContains(t, err, "auth: fetch JWKS "+fakeIssuerURL+"/jwks")
	})
}

func TestMetadataURLs(t *testing.T) {
	require.Equal(t, []string{"https://a.example" + oauthPath, "https://a.example" + oidcPath}, metadataURLs("https://a.example"))
	require.Equal(t, []string{"https://a.example" + oauthPath, "https://a.example" + oidcPath}, metadataURLs("https://a.example/"))
	require.Equal(t, []string{
		"https://a.example" + oauthPath + "/t/1",
		"https://a.example/t/1" + oauthPath,
		"https://a.example" + oidcPath + "/t/1",
		"https://a.example/t/1" + oidcPath,
	}, metadataURLs("https://a.example/t/1"))
}
