package auth

import (
	"bytes"
	"context"
	"crypto/elliptic"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

func TestKeyRotation(t *testing.T) {
	a := rsaKey(0, "a", jwt.SigningMethodRS256)
	b := ecKey(t, "b", elliptic.P256(), jwt.SigningMethodES256)
	is := newIssuer(t, a)
	v := is.verifier(t)
	require.EqualValues(t, 1, is.jwksHits.Load())
	_, err := v.Authenticate(request("Bearer " + a.sign(t, is.claims())))
	require.NoError(t, err)

	// The issuer rotates: a token with the new kid refreshes the keys once.
	is.setKeys(t, b)
	p, err := v.Authenticate(request("Bearer " + b.sign(t, is.claims())))
	require.NoError(t, err)
	require.Equal(t, "alice", p.Subject)
	require.EqualValues(t, 2, is.jwksHits.Load())
	_, err = v.Authenticate(request("Bearer " + b.sign(t, is.claims())))
	require.NoError(t, err)
	require.EqualValues(t, 2, is.jwksHits.Load(), "a known kid is answered from memory")

	// The old key is gone with the refresh.
	_, err = v.Authenticate(request("Bearer " + a.sign(t, is.claims())))
	require.Equal(t, "the token's signing key is unknown", failureOf(t, err).Description)

	// A flood of made-up kids costs the issuer nothing within the interval.
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			_, err := v.Authenticate(request("Bearer " + b.withKID(fmt.Sprint("made-up-", i)).sign(t, is.claims())))
			if f, ok := err.(*Failure); !ok || f.Description != "the token's signing key is unknown" {
				t.Errorf("made-up kid: %v", err)
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, 2, is.jwksHits.Load())

	// Once the interval has passed, an unknown kid refreshes again.
	v.jwks.store.gate.SetLimit(rate.Inf)
	_, err = v.Authenticate(request("Bearer " + b.withKID("later").sign(t, is.claims())))
	failureOf(t, err)
	require.EqualValues(t, 3, is.jwksHits.Load())
}

func TestScheduledRefresh(t *testing.T) {
	k := ecKey(t, "k0", elliptic.P256(), jwt.SigningMethodES256)
	synctest.Test(t, func(t *testing.T) {
		jwks := &fakeJWKS{}
		jwks.serve(jwksJSON(t, k), nil)
		v := fakeVerifier(t, jwks, func(c *Config) { c.RefreshInterval = time.Hour })
		time.Sleep(3*time.Hour + time.Second)
		synctest.Wait()
		require.EqualValues(t, 4, jwks.hits.Load())

		// Close stops the refresh.
		v.Close()
		time.Sleep(3 * time.Hour)
		synctest.Wait()
		require.EqualValues(t, 4, jwks.hits.Load())
	})
}

func TestRefreshFailureKeepsKeys(t *testing.T) {
	a := rsaKey(0, "a", jwt.SigningMethodRS256)
	is := newIssuer(t, a)
	v := is.verifier(t)
	is.mu.Lock()
	is.status = http.StatusInternalServerError
	is.mu.Unlock()
	_, err := v.Authenticate(request("Bearer " + a.withKID("new").sign(t, is.claims())))
	require.Equal(t, "the token's signing key is unknown", failureOf(t, err).Description)
	require.EqualValues(t, 2, is.jwksHits.Load())
	_, err = v.Authenticate(request("Bearer " + a.sign(t, is.claims())))
	require.NoError(t, err)
}

// fakeJWKS serves a key set to an http.Client without a network, so that
// a synctest bubble can see every goroutine block on it.
type fakeJWKS struct {
	mu   sync.Mutex
	set  []byte
	hold chan struct{} // while non-nil, requests wait for it to close
	hits atomic.Int64
}

func (f *fakeJWKS) RoundTrip(req *http.Request) (*http.Response, error) {
	f.hits.Add(1)
	f.mu.Lock()
	set, hold := f.set, f.hold
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(set)), Request: req}, nil
}

func (f *fakeJWKS) serve(set []byte, hold chan struct{}) {
	f.mu.Lock()
	f.set, f.hold = set, hold
	f.mu.Unlock()
}

