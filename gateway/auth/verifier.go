package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// defaultAlgorithms are the signing algorithms accepted when
// Config.Algorithms is empty: every asymmetric JWS algorithm jwt knows.
var defaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// maxTokenBytes bounds the bearer token Authenticate will parse. Access
// tokens are a few kilobytes even with many groups; the rest is abuse.
const maxTokenBytes = 16 << 10

// Config configures a Verifier. The zero value of each optional field is
// its documented default.
type Config struct {
	// Issuer is the authorization server's issuer identifier (auth_issuer):
	// an http or https URL without query or fragment, compared exactly
	// with a token's iss and the metadata's issuer. Required.
	Issuer string
	// JWKSURL is where the issuer's keys are (auth_jwks_url). Empty means
	// discovered: the jwks_uri of the issuer's RFC 8414 metadata, else of
	// its OpenID Connect discovery document; the document's issuer must
	// equal Issuer.
	JWKSURL string
	// Audiences are the accepted aud values; a token must name at least
	// one. The caller computes them (the public URL of the MCP endpoint,
	// and the public URL). Required.
	Audiences []string
	// Algorithms are the accepted signing algorithms. Empty means RS256,
	// RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512 and EdDSA,
	// plus HS256 when HS256Secret is set. HS256 may be listed only with
	// HS256Secret; "none" never.
	Algorithms []string
	// HS256Secret is a shared secret (auth_hs256_secret_file), at least 32
	// bytes, that verifies HS256 tokens. HMAC tokens are verified with it
	// alone, never with a JWKS key, and asymmetric ones never with it.
	// Nil means HMAC tokens are refused.
	HS256Secret []byte
	// ClockSkew is the leeway for exp, nbf and iat. Zero means 30s.
	ClockSkew time.Duration
	// Anonymous (auth_anonymous) lets a request that carries no token at
	// all through as anonymous: Authenticate returns a nil principal. A
	// token that fails verification is refused all the same.
	Anonymous bool
	// ResourceMetadataURL is the absolute URL of the protected resource
	// metadata (RFC 9728), named in every WWW-Authenticate challenge.
	// Empty leaves it out.
	ResourceMetadataURL string
	// HTTPClient fetches metadata and keys. Nil means a client with a 10s
	// timeout. Its response bodies are capped at 1 MiB either way.
	HTTPClient *http.Client
	// RefreshInterval is how often the key set is fetched again. Zero
	// means 10m: the bound on how long a new key stays unknown when a
	// flood of made-up kids keeps the unknown-kid refresh busy. A token
	// naming an unknown key also fetches it again, at most once per 10s.
	RefreshInterval time.Duration
	// Logger receives the verifier's own log (failed key refreshes); nil
	// means slog.Default().
	Logger *slog.Logger
}

// Verifier authenticates requests by their bearer token. It is safe for
// concurrent use.
type Verifier struct {
	cfg    Config
	algs   []string
	secret []byte
	jwks   *jwks // nil when only HMAC tokens are accepted
	parser *jwt.Parser
	cancel context.CancelFunc
	cache  tokenCache // tokens verified lately
}

// New checks cfg, discovers the issuer's key set unless cfg.JWKSURL names
// it, and fetches the keys; it fails, naming the URL, when any of that
// fails. The keys are refreshed in the background until ctx ends or
// Close is called.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	v := &Verifier{cfg: cfg}
	if err := v.configure(); err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(v.algs, func(a string) bool { return !strings.HasPrefix(a, "HS") }) {
		// Only HMAC tokens: no keys to fetch.
		v.cancel = func() {}
		return v, nil
	}
	ctx, v.cancel = context.WithCancel(ctx)
	keysURL := v.cfg.JWKSURL
	if keysURL == "" {
		var err error
		if keysURL, err = discover(ctx, v.cfg.HTTPClient, v.cfg.Issuer); err != nil {
			v.cancel()
			return nil, err
		}
	}
	keys, err := newJWKS(ctx, keysURL, v.cfg.HTTPClient, v.cfg.RefreshInterval, v.cfg.Logger)
	if err != nil {
		// jwkset has started its refresh loop before the first fetch.
		v.cancel()
		return nil, err
	}
	v.jwks = keys
	return v, nil
}

