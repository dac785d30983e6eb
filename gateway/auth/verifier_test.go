package auth

import (
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

func TestAuthenticateAcceptsEachKeyType(t *testing.T) {
	keys := []testKey{
		rsaKey(0, "rs", jwt.SigningMethodRS256),
		rsaKey(1, "ps", jwt.SigningMethodPS256),
		ecKey(t, "es256", elliptic.P256(), jwt.SigningMethodES256),
		ecKey(t, "es384", elliptic.P384(), jwt.SigningMethodES384),
		edKey(t, "ed"),
	}
	is := newIssuer(t, keys...)
	v := is.verifier(t)
	for _, k := range keys {
		t.Run(k.method.Alg(), func(t *testing.T) {
			// With its kid, and without (any key that fits may verify it).
			for _, k := range []testKey{k, k.withKID("")} {
				raw := k.sign(t, is.claims())
				p, err := v.Authenticate(request("Bearer " + raw))
				require.NoError(t, err, "kid %q", k.kid)
				require.Equal(t, &mcp.Principal{
					Subject:  "alice",
					Scopes:   []string{"files:read", "files:write"},
					Issuer:   is.URL,
					ClientID: "client-1",
					Claims:   map[string]any{"sub": "alice", "iss": is.URL, "aud": []string{audience}, "client_id": "client-1"},
					Token:    raw,
				}, p)
			}
		})
	}
}

func TestAuthenticatePrincipal(t *testing.T) {
	key := rsaKey(0, "k1", jwt.SigningMethodRS256)
	is := newIssuer(t, key)
	v := is.verifier(t)
	long := strings.Repeat("g", maxClaimBytes+1)
	many := make([]any, maxClaimList+5)
	for i := range many {
		many[i] = "r"
	}
	for _, tc := range []struct {
		name     string
		edit     func(jwt.MapClaims)
		scopes   []string
		clientID string
		claims   map[string]any // beyond sub, iss, aud
	}{
		{name: "scope string", scopes: []string{"files:read", "files:write"}, clientID: "client-1",
			claims: map[string]any{"client_id": "client-1"}},
		{name: "scope with odd spacing", edit: func(c jwt.MapClaims) { c["scope"] = "  a   b\tc " },
			scopes: []string{"a", "b", "c"}, clientID: "client-1", claims: map[string]any{"client_id": "client-1"}},
		{name: "scp string, azp", edit: func(c jwt.MapClaims) {
			delete(c, "scope")
			delete(c, "client_id")
			c["scp"] = "x y"
			c["azp"] = "app"
		}, scopes: []string{"x", "y"}, clientID: "app", claims: map[string]any{"azp": "app"}},
		{name: "scp array", edit: func(c jwt.MapClaims) {
			delete(c, "scope")
			c["scp"] = []string{"x", "", "y"}
		}, scopes: []string{"x", "y"}, clientID: "client-1", claims: map[string]any{"client_id": "client-1"}},
		{name: "scope wins over scp", edit: func(c jwt.MapClaims) { c["scp"] = []string{"other"} },
			scopes: []string{"files:read", "files:write"}, clientID: "client-1", claims: map[string]any{"client_id": "client-1"}},
		{name: "no scope", edit: func(c jwt.MapClaims) { delete(c, "scope") },
			clientID: "client-1", claims: map[string]any{"client_id": "client-1"}},
		{name: "client_id wins over azp", edit: func(c jwt.MapClaims) { c["azp"] = "app" },
			scopes: []string{"files:read", "files:write"}, clientID: "client-1",
			claims: map[string]any{"client_id": "client-1", "azp": "app"}},
		{name: "descriptive claims", edit: func(c jwt.MapClaims) {
			c["email"] = "alice@example.com"
			c["name"] = "Alice"
			c["groups"] = []any{"admins", 7, "", long, "dev"}
			c["roles"] = "reader"
		}, scopes: []string{"files:read", "files:write"}, clientID: "client-1", claims: map[string]any{
			"client_id": "client-1", "email": "alice@example.com", "name": "Alice",
			"groups": []string{"admins", "dev"}, "roles": []string{"reader"},
		}},
		{name: "descriptive claims of odd shape or size are dropped", edit: func(c jwt.MapClaims) {
			c["email"] = 42
			c["name"] = long
			c["groups"] = map[string]any{"a": 1}
			c["roles"] = many
		}, scopes: []string{"files:read", "files:write"}, clientID: "client-1", claims: map[string]any{
			"client_id": "client-1", "roles": strings.Split(strings.Repeat("r", maxClaimList), ""),
		}},
		{name: "several audiences", edit: func(c jwt.MapClaims) { c["aud"] = []string{"https://other.example", audience} },
			scopes: []string{"files:read", "files:write"}, clientID: "client-1",
			claims: map[string]any{"client_id": "client-1", "aud": []string{"https://other.example", audience}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := is.claims()
			if tc.edit != nil {
				tc.edit(c)
			}
			p, err := v.Authenticate(request("Bearer " + key.sign(t, c)))
			require.NoError(t, err)
			require.Equal(t, tc.scopes, []string(p.Scopes))
			require.Equal(t, tc.clientID, p.ClientID)
			want := map[string]any{"sub": "alice", "iss": is.URL, "aud": []string{audience}}
			for k, v := range tc.claims {
				want[k] = v
			}
			require.Equal(t, want, p.Claims)
		})
	}
}

// reasons are the Failure reasons of the refusals, by description.
var reasons = map[string]string{
	"the token has expired":                                                      ReasonExpired,
	"the token is not valid yet":                                                 ReasonNotYetValid,
	"the token was issued in the future":                                         ReasonNotYetValid,
	"the token is from another issuer":                                           ReasonWrongIssuer,
	"the token has no issuer":                                                    ReasonMissingClaim,
	"the token is not meant for this resource":                                   ReasonWrongAudience,
	"the token has no audience":                                                  ReasonMissingClaim,
	"the token has no expiry time":                                               ReasonMissingClaim,
	"the token has no subject":                                                   ReasonMissingClaim,
	"the token is malformed":                                                     ReasonMalformedToken,
	"the token is too large":                                                     ReasonMalformedToken,
	"the token's signing algorithm is not accepted":                              ReasonInvalidSignature,
	"the token's signature is invalid":                                           ReasonInvalidSignature,
	"the token's signing key is unknown":                                         ReasonInvalidSignature,
	"the token's signing key does not fit its algorithm":                         ReasonInvalidSignature,
	"the token has critical header parameters this resource does not understand": ReasonMalformedToken,
}

func TestAuthenticateRefusesBadTokens(t *testing.T) {
	key := rsaKey(0, "k1", jwt.SigningMethodRS256)
	ec := ecKey(t, "e1", elliptic.P256(), jwt.SigningMethodES256)
	forger := rsaKey(1, "k1", jwt.SigningMethodRS256)
	bare := ecKey(t, "bare", elliptic.P256(), nil) // a JWK without alg or use
	bare.use = "-"
	enc := rsaKey(2, "enc", jwt.SigningMethodRS256) // a JWK for encryption
	enc.use = jwkset.UseEnc
	is := newIssuer(t, key, ec, bare, enc)
	v := is.verifier(t)
	now := time.Now()
	der, err := x509.MarshalPKIXPublicKey(key.pub)
	require.NoError(t, err)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})

	signed := func(edit func(jwt.MapClaims)) func(t *testing.T) string {
		return func(t *testing.T) string {
			c := is.claims()
			edit(c)
			return key.sign(t, c)
		}
	}
	hmacWith := func(secret []byte) func(t *testing.T) string {
		return func(t *testing.T) string {
			return testKey{kid: "k1", method: jwt.SigningMethodHS256, priv: secret}.sign(t, is.claims())
		}
	}
	for _, tc := range []struct {
		name  string
		token func(t *testing.T) string
		why   string
	}{
		{"expired beyond the skew", signed(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() }), "the token has expired"},
		{"not valid yet", signed(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Minute).Unix() }), "the token is not valid yet"},
		{"issued in the future", signed(func(c jwt.MapClaims) { c["iat"] = now.Add(time.Minute).Unix() }), "the token was issued in the future"},
		{"wrong issuer", signed(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }), "the token is from another issuer"},
		{"issuer differs by a slash", signed(func(c jwt.MapClaims) { c["iss"] = is.URL + "/" }), "the token is from another issuer"},
		{"no issuer", signed(func(c jwt.MapClaims) { delete(c, "iss") }), "the token has no issuer"},
		{"wrong audience", signed(func(c jwt.MapClaims) { c["aud"] = "https://other.example/mcp" }), "the token is not meant for this resource"},
		{"wrong audiences", signed(func(c jwt.MapClaims) { c["aud"] = []string{"a", "b"} }), "the token is not meant for this resource"},
		{"no audience", signed(func(c jwt.MapClaims) { delete(c, "aud") }), "the token has no audience"},
		{"wrong audience and expired: audience wins", signed(func(c jwt.MapClaims) {
			c["aud"] = "x"
			c["exp"] = now.Add(-time.Hour).Unix()
		}), "the token is not meant for this resource"},
		{"no exp", signed(func(c jwt.MapClaims) { delete(c, "exp") }), "the token has no expiry time"},
		{"no sub", signed(func(c jwt.MapClaims) { delete(c, "sub") }), "the token has no subject"},
		{"empty sub", signed(func(c jwt.MapClaims) { c["sub"] = "" }), "the token has no subject"},
		{"exp of the wrong type", signed(func(c jwt.MapClaims) { c["exp"] = "tomorrow" }), "the token is malformed"},
		{"scope of the wrong type", signed(func(c jwt.MapClaims) { c["scope"] = 7 }), "the token is malformed"},
		{"alg none", func(t *testing.T) string {
			enc := base64.RawURLEncoding
			payload, err := jwt.NewWithClaims(jwt.SigningMethodNone, is.claims()).SigningString()
			require.NoError(t, err)
			_, body, _ := strings.Cut(payload, ".")
			return enc.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + body + "."
		}, "the token's signing algorithm is not accepted"},
		{"alg None", func(t *testing.T) string {
			_, body, _ := strings.Cut(key.sign(t, is.claims()), ".")
			body, _, _ = strings.Cut(body, ".")
			return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"None"}`)) + "." + body + "."
		}, "the token's signing algorithm is not accepted"},
		{"HS256 with the RSA key's PEM as secret", hmacWith(pemBytes), "the token's signing algorithm is not accepted"},
		{"HS256 with the RSA key's DER as secret", hmacWith(der), "the token's signing algorithm is not accepted"},
		{"signed by a key not in the JWKS under a known kid", func(t *testing.T) string { return forger.sign(t, is.claims()) }, "the token's signature is invalid"},
		{"signed by a key not in the JWKS without kid", func(t *testing.T) string {
			return forger.withKID("").sign(t, is.claims())
		}, "the token's signature is invalid"},
		{"unknown kid", func(t *testing.T) string { return forger.withKID("nope").sign(t, is.claims()) }, "the token's signing key is unknown"},
		{"RS256 naming the EC key", func(t *testing.T) string { return key.withKID("e1").sign(t, is.claims()) }, "the token's signing key does not fit its algorithm"},
		{"PS256 naming the RS256 key", func(t *testing.T) string {
			return testKey{kid: "k1", method: jwt.SigningMethodPS256, priv: key.priv}.sign(t, is.claims())
		}, "the token's signing key does not fit its algorithm"},
		{"ES384 naming the P-256 key", func(t *testing.T) string {
			return testKey{kid: "e1", method: jwt.SigningMethodES384, priv: ecKey(t, "", elliptic.P384(), nil).priv}.sign(t, is.claims())
		}, "the token's signing key does not fit its algorithm"},
		{"RS256 naming an EC key without alg", func(t *testing.T) string { return key.withKID("bare").sign(t, is.claims()) }, "the token's signing key does not fit its algorithm"},
		{"ES384 naming a P-256 key without alg", func(t *testing.T) string {
			return testKey{kid: "bare", method: jwt.SigningMethodES384, priv: ecKey(t, "", elliptic.P384(), nil).priv}.sign(t, is.claims())
		}, "the token's signing key does not fit its algorithm"},
		{"signed by an encryption key", func(t *testing.T) string { return enc.sign(t, is.claims()) }, "the token's signing key does not fit its algorithm"},
		{"tampered payload", func(t *testing.T) string {
			parts := strings.Split(key.sign(t, is.claims()), ".")
			c := is.claims()
			c["sub"] = "root"
			forged, err := jwt.NewWithClaims(jwt.SigningMethodRS256, c).SigningString()
			require.NoError(t, err)
			return parts[0] + "." + strings.Split(forged, ".")[1] + "." + parts[2]
		}, "the token's signature is invalid"},
		{"critical header", func(t *testing.T) string {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, is.claims())
			tok.Header["kid"] = "k1"
			tok.Header["crit"] = []string{"exp"}
			s, err := tok.SignedString(key.priv)
			require.NoError(t, err)
			return s
		}, "the token has critical header parameters this resource does not understand"},
		{"kid not a string", func(t *testing.T) string {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, is.claims())
			tok.Header["kid"] = 7
			s, err := tok.SignedString(key.priv)
			require.NoError(t, err)
			return s
		}, "the token is malformed"},
		{"two segments", func(t *testing.T) string { return "abc.def" }, "the token is malformed"},
		{"header not JSON", func(t *testing.T) string { return "YWJj.YWJj.YWJj" }, "the token is malformed"},
		{"characters outside b64token", func(t *testing.T) string { return "a.b.c!" }, "the token is malformed"},
		{"too large", func(t *testing.T) string { return strings.Repeat("a", maxTokenBytes+1) }, "the token is too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.token(t)
			p, err := v.Authenticate(request("Bearer " + raw))
			require.Nil(t, p)
			f := failureOf(t, err)
			require.Equal(t, http.StatusUnauthorized, f.Status)
			require.Equal(t, CodeInvalidToken, f.Code)
			require.Equal(t, tc.why, f.Description)
			require.Equal(t, tc.why, f.Error())
			require.Equal(t, reasons[tc.why], f.FailureReason(), "the metrics' reason")
			require.Equal(t, `Bearer error="invalid_token", error_description="`+tc.why+`", resource_metadata="`+metadataURL+`"`, f.WWWAuthenticate())
			require.NotContains(t, f.Error(), raw)
		})
	}
}

func TestAuthenticateClockSkew(t *testing.T) {
	key := ecKey(t, "e1", elliptic.P256(), jwt.SigningMethodES256)
	is := newIssuer(t, key)
	now := time.Now()
	for _, tc := range []struct {
		name string
		skew time.Duration
		edit func(jwt.MapClaims)
		ok   bool
	}{
		{"expired within the default skew", 0, func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Second).Unix() }, true},
		{"expired beyond the default skew", 0, func(c jwt.MapClaims) { c["exp"] = now.Add(-45 * time.Second).Unix() }, false},
		{"expired within a larger skew", 2 * time.Minute, func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() }, true},
		{"nbf within the skew", 0, func(c jwt.MapClaims) { c["nbf"] = now.Add(10 * time.Second).Unix() }, true},
		{"nbf beyond the skew", 0, func(c jwt.MapClaims) { c["nbf"] = now.Add(45 * time.Second).Unix() }, false},
		{"iat within the skew", 0, func(c jwt.MapClaims) { c["iat"] = now.Add(10 * time.Second).Unix() }, true},
		{"iat beyond the skew", 0, func(c jwt.MapClaims) { c["iat"] = now.Add(45 * time.Second).Unix() }, false},
		{"no iat", 0, func(c jwt.MapClaims) { delete(c, "iat") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := is.verifier(t, func(c *Config) { c.ClockSkew = tc.skew })
			c := is.claims()
			tc.edit(c)
			p, err := v.Authenticate(request("Bearer " + key.sign(t, c)))
			if tc.ok {
				require.NoError(t, err)
				require.Equal(t, "alice", p.Subject)
				return
			}
			failureOf(t, err)
		})
	}
}

func TestAuthenticateHS256(t *testing.T) {
	key := rsaKey(0, "k1", jwt.SigningMethodRS256)
	secret := []byte("0123456789abcdef0123456789abcdef")
	oct := testKey{kid: "oct", method: jwt.SigningMethodHS256, priv: []byte("a symmetric key that sits in the JWKS!"), pub: []byte("a symmetric key that sits in the JWKS!")}
	is := newIssuer(t, key, oct)
	hs := func(secret []byte, kid string) string {
		return testKey{kid: kid, method: jwt.SigningMethodHS256, priv: secret}.sign(t, is.claims())
	}
	der, err := x509.MarshalPKIXPublicKey(key.pub)
	require.NoError(t, err)

	t.Run("refused without a secret", func(t *testing.T) {
		v := is.verifier(t)
		_, err := v.Authenticate(request("Bearer " + hs(secret, "")))
		require.Equal(t, "the token's signing algorithm is not accepted", failureOf(t, err).Description)
	})
	t.Run("accepted with the secret", func(t *testing.T) {
		v := is.verifier(t, func(c *Config) { c.HS256Secret = secret })
		p, err := v.Authenticate(request("Bearer " + hs(secret, "")))
		require.NoError(t, err)
		require.Equal(t, "alice", p.Subject)

		// The kid of a JWKS key does not make an HMAC token use it.
		p, err = v.Authenticate(request("Bearer " + hs(secret, "k1")))
		require.NoError(t, err)
		require.Equal(t, "alice", p.Subject)

		// Asymmetric tokens still verify with the JWKS.
		p, err = v.Authenticate(request("Bearer " + key.sign(t, is.claims())))
		require.NoError(t, err)
		require.Equal(t, "alice", p.Subject)

		// An RS256 header over an HMAC of the secret.
		signing, err := jwt.NewWithClaims(jwt.SigningMethodRS256, is.claims()).SigningString()
		require.NoError(t, err)
		mac, err := jwt.SigningMethodHS256.Sign(signing, secret)
		require.NoError(t, err)
		for name, tok := range map[string]string{
			"another secret":             hs([]byte("fedcba9876543210fedcba9876543210"), ""),
			"the RSA key's DER":          hs(der, "k1"),
			"the JWKS's oct key":         hs(oct.priv.([]byte), "oct"),
			"RS256 naming the oct key":   key.withKID("oct").sign(t, is.claims()),
			"RS256 signed by the secret": signing + "." + base64.RawURLEncoding.EncodeToString(mac),
		} {
			_, err := v.Authenticate(request("Bearer " + tok))
			f := failureOf(t, err)
			require.Equal(t, CodeInvalidToken, f.Code, name)
		}
	})
	t.Run("only HS256: no discovery, no JWKS", func(t *testing.T) {
		before := is.jwksHits.Load()
		v := is.verifier(t, func(c *Config) {
			c.HS256Secret = secret
			c.Algorithms = []string{"HS256"}
			c.Issuer = is.URL
		})
		require.Equal(t, before, is.jwksHits.Load())
		_, err := v.Authenticate(request("Bearer " + hs(secret, "")))
		require.NoError(t, err)
		_, err = v.Authenticate(request("Bearer " + key.sign(t, is.claims())))
		require.Equal(t, "the token's signing algorithm is not accepted", failureOf(t, err).Description)
	})
	t.Run("secret unused when HS256 is not listed", func(t *testing.T) {
		v := is.verifier(t, func(c *Config) {
			c.HS256Secret = secret
			c.Algorithms = []string{"RS256"}
		})
		_, err := v.Authenticate(request("Bearer " + hs(secret, "")))
		require.Equal(t, "the token's signing algorithm is not accepted", failureOf(t, err).Description)
	})
}

func TestAuthenticateAlgorithmsConfigured(t *testing.T) {
	rs := rsaKey(0, "k1", jwt.SigningMethodRS256)
	es := ecKey(t, "e1", elliptic.P256(), jwt.SigningMethodES256)
	is := newIssuer(t, rs, es)
	v := is.verifier(t, func(c *Config) { c.Algorithms = []string{"ES256"} })
	_, err := v.Authenticate(request("Bearer " + es.sign(t, is.claims())))
	require.NoError(t, err)
	_, err = v.Authenticate(request("Bearer " + rs.sign(t, is.claims())))
	require.Equal(t, "the token's signing algorithm is not accepted", failureOf(t, err).Description)
}

func TestNewRefusesBadConfig(t *testing.T) {
	is := newIssuer(t, rsaKey(0, "k1", jwt.SigningMethodRS256))
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no issuer", func(c *Config) { c.Issuer = "" }, "no issuer"},
		{"issuer not a URL", func(c *Config) { c.Issuer = "issuer" }, "issuer"},
		{"issuer with query", func(c *Config) { c.Issuer = is.URL + "?a=b" }, "no query"},
		{"issuer with fragment", func(c *Config) { c.Issuer = is.URL + "#a" }, "fragment"},
		{"issuer with user info", func(c *Config) { c.Issuer = "https://u:p@issuer.example" }, "no query and no user info"},
		{"no audience", func(c *Config) { c.Audiences = nil }, "audiences"},
		{"empty audience", func(c *Config) { c.Audiences = []string{audience, ""} }, "audiences"},
		{"none", func(c *Config) { c.Algorithms = []string{"RS256", "none"} }, `"none" is never accepted`},
		{"HS256 without a secret", func(c *Config) { c.Algorithms = []string{"HS256"} }, "needs an HS256 secret"},
		{"HS512", func(c *Config) {
			c.Algorithms = []string{"HS512"}
			c.HS256Secret = make([]byte, 64)
		}, "HS256 only"},
		{"short secret", func(c *Config) { c.HS256Secret = []byte("short") }, "at least 32 bytes"},
		{"unknown algorithm", func(c *Config) { c.Algorithms = []string{"RS1024"} }, `unknown algorithm "RS1024"`},
		{"negative skew", func(c *Config) { c.ClockSkew = -time.Second }, "negative"},
		{"JWKS URL not http", func(c *Config) { c.JWKSURL = "file:///etc/keys" }, "JWKS URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Issuer: is.URL, Audiences: []string{audience}}
			tc.edit(&cfg)
			v, err := New(t.Context(), cfg)
			require.Nil(t, v)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestAuthenticateRequestShape(t *testing.T) {
	key := rsaKey(0, "k1", jwt.SigningMethodRS256)
	is := newIssuer(t, key)
	v := is.verifier(t)
	anon := is.verifier(t, func(c *Config) { c.Anonymous = true })
	good := key.sign(t, is.claims())
	const noToken = `Bearer resource_metadata="` + metadataURL + `"`
	for _, tc := range []struct {
		name   string
		req    func() *http.Request
		status int    // 0: accepted
		code   string // of the failure
		anonOK bool   // anonymous access lets it through without a principal
		header string // WWW-Authenticate, when not the generic one
	}{
		{name: "good", req: func() *http.Request { return request("Bearer " + good) }},
		{name: "scheme in lower case", req: func() *http.Request { return request("bearer " + good) }},
		{name: "scheme in upper case, two spaces", req: func() *http.Request { return request("BEARER  " + good) }},
		{name: "no token", req: func() *http.Request { return request() }, status: 401, anonOK: true, header: noToken},
		{name: "empty header", req: func() *http.Request { return request("") }, status: 401, anonOK: true, header: noToken},
		{name: "other scheme", req: func() *http.Request { return request("Basic YWxpY2U6cHc=") }, status: 401, header: noToken},
		{name: "scheme only", req: func() *http.Request { return request("Bearer") }, status: 400, code: CodeInvalidRequest},
		{name: "scheme and spaces", req: func() *http.Request { return request("Bearer   ") }, status: 400, code: CodeInvalidRequest},
		{name: "two headers", req: func() *http.Request { return request("Bearer "+good, "Bearer "+good) }, status: 400, code: CodeInvalidRequest},
		{name: "token in query", req: func() *http.Request {
			r := request()
			r.URL.RawQuery = "access_token=" + good
			return r
		}, status: 400, code: CodeInvalidRequest},
		{name: "token in query, key escaped", req: func() *http.Request {
			r := request()
			r.URL.RawQuery = "x=1&access%5Ftoken=" + good
			return r
		}, status: 400, code: CodeInvalidRequest},
		{name: "token in query and header", req: func() *http.Request {
			r := request("Bearer " + good)
			r.URL.RawQuery = "access_token=" + good
			return r
		}, status: 400, code: CodeInvalidRequest},
		{name: "other query parameters", req: func() *http.Request {
			r := request("Bearer " + good)
			r.URL.RawQuery = "session_id=1&x=%20"
			return r
		}},
		{name: "form body", req: func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, audience, strings.NewReader("access_token="+good))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
			return r
		}, status: 400, code: CodeInvalidRequest},
		{name: "bad token", req: func() *http.Request { return request("Bearer " + good + "x") }, status: 401, code: CodeInvalidToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, anonymous := range []bool{false, true} {
				verifier := v
				if anonymous {
					verifier = anon
				}
				p, err := verifier.Authenticate(tc.req())
				switch {
				case tc.status == 0:
					require.NoError(t, err)
					require.Equal(t, "alice", p.Subject)
				case anonymous && tc.anonOK:
					require.NoError(t, err)
					require.Nil(t, p)
				default:
					require.Nil(t, p)
					f := failureOf(t, err)
					require.Equal(t, tc.status, f.Status)
					require.Equal(t, tc.status, f.HTTPStatus())
					require.Equal(t, tc.code, f.Code)
					require.NotContains(t, f.Error(), good)
					require.NotContains(t, f.WWWAuthenticate(), good)
					if tc.header != "" {
						require.Equal(t, tc.header, f.WWWAuthenticate())
					} else {
						require.Equal(t, `Bearer error="`+tc.code+`", error_description="`+f.Description+`", resource_metadata="`+metadataURL+`"`, f.WWWAuthenticate())
					}
				}
			}
		})
	}
}

func TestAuthenticateConcurrent(t *testing.T) {
	key := ecKey(t, "e1", elliptic.P256(), jwt.SigningMethodES256)
	is := newIssuer(t, key)
	v := is.verifier(t)
	raw := key.sign(t, is.claims())
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 20 {
				p, err := v.Authenticate(request("Bearer " + raw))
				if err != nil || p.Subject != "alice" {
					t.Errorf("Authenticate = %v, %v", p, err)
				}
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, 1, is.jwksHits.Load(), "steady state makes no request")
}