// fakeIssuerURL is the issuer of tokens a fakeVerifier accepts.
const fakeIssuerURL = "https://issuer.test"

// fakeVerifier verifies tokens of fakeIssuerURL with the keys jwks serves.
func fakeVerifier(t *testing.T, jwks *fakeJWKS, edit ...func(*Config)) *Verifier {
	cfg := Config{
		Issuer:     fakeIssuerURL,
		JWKSURL:    fakeIssuerURL + "/jwks",
		Audiences:  []string{audience},
		HTTPClient: &http.Client{Transport: jwks, Timeout: time.Minute},
		Logger:     slog.New(slog.DiscardHandler),
	}
	for _, e := range edit {
		e(&cfg)
	}
	v, err := New(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(v.Close)
	return v
}

func fakeClaims() jwt.MapClaims {
	return jwt.MapClaims{"iss": fakeIssuerURL, "sub": "alice", "aud": audience, "exp": time.Now().Add(time.Hour).Unix()}
}

func TestUnknownKIDRefreshIsRateLimited(t *testing.T) {
	keys := []testKey{
		ecKey(t, "k0", elliptic.P256(), jwt.SigningMethodES256),
		ecKey(t, "k1", elliptic.P256(), jwt.SigningMethodES256),
		ecKey(t, "k2", elliptic.P256(), jwt.SigningMethodES256),
		ecKey(t, "k3", elliptic.P256(), jwt.SigningMethodES256),
	}
	synctest.Test(t, func(t *testing.T) {
		jwks := &fakeJWKS{}
		jwks.serve(jwksJSON(t, keys[0]), nil)
		v := fakeVerifier(t, jwks)
		check := func(k testKey, ok bool) {
			t.Helper()
			_, err := v.Authenticate(request("Bearer " + k.sign(t, fakeClaims())))
			if ok {
				require.NoError(t, err)
			} else {
				require.Equal(t, "the token's signing key is unknown", failureOf(t, err).Description)
			}
		}
		require.EqualValues(t, 1, jwks.hits.Load())

		// A rotation is picked up by the first token with the new kid.
		jwks.serve(jwksJSON(t, keys[0], keys[1]), nil)
		check(keys[1], true)
		require.EqualValues(t, 2, jwks.hits.Load())

		// Another, within the interval, is refused without a request...
		jwks.serve(jwksJSON(t, keys[0], keys[1], keys[2]), nil)
		check(keys[2], false)
		require.EqualValues(t, 2, jwks.hits.Load())

		// ...and picked up once the interval has passed.
		time.Sleep(unknownKIDInterval)
		check(keys[2], true)
		require.EqualValues(t, 3, jwks.hits.Load())

		// Requests that arrive during a refresh wait for it, and make no
		// request of their own.
		time.Sleep(unknownKIDInterval)
		hold := make(chan struct{})
		jwks.serve(jwksJSON(t, keys[3]), hold)
		var wg sync.WaitGroup
		wg.Go(func() { check(keys[3], true) })
		synctest.Wait()
		require.EqualValues(t, 4, jwks.hits.Load())
		for range 10 {
			wg.Go(func() { check(keys[3], true) })
		}
		synctest.Wait()
		close(hold)
		wg.Wait()
		require.EqualValues(t, 4, jwks.hits.Load())

		// The gate is shut again: the removed key stays unknown.
		check(keys[0], false)
		require.EqualValues(t, 4, jwks.hits.Load())

		// A request whose client goes away while it waits gives up; the
		// refresh it waited for goes on.
		time.Sleep(unknownKIDInterval)
		hold = make(chan struct{})
		jwks.serve(jwksJSON(t, keys[0], keys[1], keys[2]), hold)
		wg.Go(func() { check(keys[2], true) })
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		var waited error
		wg.Go(func() {
			_, waited = v.Authenticate(request("Bearer " + keys[1].sign(t, fakeClaims())).WithContext(ctx))
		})
		synctest.Wait()
		cancel()
		synctest.Wait()
		require.Equal(t, "the token cannot be verified", failureOf(t, waited).Description)
		close(hold)
		wg.Wait()
		require.EqualValues(t, 5, jwks.hits.Load())
		check(keys[1], true)
	})
}
