package toolgen

import (
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// ScopeAlternatives turns an operation's security requirements into the
// scope sets a caller may hold to use it: one per alternative, each the
// union of the scopes its oauth2 and openIdConnect schemes list. An
// alternative with no such scheme (an API key, say, or the empty
// requirement {}) needs no scope, and then neither does the operation:
// the result is nil. Sets are sorted and without duplicates.
func ScopeAlternatives(reqs openapi3.SecurityRequirements, components *openapi3.Components) [][]string {
	if len(reqs) == 0 {
		return nil
	}
	out := make([][]string, 0, len(reqs))
	for _, alt := range reqs {
		var scopes []string
		scoped := false
		for name, list := range alt {
			if !asksScopes(name, components) {
				continue
			}
			scoped = true
			scopes = append(scopes, list...)
		}
		if !scoped {
			return nil
		}
		slices.Sort(scopes)
		out = append(out, slices.Compact(scopes))
	}
	return out
}

// asksScopes reports whether the named scheme is one whose requirement
// lists scopes a caller's token must carry.
func asksScopes(name string, components *openapi3.Components) bool {
	if components == nil {
		return false
	}
	ref := components.SecuritySchemes[name]
	if ref == nil || ref.Value == nil {
		return false
	}
	return ref.Value.Type == "oauth2" || ref.Value.Type == "openIdConnect"
}

// DocumentScopes lists every scope the document's oauth2 flows declare
// (for scopes_supported in the protected resource metadata), sorted.
func DocumentScopes(doc *openapi3.T) []string {
	if doc == nil || doc.Components == nil {
		return nil
	}
	var out []string
	for _, ref := range doc.Components.SecuritySchemes {
		if ref == nil || ref.Value == nil || ref.Value.Flows == nil {
			continue
		}
		f := ref.Value.Flows
		for _, flow := range []*openapi3.OAuthFlow{f.Implicit, f.Password, f.ClientCredentials, f.AuthorizationCode} {
			if flow == nil {
				continue
			}
			for s := range flow.Scopes {
				out = append(out, s)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
