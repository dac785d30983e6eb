package openapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Operation is one operation of a document with where it sits.
type Operation struct {
	Path      string // path template as written, e.g. /pets/{petId}
	Method    string // upper case
	PathItem  *openapi3.PathItem
	Operation *openapi3.Operation
}

// Location is the operation's place in the document, e.g. "paths./pets.get",
// the form Warning.Location uses.
func (o Operation) Location() string {
	return "paths." + o.Path + "." + strings.ToLower(o.Method)
}

// methodOrder is the order of the Path Item Object's fields in the
// specification; custom methods (3.2 additionalOperations) follow, sorted.
var methodOrder = []string{
	http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete,
	http.MethodOptions, http.MethodHead, http.MethodPatch, http.MethodTrace,
	openapi3.MethodQuery,
}

// Operations lists the operations of t's paths in a deterministic order:
// paths sorted as strings, then methods in the order the Path Item Object
// declares them (get, put, post, delete, options, head, patch, trace, query),
// then custom methods sorted. kin-openapi keeps paths in a map, so the order
// of the source document is not available.
func Operations(t *openapi3.T) []Operation {
	if t == nil || t.Paths == nil {
		return nil
	}
	m := t.Paths.Map()
	paths := make([]string, 0, len(m))
	for p := range m {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var out []Operation
	for _, p := range paths {
		item := m[p]
		if item == nil {
			continue
		}
		for _, method := range methodOrder {
			if op := item.GetOperation(method); op != nil {
				out = append(out, Operation{Path: p, Method: method, PathItem: item, Operation: op})
			}
		}
		custom := make([]string, 0, len(item.AdditionalOperations))
		for method, op := range item.AdditionalOperations {
			if op != nil && !slices.Contains(methodOrder, strings.ToUpper(method)) {
				custom = append(custom, method)
			}
		}
		slices.Sort(custom)
		for _, method := range custom {
			out = append(out, Operation{Path: p, Method: strings.ToUpper(method), PathItem: item, Operation: item.AdditionalOperations[method]})
		}
	}
	return out
}
