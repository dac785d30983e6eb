package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// unknownKIDInterval is how often a token naming a key the cache lacks
// may make the verifier fetch the JWKS again: once an issuer rotates its
// key, the first token signed with the new one fetches it at once, while
// a stream of made-up kids costs the issuer at most one request per
// interval.
const unknownKIDInterval = 10 * time.Second

// fetchTimeout bounds each request for metadata or keys.
const fetchTimeout = 10 * time.Second

// Internal causes of a refusal (see Failure.Unwrap).
var (
	errUnknownKey = errors.New("auth: no key in the JWKS has the token's kid")
	errAlgorithm  = errors.New("auth: the token's algorithm is not accepted")
	errKeyType    = errors.New("auth: the key named by the token does not fit its algorithm")
	errCrit       = errors.New("auth: the token has critical header parameters")
	errKID        = errors.New("auth: the token's kid is not a string")
	errNoSubject  = errors.New("auth: the token has no sub claim")
	errIssuer     = errors.New("auth: the token is from another issuer")
)

// jwks is the issuer's key set, cached in memory: jwkset fetches it at
// start, on a schedule, and when a token names a kid the cache lacks;
// keyfunc picks the key a token names, checking its alg and use.
type jwks struct {
	keys keyfunc.Keyfunc
	// store is the keyfunc's storage, kept to tune its gate in tests.
	store *gatedStore
}

// newJWKS fetches the key set at url and keeps it fresh until ctx ends.
// It fails when the first fetch does, or finds no key it can use.
func newJWKS(ctx context.Context, url string, client *http.Client, every time.Duration, log *slog.Logger) (*jwks, error) {
	shown := redact(url)
	cached, err := jwkset.NewStorageFromHTTP(url, jwkset.HTTPClientStorageOptions{
		Client:          client,
		Ctx:             ctx,
		HTTPTimeout:     fetchTimeout,
		RefreshInterval: every,
		RefreshErrorHandler: func(ctx context.Context, err error) {
			log.WarnContext(ctx, "refreshing the JWKS failed; keeping the keys we have", "url", shown, "err", err)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("auth: fetch JWKS %s: %w", shown, err)
	}
	if all, err := cached.KeyReadAll(ctx); err != nil || len(all) == 0 {
		return nil, fmt.Errorf("auth: JWKS %s has no key this verifier can use", shown)
	}
	refreshing, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs: map[string]jwkset.Storage{url: cached},
		// The gate in front decides when to refresh; this limiter lets
		// every refresh the gate allows through at once.
		RefreshUnknownKID: rate.NewLimiter(rate.Inf, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("auth: JWKS %s: %w", shown, err)
	}
	store := &gatedStore{
		Storage: refreshing,
		cached:  cached,
		gate:    rate.NewLimiter(rate.Every(unknownKIDInterval), 1),
	}
	keys, err := keyfunc.New(keyfunc.Options{
		Ctx:     ctx,
		Storage: store,
		// A key marked for encryption never verifies a signature.
		UseWhitelist: []jwkset.USE{jwkset.UseSig, ""},
	})
	if err != nil {
		return nil, fmt.Errorf("auth: JWKS %s: %w", shown, err)
	}
	return &jwks{keys: keys, store: store}, nil
}

// gatedStore is the JWKS storage keyfunc reads. A kid the cache holds is
// answered from memory; an unknown kid refreshes the set through jwkset's
// RefreshUnknownKID, at most once per gate interval, and requests that
// arrive during a refresh wait for it rather than start their own.
//
// The gate is ours because jwkset consults its limiter with Wait: a
// request over the limit would park for up to RateLimitWaitMax, and the
// refresh that follows shares that same deadline. Here a request over the
// limit is refused at once (its key is unknown), which is also what a
// flood of made-up kids gets.
type gatedStore struct {
	// Storage refreshes on an unknown kid; every other method is its.
	jwkset.Storage
	cached jwkset.Storage
	gate   *rate.Limiter

	mu       sync.Mutex
	inflight chan struct{} // closed when the running refresh ends; nil if none
}

var _ jwkset.Storage = (*gatedStore)(nil)

// KeyRead returns the key with id kid.
func (s *gatedStore) KeyRead(ctx context.Context, kid string) (jwkset.JWK, error) {
	jwk, err := s.cached.KeyRead(ctx, kid)
	if !errors.Is(err, jwkset.ErrKeyNotFound) {
		return jwk, err
	}
	s.mu.Lock()
	if wait := s.inflight; wait != nil {
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return jwkset.JWK{}, ctx.Err()
		}
		return s.known(ctx, kid)
	}
	if !s.gate.Allow() {
		s.mu.Unlock()
		return jwkset.JWK{}, errUnknownKey
	}
	done := make(chan struct{})
	s.inflight = done
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight = nil
		s.mu.Unlock()
		close(done)
	}()
	if _, err := s.Storage.KeyRead(ctx, kid); err != nil && !errors.Is(err, jwkset.ErrKeyNotFound) {
		return jwkset.JWK{}, err
	}
	return s.known(ctx, kid)
}

