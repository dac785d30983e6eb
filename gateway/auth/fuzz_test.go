package auth

import (
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
)

// FuzzAuthenticate feeds arbitrary Authorization headers and query
// strings to Authenticate. No seed is a token the verifier accepts (each
// is refused for a signed claim, a foreign key or its form), so a mutation
// that is accepted would be a forgery. Nothing may panic, and every
// refusal must be a well-formed Failure.
func FuzzAuthenticate(f *testing.F) {
	rs := rsaKey(0, "rs", jwt.SigningMethodRS256)
	es := ecKey(f, "es", elliptic.P256(), jwt.SigningMethodES256)
	ed := edKey(f, "ed")
	forger := rsaKey(1, "rs", jwt.SigningMethodRS256)
	secret := []byte("0123456789abcdef0123456789abcdef")
	is := newIssuer(f, rs, es, ed)
	v := is.verifier(f, func(c *Config) { c.HS256Secret = secret })
	anon := is.verifier(f, func(c *Config) {
		c.HS256Secret = secret
		c.Anonymous = true
	})

	claims := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := is.claims()
		c["exp"] = time.Now().Add(-time.Hour).Unix() // refused, whatever else changes
		if edit != nil {
			c = is.claims()
			edit(c)
		}
		return c
	}
	der, err := x509.MarshalPKIXPublicKey(rs.pub)
	require.NoError(f, err)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	enc := base64.RawURLEncoding
	payload := enc.EncodeToString([]byte(`{"iss":"` + is.URL + `","sub":"alice","aud":"` + audience + `","exp":9999999999}`))
	seeds := []string{
		"",
		"Bearer",
		"Bearer ",
		" \t ",
		"bearer a.b.c",
		"Basic YWxpY2U6cHc=",
		"Bearer " + rs.sign(f, claims(nil)),
		"Bearer " + es.sign(f, claims(nil)),
		"Bearer " + ed.sign(f, claims(nil)),
		"Bearer " + testKey{method: jwt.SigningMethodHS256, priv: secret}.sign(f, claims(nil)),
		"Bearer " + rs.sign(f, claims(func(c jwt.MapClaims) { c["aud"] = "https://other.example" })),
		"Bearer " + es.sign(f, claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })),
		"Bearer " + ed.sign(f, claims(func(c jwt.MapClaims) { delete(c, "sub") })),
		"Bearer " + rs.sign(f, claims(func(c jwt.MapClaims) { delete(c, "exp") })),
		"Bearer " + es.sign(f, claims(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() })),
		"Bearer " + forger.sign(f, is.claims()),
		"Bearer " + forger.withKID("").sign(f, is.claims()),
		"Bearer " + testKey{kid: "rs", method: jwt.SigningMethodHS256, priv: pemBytes}.sign(f, is.claims()),
		"Bearer " + testKey{kid: "rs", method: jwt.SigningMethodHS256, priv: der}.sign(f, is.claims()),
		"Bearer " + testKey{method: jwt.SigningMethodHS256, priv: []byte("fedcba9876543210fedcba9876543210")}.sign(f, is.claims()),
		"Bearer " + enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + payload + ".",
		"Bearer " + enc.EncodeToString([]byte(`{"alg":"RS256","kid":"rs"}`)) + "." + payload + "." + enc.EncodeToString(make([]byte, 256)),
		"Bearer " + enc.EncodeToString([]byte(`{"alg":"ES256","kid":"es"}`)) + "." + payload + "." + enc.EncodeToString(make([]byte, 64)),
		"Bearer " + enc.EncodeToString([]byte(`{"alg":"EdDSA","kid":"ed"}`)) + "." + payload + "." + enc.EncodeToString(make([]byte, 64)),
		"Bearer " + enc.EncodeToString([]byte(`{"alg":"HS256","kid":"es"}`)) + "." + payload + "." + enc.EncodeToString(make([]byte, 32)),
		"Bearer " + enc.EncodeToString([]byte(`{"alg":"RS256","kid":["rs"]}`)) + "." + payload + ".",
		"Bearer " + enc.EncodeToString([]byte(`{"alg":"RS256","crit":["x"]}`)) + "." + payload + ".",
		"Bearer " + enc.EncodeToString([]byte(`{"alg":17}`)) + "." + payload + ".",
		"Bearer " + enc.EncodeToString([]byte(`{}`)) + "." + enc.EncodeToString([]byte(`{"scope":7}`)) + ".",
		"Bearer ..",
		"Bearer a.b.c.d",
		"Bearer " + strings.Repeat("A", 4096) + "==",
		"Bearer \x00\r\n",
		"Bearer é",
	}
	for _, s := range seeds {
		f.Add(s, "")
	}
	f.Add("", "access_token=x")
	f.Add("Bearer "+rs.sign(f, claims(nil)), "access%5Ftoken=x&a=%zz")

	f.Fuzz(func(t *testing.T, authorization, query string) {
		for _, verifier := range []*Verifier{v, anon} {
			r := request()
			if authorization != "" {
				r.Header.Set("Authorization", authorization)
			}
			r.URL.RawQuery = query
			p, err := verifier.Authenticate(r)
			if verifier == anon && strings.Trim(authorization, " \t") == "" && p == nil && err == nil {
				continue
			}
			if p != nil {
				t.Fatalf("accepted %q as %+v", authorization, p.Subject)
			}
			fl, ok := err.(*Failure)
			if !ok {
				t.Fatalf("error %T %v is not a *Failure", err, err)
			}
			switch {
			case fl.Status == http.StatusUnauthorized && (fl.Code == "" || fl.Code == CodeInvalidToken):
			case fl.Status == http.StatusBadRequest && fl.Code == CodeInvalidRequest:
			default:
				t.Fatalf("status %d with code %q", fl.Status, fl.Code)
			}
			if fl.Description == "" {
				t.Fatal("no description")
			}
			if _, token, _ := strings.Cut(authorization, " "); len(token) >= 8 && strings.Contains(fl.Error(), token) {
				t.Fatalf("the description %q repeats the token", fl.Error())
			}
			checkHeaderValue(t, fl.WWWAuthenticate())
		}
	})
}

