package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Documents that say 3.0 (or 2.0) but use OpenAPI 3.1 schema constructs:
// a type array (type: [integer, "null"]) or type "null" (in an anyOf,
// say). Their authors meant what 3.1 means, and that is how kin-openapi
// reads them, and so how generation and the call path treat them. Each
// such construct gets one warning at its own place; kin-openapi's
// validation stops at the first one of an operation with a message that
// names neither the place nor the reading, so its findings of these two
// kinds are left out (validate).

// kinNewerConstructs are kin-openapi's messages for the constructs that
// checkNewerConstructs reports itself.
var kinNewerConstructs = []string{
	`unsupported 'type' value "null"`,
	"an array of types is for OpenAPI >=3.1",
}

func isKinNewerConstruct(msg string) bool {
	for _, m := range kinNewerConstructs {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// checkNewerConstructs warns once per 3.1-only type construct in a
// document of an earlier version.
func checkNewerConstructs(t *openapi3.T, version string) []Warning {
	if strings.HasPrefix(version, "3.1") || strings.HasPrefix(version, "3.2") {
		return nil
	}
	w := &newerWalk{seen: map[*openapi3.Schema]bool{}}
	if c := t.Components; c != nil {
		for _, name := range slices.Sorted(maps.Keys(c.Schemas)) {
			w.schema(c.Schemas[name], "components.schemas."+name, true)
		}
		for _, name := range slices.Sorted(maps.Keys(c.Parameters)) {
			if p := c.Parameters[name]; p != nil && p.Value != nil {
				w.parameter(p.Value, "components.parameters."+name)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(c.RequestBodies)) {
			if rb := c.RequestBodies[name]; rb != nil && rb.Value != nil {
				w.content(rb.Value.Content, "components.requestBodies."+name)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(c.Responses)) {
			if r := c.Responses[name]; r != nil && r.Value != nil {
				w.content(r.Value.Content, "components.responses."+name)
				w.headers(r.Value.Headers, "components.responses."+name+".headers")
			}
		}
		w.headers(c.Headers, "components.headers")
	}
	pathItems := map[*openapi3.PathItem]bool{}
	for _, op := range Operations(t) {
		loc := op.Location()
		if item := op.PathItem; item != nil && !pathItems[item] {
			pathItems[item] = true
			for _, p := range item.Parameters {
				if p != nil && p.Ref == "" && p.Value != nil {
					w.parameter(p.Value, "paths."+op.Path+".parameters."+p.Value.Name)
				}
			}
		}
		for _, p := range op.Operation.Parameters {
			if p != nil && p.Ref == "" && p.Value != nil {
				w.parameter(p.Value, loc+".parameters."+p.Value.Name)
			}
		}
		if rb := op.Operation.RequestBody; rb != nil && rb.Ref == "" && rb.Value != nil {
			w.content(rb.Value.Content, loc+".requestBody")
		}
		if rs := op.Operation.Responses; rs != nil {
			for _, code := range slices.Sorted(maps.Keys(rs.Map())) {
				if r := rs.Value(code); r != nil && r.Ref == "" && r.Value != nil {
					w.content(r.Value.Content, loc+".responses."+code)
					w.headers(r.Value.Headers, loc+".responses."+code+".headers")
				}
			}
		}
	}
	return w.ws
}

type newerWalk struct {
	seen map[*openapi3.Schema]bool
	ws   []Warning
}

func (w *newerWalk) parameter(p *openapi3.Parameter, loc string) {
	w.schema(p.Schema, loc+".schema", false)
	w.content(p.Content, loc)
}

func (w *newerWalk) headers(hs openapi3.Headers, loc string) {
	for _, name := range slices.Sorted(maps.Keys(hs)) {
		if h := hs[name]; h != nil && h.Ref == "" && h.Value != nil {
			w.parameter(&h.Value.Parameter, loc+"."+name)
		}
	}
}

func (w *newerWalk) content(c openapi3.Content, loc string) {
	for _, mt := range slices.Sorted(maps.Keys(c)) {
		if m := c[mt]; m != nil {
			w.schema(m.Schema, loc+".content."+mt+".schema", false)
		}
	}
}

// schema walks one schema; a $ref is walked where it is defined (top is
// true for the definitions themselves).
func (w *newerWalk) schema(ref *openapi3.SchemaRef, loc string, top bool) {
	if ref == nil || ref.Value == nil || (ref.Ref != "" && !top) || w.seen[ref.Value] {
		return
	}
	s := ref.Value
	w.seen[s] = true
	if types := s.Type.Slice(); len(types) > 1 {
		quoted, _ := json.Marshal(types)
		w.ws = append(w.ws, Warning{Location: loc, Message: fmt.Sprintf(
			"OpenAPI 3.1 construct in a pre-3.1 document: type is the array %s; it is read as 3.1 reads it (any of those types)", quoted)})
	} else if len(types) == 1 && types[0] == "null" {
		w.ws = append(w.ws, Warning{Location: loc, Message: `OpenAPI 3.1 construct in a pre-3.1 document: type "null"; it is read as 3.1 reads it (the value null)`})
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		w.schema(s.Properties[name], loc+".properties."+name, false)
	}
	w.schema(s.Items, loc+".items", false)
	w.schema(s.Not, loc+".not", false)
	if s.AdditionalProperties.Schema != nil {
		w.schema(s.AdditionalProperties.Schema, loc+".additionalProperties", false)
	}
	for _, group := range []struct {
		key  string
		list openapi3.SchemaRefs
	}{{"allOf", s.AllOf}, {"anyOf", s.AnyOf}, {"oneOf", s.OneOf}} {
		for i, sub := range group.list {
			w.schema(sub, loc+"."+group.key+"["+strconv.Itoa(i)+"]", false)
		}
	}
}