// configure validates cfg and fills in its defaults.
func (v *Verifier) configure() error {
	c := &v.cfg
	if c.Issuer == "" {
		return errors.New("auth: no issuer configured")
	}
	if err := checkIssuer(c.Issuer); err != nil {
		return fmt.Errorf("auth: issuer: %w", err)
	}
	if c.JWKSURL != "" {
		if err := checkURL(c.JWKSURL); err != nil {
			return fmt.Errorf("auth: JWKS URL: %w", err)
		}
	}
	if len(c.Audiences) == 0 || slices.Contains(c.Audiences, "") {
		return errors.New("auth: audiences must be set and non-empty: a token must be meant for this resource")
	}
	if c.HS256Secret != nil && len(c.HS256Secret) < 32 {
		return errors.New("auth: the HS256 secret must be at least 32 bytes")
	}
	v.secret = c.HS256Secret
	v.algs = slices.Clone(c.Algorithms)
	if len(v.algs) == 0 {
		v.algs = slices.Clone(defaultAlgorithms)
		if v.secret != nil {
			v.algs = append(v.algs, "HS256")
		}
	}
	for _, a := range v.algs {
		switch {
		case strings.EqualFold(a, "none"):
			return errors.New(`auth: algorithm "none" is never accepted`)
		case a == "HS256" && v.secret == nil:
			return errors.New("auth: HS256 needs an HS256 secret")
		case strings.HasPrefix(a, "HS") && a != "HS256":
			return fmt.Errorf("auth: algorithm %q: the shared secret is for HS256 only", a)
		case jwt.GetSigningMethod(a) == nil:
			return fmt.Errorf("auth: unknown algorithm %q", a)
		}
	}
	if !slices.Contains(v.algs, "HS256") {
		v.secret = nil
	}
	if c.ClockSkew < 0 || c.RefreshInterval < 0 {
		return errors.New("auth: clock skew and refresh interval must not be negative")
	}
	if c.ClockSkew == 0 {
		c.ClockSkew = 30 * time.Second
	}
	if c.RefreshInterval == 0 {
		c.RefreshInterval = 10 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	client := &http.Client{Timeout: fetchTimeout}
	if c.HTTPClient != nil {
		cp := *c.HTTPClient
		client = &cp
	}
	base := client.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	client.Transport = limitBodies{base}
	c.HTTPClient = client
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(v.algs),
		jwt.WithIssuer(c.Issuer),
		jwt.WithAudience(c.Audiences...),
		jwt.WithLeeway(c.ClockSkew),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
	)
	return nil
}

// checkIssuer accepts an issuer identifier: an http or https URL with a
// host and no query, fragment or user info (RFC 8414 §2).
func checkIssuer(s string) error {
	if err := checkURL(s); err != nil {
		return err
	}
	u, _ := url.Parse(s)
	if u.RawQuery != "" || u.ForceQuery || u.User != nil {
		return fmt.Errorf("%s must have no query and no user info", redact(s))
	}
	return nil
}

// Close stops the background key refresh. Authenticate keeps working
// with the keys it has.
func (v *Verifier) Close() { v.cancel() }

// Authenticate verifies the request's bearer token and returns who it
// names. A request without credentials gets a nil principal and no error
// when anonymous access is configured; every refusal is a *Failure.
//
// The token is read only from the Authorization header (RFC 6750 §2.1):
// one header, scheme Bearer in any case. A token in the URL or a form
// body is refused, as is any other scheme, even with anonymous access: a
// client that sends credentials means to be someone.
func (v *Verifier) Authenticate(r *http.Request) (*mcp.Principal, error) {
	raw, f := v.bearer(r)
	if f != nil {
		return nil, f
	}
	if raw == "" {
		if v.cfg.Anonymous {
			return nil, nil
		}
		return nil, v.missingToken("the request has no bearer token")
	}
	now := time.Now()
	if p, kid := v.cache.get(raw, now); p != nil && v.keyStillServes(r.Context(), kid) {
		return p, nil
	}
	var c claims
	tok, err := v.parser.ParseWithClaims(raw, &c, v.keyfunc(r.Context()))
	if err != nil {
		return nil, v.refusal(tok, &c, err)
	}
	p := c.principal(raw)
	var expires time.Time
	if c.ExpiresAt != nil {
		expires = c.ExpiresAt.Add(v.cfg.ClockSkew)
	}
	kid, _ := tok.Header["kid"].(string)
	v.cache.put(raw, kid, p, expires, now)
	return p, nil
}

// keyStillServes reports whether the key a cached token was verified
// with is still in the issuer's key set (a kid-less or HMAC token: yes).
func (v *Verifier) keyStillServes(ctx context.Context, kid string) bool {
	if kid == "" || v.jwks == nil {
		return true
	}
	_, err := v.jwks.store.cached.KeyRead(ctx, kid)
	return err == nil
}