// FuzzWWWAuthenticate: whatever a description or URL holds, the challenge
// is one printable-ASCII header value whose parameters parse back to the
// values, with the bytes a header cannot carry replaced.
func FuzzWWWAuthenticate(f *testing.F) {
	f.Add("the token has expired", "https://gw.example/.well-known/oauth-protected-resource/mcp", "a b")
	f.Add(`"quoted" \back\ "`, "https://x/\"", `s"\`)
	f.Add("line\r\nSet-Cookie: a=b", "\x00\x7f\xff", "\t")
	f.Add("", "", "")
	f.Add("é", "ü", "ß")
	f.Fuzz(func(t *testing.T, description, url, scope string) {
		fl := &Failure{Code: CodeInvalidToken, Description: description, ResourceMetadata: url}
		h := fl.WWWAuthenticate()
		checkHeaderValue(t, h)
		params := parseChallenge(t, h)
		want := map[string]string{"error": CodeInvalidToken}
		if description != "" {
			want["error_description"] = printable(description)
		}
		if url != "" {
			want["resource_metadata"] = printable(url)
		}
		require.Equal(t, want, params)

		h = InsufficientScope([]string{scope}, url)
		checkHeaderValue(t, h)
		params = parseChallenge(t, h)
		want = map[string]string{"error": CodeInsufficientScope}
		if scope != "" {
			want["scope"] = printable(scope)
		}
		if url != "" {
			want["resource_metadata"] = printable(url)
		}
		require.Equal(t, want, params)
	})
}

// checkHeaderValue fails unless h is printable ASCII (which no header
// injection, and no RFC 6750 parameter violation, can be).
func checkHeaderValue(t *testing.T, h string) {
	t.Helper()
	for i := 0; i < len(h); i++ {
		if h[i] < 0x20 || h[i] >= 0x7f {
			t.Fatalf("WWW-Authenticate %q has byte %#x", h, h[i])
		}
	}
	if !strings.HasPrefix(h, "Bearer") {
		t.Fatalf("WWW-Authenticate %q is not a Bearer challenge", h)
	}
}

// printable is s as writeQuoted carries it, unescaped.
func printable(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c >= 0x7f {
			b[i] = '?'
		}
	}
	return string(b)
}

// parseChallenge parses `Bearer k="v", k="v"` strictly (RFC 9110
// quoted-strings), independently of the code that writes it.
func parseChallenge(t *testing.T, h string) map[string]string {
	t.Helper()
	rest, ok := strings.CutPrefix(h, "Bearer")
	require.True(t, ok)
	out := map[string]string{}
	if rest == "" {
		return out
	}
	rest, ok = strings.CutPrefix(rest, " ")
	require.True(t, ok, "challenge %q", h)
	for {
		name, after, ok := strings.Cut(rest, `="`)
		require.True(t, ok, "challenge %q", h)
		var v strings.Builder
		i := 0
		for ; i < len(after) && after[i] != '"'; i++ {
			if after[i] == '\\' {
				i++
				require.Less(t, i, len(after), "challenge %q", h)
			}
			v.WriteByte(after[i])
		}
		require.Less(t, i, len(after), "unterminated value in %q", h)
		_, dup := out[name]
		require.False(t, dup, "parameter %s twice in %q", name, h)
		out[name] = v.String()
		rest = after[i+1:]
		if rest == "" {
			return out
		}
		rest, ok = strings.CutPrefix(rest, ", ")
		require.True(t, ok, "challenge %q", h)
	}
}
