package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
)

// audience is the MCP endpoint every test verifier accepts tokens for.
const audience = "https://gw.example/mcp"

// metadataURL is the protected resource metadata test verifiers name.
const metadataURL = "https://gw.example/.well-known/oauth-protected-resource/mcp"

// testKey is a signing key of the fake issuer (or of a forger).
type testKey struct {
	kid    string
	method jwt.SigningMethod // nil: the JWK has no alg
	priv   any
	pub    any
	use    jwkset.USE // of the JWK; empty means sig, "-" none
}

// sign makes a token of c signed by k, with k's kid unless it is empty.
func (k testKey) sign(t testing.TB, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(k.method, c)
	if k.kid != "" {
		tok.Header["kid"] = k.kid
	}
	s, err := tok.SignedString(k.priv)
	require.NoError(t, err)
	return s
}

// withKID is k under another kid.
func (k testKey) withKID(kid string) testKey { k.kid = kid; return k }

// RSA key generation is slow (more so under -race): the tests share a
// few keys.
var rsaKeys = sync.OnceValue(func() []*rsa.PrivateKey {
	keys := make([]*rsa.PrivateKey, 3)
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keys[i] = k
	}
	return keys
})

func rsaKey(i int, kid string, method jwt.SigningMethod) testKey {
	k := rsaKeys()[i]
	return testKey{kid: kid, method: method, priv: k, pub: &k.PublicKey}
}

func ecKey(t testing.TB, kid string, curve elliptic.Curve, method jwt.SigningMethod) testKey {
	k, err := ecdsa.GenerateKey(curve, rand.Reader)
	require.NoError(t, err)
	return testKey{kid: kid, method: method, priv: k, pub: &k.PublicKey}
}

func edKey(t testing.TB, kid string) testKey {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return testKey{kid: kid, method: jwt.SigningMethodEdDSA, priv: priv, pub: pub}
}

// jwksJSON is the JWK Set of keys' public halves (or, for a []byte key,
// the secret itself as an "oct" key), built with jwkset.
func jwksJSON(t testing.TB, keys ...testKey) []byte {
	t.Helper()
	set := jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{}}
	for _, k := range keys {
		opts := jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: k.kid, USE: k.use}}
		if k.method != nil {
			opts.Metadata.ALG = jwkset.ALG(k.method.Alg())
		}
		switch k.use {
		case "":
			opts.Metadata.USE = jwkset.UseSig
		case "-":
			opts.Metadata.USE = ""
		}
		if _, ok := k.pub.([]byte); ok {
			opts.Marshal.Private = true
		}
		jwk, err := jwkset.NewJWKFromKey(k.pub, opts)
		require.NoError(t, err)
		set.Keys = append(set.Keys, jwk.Marshal())
	}
	b, err := json.Marshal(set)
	require.NoError(t, err)
	return b
}

// fakeIssuer is an authorization server as the verifier sees it: metadata
// documents and a JWKS, over real HTTP.
type fakeIssuer struct {
	srv *httptest.Server
	// URL is the issuer identifier: the server's URL, plus path if any.
	URL string

	mu sync.Mutex
	// meta maps a metadata path to the issuer the document there names.
	meta map[string]string
	// jwksPath is where the key set is; the documents point there.
	jwksPath string
	set      []byte
	status   int // of the JWKS; 0 means 200
	hits     map[string]int

	jwksHits atomic.Int64
}

// newIssuer serves RFC 8414 metadata at the root well-known path and a
// JWKS of keys.
func newIssuer(t testing.TB, keys ...testKey) *fakeIssuer {
	is := &fakeIssuer{hits: map[string]int{}, jwksPath: "/jwks"}
	is.srv = httptest.NewServer(http.HandlerFunc(is.serve))
	t.Cleanup(is.srv.Close)
	is.URL = is.srv.URL
	is.meta = map[string]string{"/.well-known/oauth-authorization-server": is.URL}
	is.setKeys(t, keys...)
	return is
}

func (is *fakeIssuer) serve(w http.ResponseWriter, r *http.Request) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.hits[r.URL.Path]++
	if r.URL.Path == is.jwksPath {
		is.jwksHits.Add(1)
		if is.status != 0 {
			w.WriteHeader(is.status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(is.set)
		return
	}
	iss, ok := is.meta[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"issuer":                 iss,
		"jwks_uri":               is.srv.URL + is.jwksPath,
		"response_types_support": []string{"code"},
	})
}

// setKeys replaces the JWKS (a rotation).
func (is *fakeIssuer) setKeys(t testing.TB, keys ...testKey) {
	set := jwksJSON(t, keys...)
	is.mu.Lock()
	is.set = set
	is.mu.Unlock()
}

func (is *fakeIssuer) hitsOf(path string) int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.hits[path]
}

// claims are those of a good token from is, valid for five minutes.
func (is *fakeIssuer) claims() jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{
		"iss":       is.URL,
		"sub":       "alice",
		"aud":       audience,
		"exp":       now.Add(5 * time.Minute).Unix(),
		"iat":       now.Unix(),
		"scope":     "files:read files:write",
		"client_id": "client-1",
	}
}

// verifier is a Verifier of is's tokens; edit adjusts its config.
func (is *fakeIssuer) verifier(t testing.TB, edit ...func(*Config)) *Verifier {
	t.Helper()
	cfg := Config{
		Issuer:              is.URL,
		Audiences:           []string{audience},
		ResourceMetadataURL: metadataURL,
		Logger:              slog.New(slog.DiscardHandler),
	}
	for _, e := range edit {
		e(&cfg)
	}
	v, err := New(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(v.Close)
	return v
}

// request is a POST to the MCP endpoint with the given Authorization
// header values.
func request(authorization ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, audience, nil)
	r.Header.Set("Content-Type", "application/json")
	for _, a := range authorization {
		r.Header.Add("Authorization", a)
	}
	return r
}

// failureOf asserts err is a *Failure and returns it.
func failureOf(t testing.TB, err error) *Failure {
	t.Helper()
	require.Error(t, err)
	f, ok := err.(*Failure)
	require.Truef(t, ok, "error %T %v is not a *Failure", err, err)
	return f
}
