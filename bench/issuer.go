package main

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"time"
)

// issuer is the authorization server of the authenticated targets: RFC 8414
// metadata naming a JWKS of one RSA key, and access tokens signed with that
// key. It runs in this process (the gateway asks it for its keys once, at
// start), and signs by hand with the standard library because a JWT library
// belongs to gateway/auth alone.
type issuer struct {
	url string // the issuer identifier: http://127.0.0.1:PORT
	key *rsa.PrivateKey
	kid string
	srv *http.Server
}

// startIssuer generates the key and serves the metadata and the key set on
// a fresh loopback port until close.
func startIssuer() (*issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	is := &issuer{url: "http://" + ln.Addr().String(), key: key, kid: "bench-1"}
	metadata, _ := json.Marshal(map[string]string{"issuer": is.url, "jwks_uri": is.url + "/jwks"})
	keys, _ := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": is.kid, "alg": "RS256", "use": "sig",
		"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
	}}})
	mux := http.NewServeMux()
	serveJSON := func(body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}
	}
	mux.Handle("GET /.well-known/oauth-authorization-server", serveJSON(metadata))
	mux.Handle("GET /jwks", serveJSON(keys))
	is.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = is.srv.Serve(ln) }()
	return is, nil
}

// close stops serving; tokens already signed stay valid for a gateway that
// has the key.
func (is *issuer) close() {
	if is == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = is.srv.Shutdown(ctx)
}

// token is an RS256 access token for audience, naming subject, with no
// scope, valid for ttl.
func (is *issuer) token(audience, subject string, ttl time.Duration) (string, error) {
	now := time.Now()
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": is.kid})
	claims, _ := json.Marshal(map[string]any{
		"iss": is.url, "aud": audience, "sub": subject, "scope": "",
		"iat": now.Unix(), "exp": now.Add(ttl).Unix(),
	})
	signed := b64(header) + "." + b64(claims)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, is.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("signing the bench token: %w", err)
	}
	return signed + "." + b64(sig), nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
