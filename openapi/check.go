package openapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Validate returns kin-openapi's validation findings for doc, demoted to
// warnings: what Load adds to Warnings unless LoadOptions.DeferValidation
// is set. It only reads the document, so it may run while others read it
// too (as toolgen.Generate does).
func Validate(ctx context.Context, doc *Document) []Warning {
	return validate(ctx, doc.T)
}

// check lists the oddities of a loaded document that matter to tool
// generation.
func check(t *openapi3.T) []Warning {
	var ws []Warning
	ops := Operations(t)
	if len(ops) == 0 {
		ws = append(ws, Warning{Location: "paths", Message: "the document has no operations"})
	}
	byID := map[string][]Operation{}
	for _, op := range ops {
		o := op.Operation
		if id := o.OperationID; id != "" {
			byID[id] = append(byID[id], op)
		}
		if strings.TrimSpace(o.Summary) == "" && strings.TrimSpace(o.Description) == "" {
			ws = append(ws, Warning{Location: op.Location(), Message: "operation has neither summary nor description"})
		}
		if o.RequestBody != nil && o.RequestBody.Value != nil {
			ws = append(ws, checkRequestContent(op, o.RequestBody.Value.Content)...)
		}
	}
	ids := make([]string, 0, len(byID))
	for id, list := range byID {
		if len(list) > 1 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		list := byID[id]
		where := make([]string, len(list))
		for i, op := range list {
			where[i] = op.Method + " " + op.Path
		}
		ws = append(ws, Warning{
			Location: list[0].Location(),
			Message:  fmt.Sprintf("operationId %q is used by %d operations: %s", id, len(list), strings.Join(where, ", ")),
		})
	}
	return ws
}

// validate runs kin-openapi's validation. Its findings only warn, so a
// validator that trips over an odd document (kin-openapi notes that some may
// dereference nil once past a first error) must not fail the load either.
func validate(ctx context.Context, t *openapi3.T) []Warning {
	return validateWith(func() error {
		// Examples are documentation; validating them costs time on large
		// documents and says nothing about whether calls will work.
		return t.Validate(ctx, openapi3.EnableMultiError(), openapi3.DisableExamplesValidation())
	})
}

func validateWith(run func() error) (ws []Warning) {
	defer func() {
		if r := recover(); r != nil {
			ws = []Warning{{Location: "document", Message: fmt.Sprintf("validation stopped early: kin-openapi failed: %v", r)}}
		}
	}()
	if err := run(); err != nil {
		ws = appendValidation(ws, err, nil)
	}
	return ws
}

func checkRequestContent(op Operation, content openapi3.Content) []Warning {
	if len(content) == 0 {
		return nil
	}
	var unsupported, supported []string
	for mt := range content {
		if ClassifyMediaType(mt) == MediaUnsupported {
			unsupported = append(unsupported, mt)
		} else {
			supported = append(supported, mt)
		}
	}
	// With no supported alternative the tool sends the unsupported type
	// itself, and generation, which knows how, says so in one warning.
	if len(unsupported) == 0 || len(supported) == 0 {
		return nil
	}
	slices.Sort(unsupported)
	slices.Sort(supported)
	msg := fmt.Sprintf("request media type %s is not supported; the tool uses %s instead",
		strings.Join(unsupported, ", "), strings.Join(supported, " or "))
	return []Warning{{Location: op.Location() + ".requestBody", Message: msg}}
}

// appendValidation flattens kin-openapi's validation error tree into
// warnings, turning its context wrappers into the warning's location.
func appendValidation(ws []Warning, err error, loc []string) []Warning {
	at := func(parts ...string) []string { return append(slices.Clip(loc), parts...) }
	var (
		multi     openapi3.MultiError
		section   *openapi3.SectionValidationError
		path      *openapi3.PathValidationError
		operation *openapi3.OperationValidationError
		component *openapi3.ComponentValidationError
		webhook   *openapi3.WebhookValidationError
		dupID     *openapi3.DuplicateOperationIDError
	)
	// Only the outermost error is inspected at each step (errors.As would
	// skip past the context wrappers we want).
	switch {
	case asDirect(err, &multi):
		for _, e := range multi {
			ws = appendValidation(ws, e, loc)
		}
		return ws
	case asDirect(err, &section):
		return appendValidation(ws, section.Cause, at(section.Section))
	case asDirect(err, &path):
		return appendValidation(ws, path.Cause, at(path.Path))
	case asDirect(err, &operation):
		return appendValidation(ws, operation.Cause, at(strings.ToLower(operation.Method)))
	case asDirect(err, &component):
		return appendValidation(ws, component.Cause, at(componentSection(component.Section), component.Name))
	case asDirect(err, &webhook):
		return appendValidation(ws, webhook.Cause, at(webhook.Name))
	case errors.As(err, &dupID):
		return ws // check reports every duplicate itself, with all the operations
	}
	l := strings.Join(loc, ".")
	if l == "" {
		l = "document"
	}
	if isKinNewerConstruct(err.Error()) {
		return ws // checkNewerConstructs reports each one, at its place
	}
	return append(ws, Warning{Location: l, Message: err.Error()})
}

func asDirect[T error](err error, target *T) bool {
	t, ok := err.(T)
	if ok {
		*target = t
	}
	return ok
}

func componentSection(s string) string {
	switch s {
	case "schema":
		return "schemas"
	case "parameter":
		return "parameters"
	case "header":
		return "headers"
	case "request body":
		return "requestBodies"
	case "response":
		return "responses"
	case "security scheme":
		return "securitySchemes"
	case "example":
		return "examples"
	case "link":
		return "links"
	case "callback":
		return "callbacks"
	}
	return s
}
