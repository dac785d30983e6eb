package openapi

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxRedirects caps the redirects one fetch follows, as net/http's default
// policy does; the copy of the client that checks each hop replaces that
// policy, so it has to cap them itself.
const maxRedirects = 10

// ParseOrigin checks that s is an origin, scheme://host[:port] with scheme
// http or https and nothing after the authority but an optional "/", and
// returns it normalized: scheme and host in lower case, the scheme's
// default port left out, no trailing slash. It is what LoadOptions.RefAllow
// entries must be.
func ParseOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", fmt.Errorf("origin %q: %w", s, err)
	case u.Scheme != "http" && u.Scheme != "https": // Parse lowers the scheme
		return "", fmt.Errorf("origin %q: want http://host[:port] or https://host[:port]", s)
	case u.Host == "":
		return "", fmt.Errorf("origin %q has no host", s)
	case u.User != nil:
		return "", fmt.Errorf("origin %q must not contain credentials", s)
	case u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", fmt.Errorf("origin %q must be scheme://host[:port] only, without a path, query or fragment", s)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("origin %q has an invalid port", s)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("origin %q has an empty port", s)
	}
	return origin(u), nil
}

// origin returns the origin of an http(s) URL in ParseOrigin's form.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6 literal
	}
	return scheme + "://" + host
}

func parseOrigins(list []string) (map[string]bool, error) {
	allow := make(map[string]bool, len(list))
	for _, s := range list {
		o, err := ParseOrigin(s)
		if err != nil {
			return nil, fmt.Errorf("RefAllow: %w", err)
		}
		allow[o] = true
	}
	return allow, nil
}

// OriginError is a URL that a document fetched over http(s) may not reach
// because it is on another origin than the document's: the target of a
// $ref, the target of a redirect, or the server URL that would be the
// default upstream.
type OriginError struct {
	// URL is the refused URL.
	URL string
	// Origin is URL's origin.
	Origin string
	// DocumentOrigin is the origin of the URL the document was loaded from,
	// as configured (before any redirect).
	DocumentOrigin string
	// RedirectedFrom is, for a redirect, the URL that answered with it;
	// empty otherwise.
	RedirectedFrom string
	// Server is true when URL is the document's server URL
	// (Document.CheckServerOrigin) rather than a fetch.
	Server bool
}

// Error names the refused URL, both origins and the setting that lifts the
// refusal: openapi_ref_allow (LoadOptions.RefAllow) for a fetch, upstream
// for a server URL.
func (e *OriginError) Error() string {
	switch {
	case e.Server:
		return fmt.Sprintf("the document's server %s is not on the document's origin %s; set upstream explicitly to use it", e.URL, e.DocumentOrigin)
	case e.RedirectedFrom != "":
		return fmt.Sprintf("%s redirects to %s, on %s, another origin than the document's (%s); list it in openapi_ref_allow to allow it", e.RedirectedFrom, e.URL, e.Origin, e.DocumentOrigin)
	}
	return fmt.Sprintf("%s is on %s, another origin than the document's (%s); list it in openapi_ref_allow to allow it", e.URL, e.Origin, e.DocumentOrigin)
}

// checkOrigin refuses u, fetched for a document that came over http(s),
// unless it is on the document's origin or an allowed one. from is the URL
// that redirected to u, or nil.
func (r *reader) checkOrigin(u, from *url.URL) error {
	if r.rootOrigin == "" {
		return nil // a local document may refer to any URL
	}
	o := origin(u)
	if o == r.rootOrigin || r.allow[o] {
		return nil
	}
	e := &OriginError{URL: displayURL(u), Origin: o, DocumentOrigin: r.rootOrigin}
	if from != nil {
		e.RedirectedFrom = displayURL(from)
	}
	return e
}

// guardRedirects returns a copy of c that caps redirects and checks every
// hop with checkOrigin before c's own CheckRedirect, if any, has its say.
// The caller's client is left as it is.
func (r *reader) guardRedirects(c *http.Client) *http.Client {
	guarded := *c
	next := c.CheckRedirect
	guarded.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if err := r.checkOrigin(req.URL, via[len(via)-1].URL); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &guarded
}

// CheckServerOrigin refuses the default upstream of a document loaded from
// an http(s) URL when it is on another origin than that URL (as configured,
// before any redirect): a document fetched from one host must not send the
// gateway's backend calls, and the credentials they carry, to another. The
// default upstream is the first server's URL with its variables' defaults,
// resolved against Location when relative; no server means Location's own
// origin. A document loaded from a file or memory without an http(s)
// Location passes: the operator chose it. Call it only when no upstream is
// configured; an *OriginError says which server and which origin.
func (d *Document) CheckServerOrigin() error {
	loc, err := url.Parse(d.Location)
	if err != nil || !isRemote(loc) || loc.Host == "" {
		return nil
	}
	if d.T == nil || len(d.T.Servers) == 0 || d.T.Servers[0] == nil {
		return nil // the upstream is Location's own origin
	}
	s := d.T.Servers[0]
	raw := s.URL
	for name, v := range s.Variables {
		if v == nil {
			continue
		}
		if strings.ContainsAny(v.Default, "{}") {
			// The expansion would depend on the order the variables are
			// substituted in, so what is checked might not be what is used.
			return fmt.Errorf("the document's server %q has a variable %q whose default %q names another variable; set upstream explicitly", s.URL, name, v.Default)
		}
		raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("the document's server %q is not a valid URL; set upstream explicitly", raw)
	}
	u = loc.ResolveReference(u)
	docOrigin := origin(loc)
	if isRemote(u) && u.Host != "" && origin(u) == docOrigin {
		return nil
	}
	shown := *u
	shown.User = nil // a credential inherited from Location is not the server's
	return &OriginError{URL: shown.String(), Origin: origin(u), DocumentOrigin: docOrigin, Server: true}
}

var _ error = (*OriginError)(nil)