// known reads kid from the cache only.
func (s *gatedStore) known(ctx context.Context, kid string) (jwkset.JWK, error) {
	jwk, err := s.cached.KeyRead(ctx, kid)
	if errors.Is(err, jwkset.ErrKeyNotFound) {
		return jwkset.JWK{}, errUnknownKey
	}
	return jwk, err
}

// keyfunc returns the jwt.Keyfunc for one request. HMAC tokens are
// verified with the configured secret only, every other token with JWKS
// keys only, and a JWKS key is used only for the algorithm family it
// belongs to: neither an RSA public key as an HMAC secret nor a symmetric
// JWKS entry can ever verify a token.
func (v *Verifier) keyfunc(ctx context.Context) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		if _, ok := t.Header["crit"]; ok {
			return nil, errCrit
		}
		if kid, ok := t.Header["kid"]; ok {
			if _, ok := kid.(string); !ok {
				return nil, errKID
			}
		}
		if _, ok := t.Method.(*jwt.SigningMethodHMAC); ok {
			if v.secret == nil {
				return nil, errAlgorithm
			}
			return v.secret, nil
		}
		if v.jwks == nil {
			return nil, errAlgorithm
		}
		if c, ok := t.Claims.(*claims); ok && c.Issuer != v.cfg.Issuer {
			// Another issuer's token (or one naming none) is refused as
			// such before its kid is looked up: it must not spend the
			// unknown-kid refresh a real rotation needs.
			return nil, errIssuer
		}
		key, err := v.jwks.keys.KeyfuncCtx(ctx)(t)
		if err != nil {
			return nil, err
		}
		if set, ok := key.(jwt.VerificationKeySet); ok {
			// A token without a kid: try the keys that fit.
			fit := jwt.VerificationKeySet{Keys: make([]jwt.VerificationKey, 0, len(set.Keys))}
			for _, k := range set.Keys {
				if fits(t.Method, k) {
					fit.Keys = append(fit.Keys, k)
				}
			}
			if len(fit.Keys) == 0 {
				return nil, errUnknownKey
			}
			return fit, nil
		}
		if !fits(t.Method, key) {
			return nil, errKeyType
		}
		return key, nil
	}
}

// fits reports whether key is a public key of the family and, for ECDSA,
// the curve that method signs with.
func fits(method jwt.SigningMethod, key any) bool {
	switch m := method.(type) {
	case *jwt.SigningMethodRSA, *jwt.SigningMethodRSAPSS:
		_, ok := key.(*rsa.PublicKey)
		return ok
	case *jwt.SigningMethodECDSA:
		k, ok := key.(*ecdsa.PublicKey)
		return ok && k.Curve != nil && k.Curve.Params().BitSize == m.CurveBits
	case *jwt.SigningMethodEd25519:
		_, ok := key.(ed25519.PublicKey)
		return ok
	}
	return false
}
