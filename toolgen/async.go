package toolgen

import (
	"fmt"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

// extMCPAsync marks an operation asynchronous: it answers 202 Accepted and
// a status URL, which the call path polls until the final answer.
const extMCPAsync = "x-mcp-async"

// AsyncSpec is how an asynchronous operation names its status URL.
type AsyncSpec struct {
	// Location is a JSON pointer (RFC 6901) into the 202 body, such as
	// "/statusUrl", to the string that holds the status URL. Empty: the
	// 202's Location header holds it.
	Location string
}

// async reads x-mcp-async: true (the Location header), false or absent
// (nil), or {"location": "<JSON pointer>"}. Anything else is a warning and
// nil.
func (g *generator) async(op openapi.Operation) *AsyncSpec {
	v, present := op.Operation.Extensions[extMCPAsync]
	if !present {
		return nil
	}
	spec, err := parseAsync(v)
	if err != nil {
		g.warn(op.Location(), fmt.Sprintf("%s %v; ignored", extMCPAsync, err))
		return nil
	}
	return spec
}

func parseAsync(v any) (*AsyncSpec, error) {
	if on, ok := extBoolValue(v); ok {
		if !on {
			return nil, nil
		}
		return &AsyncSpec{}, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("should be true, false or an object with a location, not %v", v)
	}
	for _, k := range sortedKeysOf(obj) {
		if k != "location" {
			return nil, fmt.Errorf("has no field %q (only location)", k)
		}
	}
	ptr, ok := obj["location"].(string)
	switch {
	case !ok:
		return nil, fmt.Errorf("location should be a JSON pointer into the 202 body such as \"/statusUrl\", not %v", obj["location"])
	case !validPointer(ptr):
		return nil, fmt.Errorf("location %q is not a JSON pointer (it starts with / and escapes ~ as ~0, / as ~1)", ptr)
	}
	return &AsyncSpec{Location: ptr}, nil
}

// validPointer reports whether p is a JSON pointer to something inside a
// document (not the whole of it): "/" and tokens whose every ~ is ~0 or ~1.
func validPointer(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || p[i+1] != '0' && p[i+1] != '1') {
			return false
		}
	}
	return true
}
