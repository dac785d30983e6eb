package openapi

import (
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// Document is a loaded, resolved OpenAPI description. Swagger 2.0 input is
// converted to OpenAPI 3 on load, so consumers only ever see openapi3 types.
type Document struct {
	// T is the resolved document: every $ref (internal and external) has its
	// Value set. Circular references keep both Ref and Value.
	T *openapi3.T
	// SourceVersion is the version string the input declared ("2.0", "3.0.3",
	// "3.1.0", ...), before any conversion.
	SourceVersion string
	// Location is the file path or URL the document was loaded from.
	Location string
	// Warnings are oddities that did not stop loading (duplicate operationIds,
	// unsupported media types, missing descriptions, ...). The caller logs them.
	Warnings []Warning
}

// Warning is one non-fatal oddity found while loading a document.
type Warning struct {
	// Location is a JSON-pointer-like place in the document, e.g.
	// "paths./pets.get" or "components.schemas.Pet".
	Location string
	Message  string
}

func (w Warning) String() string { return fmt.Sprintf("%s: %s", w.Location, w.Message) }
