package toolgen

import (
	"fmt"
	"path"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// extMCPConfirm asks for the user's confirmation before each call of an
// operation: true, or the message to show.
const extMCPConfirm = "x-mcp-confirm"

// Confirm marks a tool whose calls the user must confirm before the
// gateway sends them. Generation only records it; the gateway asks.
type Confirm struct {
	// Message is the document's text for the question (x-mcp-confirm's
	// string, trimmed); empty: the gateway writes its own.
	Message string
}

// confirm reads x-mcp-confirm and Options.ConfirmOperations. A glob
// match marks the tool even when the extension says false: the operator's
// configuration outranks the backend's document. A value that is neither
// a boolean nor a non-empty string is a warning and ignored.
func (g *generator) confirm(op openapi.Operation, name string) *Confirm {
	var spec *Confirm
	if v, present := op.Operation.Extensions[extMCPConfirm]; present {
		var err error
		if spec, err = parseConfirm(v); err != nil {
			g.warn(op.Location(), fmt.Sprintf("%s %v; ignored", extMCPConfirm, err))
		}
	}
	if spec == nil && confirmGlobbed(g.opts.ConfirmOperations, op, name) {
		spec = &Confirm{}
	}
	return spec
}

func parseConfirm(v any) (*Confirm, error) {
	if on, ok := extBoolValue(v); ok {
		if !on {
			return nil, nil
		}
		return &Confirm{}, nil
	}
	s, ok := v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("should be true, false or a non-empty message, not %v", v)
	}
	return &Confirm{Message: strings.TrimSpace(s)}, nil
}

// confirmGlobbed: a glob matches the tool's name, or the operation as
// Include's globs do.
func confirmGlobbed(globs []string, op openapi.Operation, name string) bool {
	for _, glob := range globs {
		if m, _ := path.Match(glob, name); m {
			return true
		}
	}
	return len(globs) > 0 && matchAny(globs, op)
}
