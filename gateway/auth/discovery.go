package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// maxDocument bounds a metadata document or key set; real ones are a few
// kilobytes.
const maxDocument = 1 << 20

// errIssuerMismatch: a metadata document names another issuer (RFC 8414
// §3.3). Discovery stops there rather than trying the next document.
var errIssuerMismatch = errors.New("auth: metadata names another issuer")

// serverMetadata is the part of RFC 8414 / OpenID Connect Discovery
// metadata the verifier reads.
type serverMetadata struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
}

// discover returns the jwks_uri of issuer from the first metadata document
// it finds (see metadataURLs).
func discover(ctx context.Context, client *http.Client, issuer string) (string, error) {
	var errs []error
	for _, u := range metadataURLs(issuer) {
		md, err := fetchMetadata(ctx, client, u)
		if err == nil && md.Issuer != issuer {
			err = fmt.Errorf("%w: %s has issuer %q, want %q", errIssuerMismatch, redact(u), md.Issuer, issuer)
		}
		if err == nil && md.JWKSURI == "" {
			err = fmt.Errorf("auth: %s has no jwks_uri", redact(u))
		}
		if err == nil {
			if err := checkURL(md.JWKSURI); err != nil {
				return "", fmt.Errorf("auth: %s: jwks_uri: %w", redact(u), err)
			}
			if strings.HasPrefix(issuer, "https:") && !strings.HasPrefix(md.JWKSURI, "https:") {
				return "", fmt.Errorf("auth: %s: jwks_uri %s is not https", redact(u), redact(md.JWKSURI))
			}
			return md.JWKSURI, nil
		}
		if errors.Is(err, errIssuerMismatch) || ctx.Err() != nil {
			return "", err
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("auth: no authorization server metadata for issuer %s: %w", redact(issuer), errors.Join(errs...))
}

// metadataURLs are where issuer's metadata may be, in the order tried: RFC
// 8414 §3.1 (well-known path inserted before the issuer's path), then the
// well-known path appended, as many servers publish it, each first for
// OAuth authorization server metadata and then for OpenID Connect's. For
// an issuer without a path the forms coincide.
func metadataURLs(issuer string) []string {
	const oauth, oidc = "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path == "" {
		return []string{origin + oauth, origin + oidc}
	}
	appended := origin + path
	return []string{origin + oauth + path, appended + oauth, origin + oidc + path, appended + oidc}
}

// fetchMetadata GETs one metadata document.
func fetchMetadata(ctx context.Context, client *http.Client, u string) (serverMetadata, error) {
	var md serverMetadata
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return md, fmt.Errorf("auth: GET %s: %w", redact(u), err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return md, fmt.Errorf("auth: GET %s: %w", redact(u), stripURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return md, fmt.Errorf("auth: GET %s: status %d", redact(u), resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
		return md, fmt.Errorf("auth: GET %s: decode metadata: %w", redact(u), err)
	}
	return md, nil
}

// checkURL accepts an absolute http or https URL without a fragment.
func checkURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL: %w", stripURL(err))
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("%s is not an http or https URL", redact(s))
	case u.Host == "":
		return fmt.Errorf("%s has no host", redact(s))
	case u.Fragment != "":
		return fmt.Errorf("%s has a fragment", redact(s))
	}
	return nil
}

// redact is u with any password replaced, for errors and logs.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}

// stripURL drops the URL a *url.Error repeats (unredacted) around its
// cause; callers name the URL themselves.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// limitBodies caps every response body the verifier reads (metadata, and
// the key set jwkset fetches) at maxDocument.
type limitBodies struct{ base http.RoundTripper }

func (l limitBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = http.MaxBytesReader(nil, resp.Body, maxDocument)
	return resp, nil
}
