package call

// Backend credentials. They come only from Config: static Headers on
// every request, APIKeys placed where their apiKey security scheme says,
// BearerToken for http bearer, oauth2 and openIdConnect schemes, and tokens
// obtained per call from a token endpoint (tokens.go). The MCP client's own
// credentials are never forwarded: Call receives arguments, not the
// incoming request, and arguments cannot set a header, query parameter or
// cookie that a credential occupies (such parameters are dropped, and
// credentials are added after everything else). The client's token, given
// with WithSubjectToken, goes to the token exchange endpoint only.
//
// Which credential serves a bearer-type scheme:
//
//   - oauth2, openIdConnect: token exchange, else the client credentials
//     grant, else BearerToken;
//   - http bearer: BearerToken, else token exchange, else the client
//     credentials grant;
//   - no declared security: BearerToken when BearerAlways, else nothing
//     (a token endpoint's token goes only where a scheme asks for it).
//
// For each operation the first alternative of its security requirement
// whose schemes can all be satisfied from configuration is used; when none
// can, no scheme credential is sent and the backend's 401 explains why.
// Other schemes (http basic, mutualTLS) can be served with a static header.

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// credential is one value placed in the request.
type credential struct {
	in    string // header, query or cookie
	name  string // canonical for headers
	value string
	// token, when set, supplies the value per call: "Bearer " and a token
	// it obtains (addTokens). value is then empty.
	token tokenSource
}

type credentialSet []credential

// occupies reports whether a credential uses this parameter's place.
func (cs credentialSet) occupies(in, name string) bool {
	for _, c := range cs {
		switch {
		case c.in != in:
		case in == openapi3.ParameterInHeader && strings.EqualFold(c.name, name):
			return true
		case c.name == name:
			return true
		}
	}
	return false
}

// apply adds the static credentials, replacing any value already there.
// Per-call tokens are added by addTokens.
func (cs credentialSet) apply(req *http.Request) {
	for _, c := range cs {
		if c.token != nil {
			continue
		}
		switch c.in {
		case openapi3.ParameterInHeader:
			req.Header.Set(c.name, c.value)
		case openapi3.ParameterInQuery:
			pair := escapeQueryValue(c.name) + "=" + escapeQueryValue(c.value)
			if req.URL.RawQuery == "" {
				req.URL.RawQuery = pair
			} else {
				req.URL.RawQuery += "&" + pair
			}
		case openapi3.ParameterInCookie:
			pair := escapeCookie(c.name) + "=" + escapeCookie(c.value)
			if existing := req.Header.Get("Cookie"); existing != "" {
				pair = existing + "; " + pair
			}
			req.Header.Set("Cookie", pair)
		}
	}
}

// credentialsFor picks the credentials for a security requirement.
func (c *Caller) credentialsFor(reqs openapi3.SecurityRequirements) credentialSet {
	if len(reqs) == 0 {
		if c.always && c.bearer != "" {
			return credentialSet{c.bearerCredential()}
		}
		return nil
	}
	for _, alt := range reqs {
		if creds, ok := c.satisfy(alt); ok && len(creds) > 0 {
			return creds
		}
	}
	return nil
}

func (c *Caller) bearerCredential() credential {
	return credential{in: openapi3.ParameterInHeader, name: "Authorization", value: "Bearer " + c.bearer}
}

// satisfy returns the credentials for every scheme of one alternative, or
// false when one of them is not configured.
func (c *Caller) satisfy(alt openapi3.SecurityRequirement) (credentialSet, bool) {
	names := make([]string, 0, len(alt))
	for name := range alt {
		names = append(names, name)
	}
	sort.Strings(names)
	var creds credentialSet
	for _, name := range names {
		scheme := c.securityScheme(name)
		if scheme == nil {
			return nil, false
		}
		cred, ok := c.schemeCredential(name, scheme, alt[name])
		switch {
		case ok:
			creds = append(creds, cred)
		case c.staticCovers(scheme):
			// A configured static header carries it already.
		default:
			return nil, false
		}
	}
	return creds, true
}

