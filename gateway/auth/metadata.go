package auth

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// resourceMetadata is the RFC 9728 §2 document the gateway publishes.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// Metadata is the protected resource metadata document (RFC 9728) for
// resource (the absolute URL clients use as the token's audience, e.g.
// https://gw.example/mcp): the authorization servers that issue tokens for
// it, the scopes it knows (left out when empty), and the one bearer method
// it accepts, the Authorization header.
func Metadata(resource string, authServers, scopes []string) []byte {
	b, err := json.Marshal(resourceMetadata{
		Resource:               resource,
		AuthorizationServers:   authServers,
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
	})
	if err != nil {
		// Strings and string slices always marshal.
		panic("auth: marshal resource metadata: " + err.Error())
	}
	return b
}

// MetadataHandler serves Metadata(resource, authServers, scopes), built
// once, to GET and HEAD (405 otherwise), cacheable for an hour. The
// document is public and browser-based clients read it cross-origin, so it
// allows any origin and answers CORS preflights.
//
// The gateway mounts it at /.well-known/oauth-protected-resource and at
// that path followed by the MCP endpoint's path (RFC 9728 §3.1).
func MetadataHandler(resource string, authServers, scopes []string) http.Handler {
	body := Metadata(resource, authServers, scopes)
	length := strconv.Itoa(len(body))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "*")
			h.Set("Access-Control-Max-Age", "86400")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=3600")
		h.Set("Content-Length", length)
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(body)
	})
}