// bearer is the request's bearer token: empty, with no failure, when the
// request carries no credentials at all.
func (v *Verifier) bearer(r *http.Request) (string, *Failure) {
	if r.URL != nil && r.URL.RawQuery != "" && strings.ContainsAny(r.URL.RawQuery, "_%") {
		if q, err := url.ParseQuery(r.URL.RawQuery); err == nil && q.Has("access_token") {
			return "", v.invalidRequest("send the access token in the Authorization header, not in the URL")
		}
	}
	values := r.Header["Authorization"]
	if len(values) == 1 && strings.Trim(values[0], " \t") == "" {
		// An empty header carries no credentials; some clients send one
		// when they have no token.
		values = nil
	}
	switch len(values) {
	case 0:
		if ct := r.Header.Get("Content-Type"); strings.HasPrefix(strings.ToLower(ct), "application/x-www-form-urlencoded") {
			return "", v.invalidRequest("send the access token in the Authorization header; form bodies are not accepted")
		}
		return "", nil
	case 1:
	default:
		return "", v.invalidRequest("the request has more than one Authorization header")
	}
	scheme, token, _ := strings.Cut(values[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", v.missingToken("the request has no bearer token: the Authorization scheme must be Bearer")
	}
	token = strings.Trim(token, " \t")
	switch {
	case token == "":
		return "", v.invalidRequest("the bearer token is empty")
	case len(token) > maxTokenBytes:
		return "", v.invalidToken(ReasonMalformedToken, "the token is too large", nil)
	case !isB64Token(token):
		return "", v.invalidToken(ReasonMalformedToken, "the token is malformed", nil)
	}
	return token, nil
}

// isB64Token reports whether s is an RFC 6750 b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/') {
			break
		}
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

// refusal turns a verification error into the Failure the client sees.
// When several checks failed, the one listed first wins: a token for
// another audience is reported as that, not as expired, so the client
// does not refresh it in vain.
func (v *Verifier) refusal(tok *jwt.Token, c *claims, err error) *Failure {
	badAlg := tok != nil && (tok.Method == nil || !slices.Contains(v.algs, tok.Method.Alg()))
	var reason, why string
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed), errors.Is(err, errKID):
		reason, why = ReasonMalformedToken, "the token is malformed"
	case badAlg || errors.Is(err, errAlgorithm):
		reason, why = ReasonInvalidSignature, "the token's signing algorithm is not accepted"
	case errors.Is(err, errCrit):
		reason, why = ReasonMalformedToken, "the token has critical header parameters this resource does not understand"
	case errors.Is(err, errIssuer) && c.Issuer == "":
		reason, why = ReasonMissingClaim, "the token has no issuer"
	case errors.Is(err, errIssuer):
		// Checked before the key, unverified: it only refuses.
		reason, why = ReasonWrongIssuer, "the token is from another issuer"
	case errors.Is(err, errUnknownKey):
		reason, why = ReasonInvalidSignature, "the token's signing key is unknown"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		reason, why = ReasonUnverifiable, "the token cannot be verified"
	case errors.Is(err, errKeyType), errors.Is(err, keyfunc.ErrKeyfunc):
		// keyfunc refuses a key whose alg or use does not fit the token.
		reason, why = ReasonInvalidSignature, "the token's signing key does not fit its algorithm"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		reason, why = ReasonUnverifiable, "the token cannot be verified"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		reason, why = ReasonInvalidSignature, "the token's signature is invalid"
	case !errors.Is(err, jwt.ErrTokenInvalidClaims):
		reason, why = ReasonInvalidToken, "the token is invalid"
	// The signature holds; c is the token's claims.
	case c.Issuer == "":
		reason, why = ReasonMissingClaim, "the token has no issuer"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		reason, why = ReasonWrongIssuer, "the token is from another issuer"
	case len(c.Audience) == 0:
		reason, why = ReasonMissingClaim, "the token has no audience"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		reason, why = ReasonWrongAudience, "the token is not meant for this resource"
	case c.ExpiresAt == nil:
		reason, why = ReasonMissingClaim, "the token has no expiry time"
	case errors.Is(err, errNoSubject):
		reason, why = ReasonMissingClaim, "the token has no subject"
	case errors.Is(err, jwt.ErrTokenExpired):
		reason, why = ReasonExpired, "the token has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		reason, why = ReasonNotYetValid, "the token is not valid yet"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		reason, why = ReasonNotYetValid, "the token was issued in the future"
	default:
		reason, why = ReasonInvalidToken, "the token is invalid"
	}
	return v.invalidToken(reason, why, err)
}