// schemeCredential is the configured credential for one scheme, whose
// requirement lists scopes (used by the client credentials grant).
func (c *Caller) schemeCredential(name string, scheme *openapi3.SecurityScheme, scopes []string) (credential, bool) {
	switch strings.ToLower(scheme.Type) {
	case "apikey":
		key, ok := c.apiKeys[name]
		if !ok {
			return credential{}, false
		}
		in := strings.ToLower(scheme.In)
		cname := scheme.Name
		if in == openapi3.ParameterInHeader {
			cname = http.CanonicalHeaderKey(cname)
		}
		return credential{in: in, name: cname, value: key}, true
	case "http":
		switch {
		case !strings.EqualFold(scheme.Scheme, "bearer"):
			return credential{}, false
		case c.bearer != "":
			return c.bearerCredential(), true
		}
		return c.tokenCredential(scopes)
	case "oauth2", "openidconnect":
		if cred, ok := c.tokenCredential(scopes); ok {
			return cred, true
		}
		if c.bearer == "" {
			return credential{}, false
		}
		return c.bearerCredential(), true
	}
	return credential{}, false
}

// staticCovers reports whether a configured static header satisfies a
// scheme: Authorization for http, oauth2 and openIdConnect, the key's
// header for an apiKey in a header.
func (c *Caller) staticCovers(scheme *openapi3.SecurityScheme) bool {
	switch strings.ToLower(scheme.Type) {
	case "apikey":
		_, ok := c.headers[http.CanonicalHeaderKey(scheme.Name)]
		return ok && strings.EqualFold(scheme.In, openapi3.ParameterInHeader)
	case "http", "oauth2", "openidconnect":
		_, ok := c.headers["Authorization"]
		return ok
	}
	return false
}

func (c *Caller) securityScheme(name string) *openapi3.SecurityScheme {
	comps := c.doc.T.Components
	if comps == nil {
		return nil
	}
	ref := comps.SecuritySchemes[name]
	if ref == nil {
		return nil
	}
	return ref.Value
}

// checkAPIKeys checks that every configured key names an apiKey scheme.
func checkAPIKeys(doc *openapi3.T, keys map[string]string) (map[string]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	var schemes openapi3.SecuritySchemes
	if doc.Components != nil {
		schemes = doc.Components.SecuritySchemes
	}
	out := make(map[string]string, len(keys))
	for name, value := range keys {
		ref := schemes[name]
		if ref == nil || ref.Value == nil {
			return nil, fmt.Errorf("APIKeys[%q]: the document declares no security scheme %q", name, name)
		}
		s := ref.Value
		if !strings.EqualFold(s.Type, "apiKey") {
			return nil, fmt.Errorf("APIKeys[%q]: security scheme %q has type %q, not apiKey", name, name, s.Type)
		}
		switch strings.ToLower(s.In) {
		case openapi3.ParameterInHeader, openapi3.ParameterInQuery, openapi3.ParameterInCookie:
		default:
			return nil, fmt.Errorf("APIKeys[%q]: security scheme %q is placed in %q, not header, query or cookie", name, name, s.In)
		}
		if s.Name == "" {
			return nil, fmt.Errorf("APIKeys[%q]: security scheme %q names no %s", name, name, s.In)
		}
		if value == "" {
			return nil, fmt.Errorf("APIKeys[%q] is empty", name)
		}
		if strings.ContainsFunc(value, isHeaderControl) {
			return nil, fmt.Errorf("APIKeys[%q] contains control characters", name)
		}
		out[name] = value
	}
	return out, nil
}

