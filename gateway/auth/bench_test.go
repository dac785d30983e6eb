package auth

import (
	"crypto/elliptic"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// BenchmarkAuthenticate is the per-request cost of a valid token with
// the keys cached: header checks, parse, signature, claims, principal.
func BenchmarkAuthenticate(b *testing.B) {
	keys := []testKey{
		rsaKey(0, "rs", jwt.SigningMethodRS256),
		ecKey(b, "es", elliptic.P256(), jwt.SigningMethodES256),
		edKey(b, "ed"),
	}
	is := newIssuer(b, keys...)
	v := is.verifier(b)
	for _, k := range keys {
		r := request("Bearer " + k.sign(b, is.claims()))
		// A token seen for the first time: its signature is checked.
		b.Run(k.method.Alg(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v.cache.mu.Lock()
				v.cache.m = nil
				v.cache.mu.Unlock()
				if _, err := v.Authenticate(r); err != nil {
					b.Fatal(err)
				}
			}
		})
		// The same token again, as a client sends it with every request.
		b.Run(k.method.Alg()+"/again", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Authenticate(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	r := request("Bearer " + keys[0].withKID("unknown").sign(b, is.claims()))
	b.Run("refused/unknown-kid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.Authenticate(r); err == nil {
				b.Fatal("accepted")
			}
		}
	})
	r = request()
	b.Run("refused/no-token", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.Authenticate(r); err == nil {
				b.Fatal("accepted")
			}
		}
	})
}