// staticHeaders validates Config.Headers. A "Host" entry sets the
// request's Host instead of a header.
func staticHeaders(cfg map[string]string) (http.Header, string, error) {
	if len(cfg) == 0 {
		return nil, "", nil
	}
	h := make(http.Header, len(cfg))
	host := ""
	for name, value := range cfg {
		if name == "" || strings.ContainsFunc(name, func(r rune) bool { return !isTokenChar(r) }) {
			return nil, "", fmt.Errorf("Headers[%q]: not a valid header name", name)
		}
		if strings.ContainsFunc(value, isHeaderControl) {
			return nil, "", fmt.Errorf("Headers[%q]: the value contains control characters", name)
		}
		key := http.CanonicalHeaderKey(name)
		switch key {
		case "Host":
			host = value
			continue
		case "Content-Length", "Transfer-Encoding", "Connection", "Te", "Upgrade", "Trailer":
			return nil, "", fmt.Errorf("Headers[%q]: this header is managed by the HTTP client", name)
		}
		h[key] = []string{value}
	}
	return h, host, nil
}

// addStaticHeaders sets the configured headers, replacing argument values
// of the same name; a static Cookie is added to the argument cookies.
func (c *Caller) addStaticHeaders(req *http.Request) {
	for k, v := range c.headers {
		if k == "Cookie" {
			if existing := req.Header.Get("Cookie"); existing != "" {
				req.Header.Set("Cookie", existing+"; "+v[0])
				continue
			}
		}
		req.Header[k] = v
	}
	if c.host != "" {
		req.Host = c.host
	}
}

// MissingCredential is a security scheme that some tools require and no
// configured credential satisfies: their calls go out without it, and the
// backend's 401 is all the model sees.
type MissingCredential struct {
	// Scheme is the scheme's name in the document.
	Scheme string
	// Type is its type (apiKey, http, oauth2, openIdConnect, mutualTLS),
	// In and Name where an apiKey goes, HTTPScheme the http scheme
	// (bearer, basic, ...). All empty when the document does not declare
	// the scheme.
	Type, In, Name, HTTPScheme string
	// Tools are the tools that need it, in the order given.
	Tools []string
}

// MissingCredentials lists, per security scheme, the tools none of whose
// security alternatives the configuration satisfies. A tool with no
// security requirement, or with an empty (optional) alternative, needs
// nothing. A static header can satisfy a scheme: Authorization for http,
// oauth2 and openIdConnect, the key's header for an apiKey in a header. A
// configured token endpoint (OAuthTokenURL, TokenExchangeURL) satisfies
// oauth2, openIdConnect and http bearer schemes; whether it will issue a
// token is only known on the call.
func (c *Caller) MissingCredentials(tools []*toolgen.Tool) []MissingCredential {
	var out []MissingCredential
	index := map[string]int{}
	for _, t := range tools {
		if t.Binding == nil || len(t.Binding.Security) == 0 {
			continue
		}
		var missing []string
		satisfied := false
		for _, alt := range t.Binding.Security {
			var lacking []string
			for name := range alt {
				if !c.schemeConfigured(name, alt[name]) {
					lacking = append(lacking, name)
				}
			}
			if len(lacking) == 0 {
				satisfied = true
				break
			}
			missing = append(missing, lacking...)
		}
		if satisfied {
			continue
		}
		sort.Strings(missing)
		for i, name := range missing {
			if i > 0 && missing[i-1] == name {
				continue
			}
			j, ok := index[name]
			if !ok {
				j = len(out)
				index[name] = j
				mc := MissingCredential{Scheme: name}
				if s := c.securityScheme(name); s != nil {
					mc.Type, mc.In, mc.Name, mc.HTTPScheme = s.Type, s.In, s.Name, s.Scheme
				}
				out = append(out, mc)
			}
			out[j].Tools = append(out[j].Tools, t.Name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Scheme < out[j].Scheme })
	return out
}

// schemeConfigured reports whether the configuration can satisfy one
// security scheme, whose requirement lists scopes: the same rule satisfy
// applies on every call.
func (c *Caller) schemeConfigured(name string, scopes []string) bool {
	scheme := c.securityScheme(name)
	if scheme == nil {
		return false
	}
	_, ok := c.schemeCredential(name, scheme, scopes)
	return ok || c.staticCovers(scheme)
}
