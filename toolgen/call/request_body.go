package call

// Request bodies. The body's arguments are either the properties of a
// flattened object body (binding.Body.Flattened: top-level arguments mapped
// to properties by Props) or one argument holding the whole body.
//
// JSON bodies are assembled from the arguments' raw JSON without decoding
// them. Binary data (octet-stream bodies and binary multipart fields) is
// given as base64, optionally as a data: URL. In a flattened JSON body an
// explicit null is sent as null (it can mean "clear this field"); form and
// multipart bodies cannot carry null, so such fields are left out.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/textproto"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

type bodyPlan struct {
	kind      toolgen.BodyKind
	mediaType string // the Content-Type sent; multipart adds its boundary
	declared  string // the media type as the document names it
	required  bool
	schema    *openapi3.SchemaRef
	encoding  openapi3.Encodings
	flattened bool
	props     []bodyProp        // flattened: sorted by property name
	propArg   map[string]string // flattened: property → argument
	arg       string            // not flattened: the body argument
	// onWire: openapi3filter decodes and validates the body as sent (JSON,
	// text/plain, application/octet-stream). Other bodies are validated as
	// the argument's JSON value; text and binary ones of other media types
	// are not validated beyond their argument's type.
	onWire bool
}

type bodyProp struct {
	arg, prop string
	key       []byte // the JSON-quoted property name and a colon
}

func newBodyPlan(bb *toolgen.BodyBinding, rb *openapi3.RequestBody) (*bodyPlan, error) {
	bp := &bodyPlan{
		declared:  bb.MediaType,
		required:  bb.Required,
		schema:    bb.Schema,
		flattened: bb.Flattened,
		arg:       bb.Arg,
	}
	var media *openapi3.MediaType
	if rb != nil {
		media = rb.Content.Get(bb.MediaType)
	}
	if media != nil {
		bp.encoding = media.Encoding
		if bp.schema == nil {
			bp.schema = media.Schema
		}
	}
	bp.kind, bp.mediaType = toolgen.BodyEncoding(bb.MediaType, bp.schema)
	sent := toolgen.MediaBase(bp.mediaType)
	bp.onWire = rb != nil && ((bp.kind == toolgen.BodyJSON && (sent == "application/json" || strings.HasSuffix(sent, "+json"))) ||
		sent == "text/plain" || sent == "application/octet-stream")

	if bb.Flattened {
		if bp.kind != toolgen.BodyJSON && bp.kind != toolgen.BodyForm && bp.kind != toolgen.BodyMultipart {
			return nil, fmt.Errorf("a %s request body cannot be flattened into arguments", bb.MediaType)
		}
		bp.propArg = make(map[string]string, len(bb.Props))
		for arg, prop := range bb.Props {
			key, _ := json.Marshal(prop)
			bp.props = append(bp.props, bodyProp{arg: arg, prop: prop, key: append(key, ':')})
			bp.propArg[prop] = arg
		}
		sort.Slice(bp.props, func(i, j int) bool { return bp.props[i].prop < bp.props[j].prop })
	} else if bb.Arg == "" {
		return nil, errors.New("the request body has no argument")
	}
	return bp, nil
}

// build serializes the body arguments into parts.
func (bp *bodyPlan) build(in map[string]json.RawMessage, parts *requestParts) *argError {
	switch bp.kind {
	case toolgen.BodyJSON:
		return bp.buildJSON(in, parts)
	case toolgen.BodyForm, toolgen.BodyMultipart:
		obj, aerr := bp.object(in)
		if aerr != nil || obj == nil {
			return aerr
		}
		parts.asJSON = append(parts.asJSON, jsonCheck{value: obj, schema: bp.schema, explain: bp.explain})
		if bp.kind == toolgen.BodyForm {
			parts.body, parts.contentType = bp.formBody(obj), bp.mediaType
			return nil
		}
		return bp.multipartBody(obj, parts)
	}

	raw, ok := in[bp.arg]
	if !ok || isJSONNull(raw) {
		if bp.required {
			return &argError{arg: bp.arg, msg: "a value is required: it is the request body"}
		}
		return nil
	}
	v, err := decodeJSONValue(raw)
	if err != nil {
		return &argError{arg: bp.arg, msg: "is not valid JSON"}
	}
	s, isString := v.(string)
	if bp.kind == toolgen.BodyBinary {
		if !isString {
			return &argError{arg: bp.arg, msg: "must be a base64-encoded string: the request body is " + bp.declared}
		}
		data, err := decodeBase64(s)
		if err != nil {
			return &argError{arg: bp.arg, msg: "must be base64-encoded binary data"}
		}
		parts.body, parts.contentType = data, bp.mediaType
		return nil
	}
	switch v.(type) {
	case map[string]any, []any:
		return &argError{arg: bp.arg, msg: "must be a string: the request body is " + bp.declared}
	}
	if !isString {
		s = scalarText(v)
	}
	parts.body, parts.contentType = []byte(s), bp.mediaType
	return nil
}

func (bp *bodyPlan) buildJSON(in map[string]json.RawMessage, parts *requestParts) *argError {
	var data []byte
	if bp.flattened {
		for _, pr := range bp.props {
			raw, ok := in[pr.arg]
			if !ok {
				continue
			}
			if data == nil {
				data = append(make([]byte, 0, 256), '{')
			} else {
				data = append(data, ',')
			}
			data = append(data, pr.key...)
			data = append(data, bytes.TrimSpace(raw)...)
		}
		if data == nil {
			if !bp.required {
				return nil
			}
			data = []byte{'{'}
		}
		data = append(data, '}')
	} else {
		raw, ok := in[bp.arg]
		if !ok || isJSONNull(raw) {
			if bp.required {
				return &argError{arg: bp.arg, msg: "a value is required: it is the request body"}
			}
			return nil
		}
		data = bytes.TrimSpace(raw)
	}
	if !bp.onWire && bp.schema != nil {
		v, err := decodeJSONValue(data)
		if err != nil {
			return &argError{msg: "the request body is not valid JSON"}
		}
		parts.asJSON = append(parts.asJSON, jsonCheck{value: v, schema: bp.schema, explain: bp.explain})
	}
	parts.body, parts.contentType = data, bp.mediaType
	return nil
}

// object collects the fields of a form or multipart body. It returns nil
// when there is no body to send.
func (bp *bodyPlan) object(in map[string]json.RawMessage) (map[string]any, *argError) {
	if bp.flattened {
		obj := make(map[string]any, len(bp.props))
		for _, pr := range bp.props {
			raw, ok := in[pr.arg]
			if !ok || isJSONNull(raw) {
				continue
			}
			v, err := decodeJSONValue(raw)
			if err != nil {
				return nil, &argError{arg: pr.arg, msg: "is not valid JSON"}
			}
			obj[pr.prop] = v
		}
		if len(obj) == 0 && !bp.required {
			return nil, nil
		}
		return obj, nil
	}
	raw, ok := in[bp.arg]
	if !ok || isJSONNull(raw) {
		if bp.required {
			return nil, &argError{arg: bp.arg, msg: "a value is required: it is the request body"}
		}
		return nil, nil
	}
	v, err := decodeJSONValue(raw)
	if err != nil {
		return nil, &argError{arg: bp.arg, msg: "is not valid JSON"}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &argError{arg: bp.arg, msg: "must be a JSON object: its properties become the form fields"}
	}
	return obj, nil
}

// formBody encodes an application/x-www-form-urlencoded body. Each field
// follows its encoding entry (style, explode, allowReserved; form/explode by
// default) like a query parameter; an entry with only a JSON contentType
// sends the field as JSON text.
func (bp *bodyPlan) formBody(obj map[string]any) []byte {
	var q strings.Builder
	for _, k := range sortedKeys(obj) {
		v := obj[k]
		enc := bp.encoding[k]
		if enc != nil && enc.ContentType != "" && enc.Style == "" && enc.Explode == nil && !enc.AllowReserved {
			text := scalarText(v)
			if openapi.IsJSONMediaType(toolgen.MediaBase(enc.ContentType)) {
				b, _ := json.Marshal(v)
				text = string(b)
			}
			appendQueryValue(&q, openapi3.SerializationForm, true, false, k, text)
			continue
		}
		sm := enc.SerializationMethod()
		appendQueryValue(&q, sm.Style, sm.Explode, enc != nil && enc.AllowReserved, k, v)
	}
	return []byte(q.String())
}

var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// multipartBody encodes a multipart body: one part per field, repeated for
// array fields; binary fields are decoded from base64 and sent as files;
// objects are sent as JSON parts.
func (bp *bodyPlan) multipartBody(obj map[string]any, parts *requestParts) *argError {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, k := range sortedKeys(obj) {
		v := obj[k]
		prop := propertySchema(bp.schema, k)
		enc := bp.encoding[k]
		if items, ok := v.([]any); ok && (prop == nil || prop.Value.Type.Is(openapi3.TypeArray)) {
			var itemSchema *openapi3.SchemaRef
			if prop != nil {
				itemSchema = prop.Value.Items
			}
			for _, item := range items {
				if aerr := bp.writePart(w, k, item, itemSchema, enc); aerr != nil {
					return aerr
				}
			}
			continue
		}
		if aerr := bp.writePart(w, k, v, prop, enc); aerr != nil {
			return aerr
		}
	}
	if err := w.Close(); err != nil {
		return &argError{msg: "the multipart request body could not be built"}
	}
	parts.body = buf.Bytes()
	parts.contentType = mime.FormatMediaType(bp.mediaType, map[string]string{"boundary": w.Boundary()})
	return nil
}

func (bp *bodyPlan) writePart(w *multipart.Writer, name string, v any, schema *openapi3.SchemaRef, enc *openapi3.Encoding) *argError {
	h := make(textproto.MIMEHeader, 2)
	var data []byte
	disposition := `form-data; name="` + quoteEscaper.Replace(name) + `"`
	switch x := v.(type) {
	case map[string]any, []any:
		data, _ = json.Marshal(x)
		h.Set("Content-Type", partContentType(enc, nil, "application/json"))
	default:
		if toolgen.IsBinarySchema(schema) {
			s, ok := v.(string)
			if !ok {
				return bp.fieldError(name, "must be a base64-encoded string")
			}
			var err error
			if data, err = decodeBase64(s); err != nil {
				return bp.fieldError(name, "must be base64-encoded binary data")
			}
			disposition += `; filename="` + quoteEscaper.Replace(name) + `"`
			h.Set("Content-Type", partContentType(enc, schema, "application/octet-stream"))
			break
		}
		data = []byte(scalarText(v))
		if ct := partContentType(enc, nil, ""); ct != "" && ct != "text/plain" {
			h.Set("Content-Type", ct)
		}
	}
	h.Set("Content-Disposition", disposition)
	pw, err := w.CreatePart(h)
	if err == nil {
		_, err = pw.Write(data)
	}
	if err != nil {
		return &argError{msg: "the multipart request body could not be built"}
	}
	return nil
}

// partContentType picks a part's media type: the encoding's (first, if it
// lists several; wildcards fall back), else the schema's contentMediaType,
// else def.
func partContentType(enc *openapi3.Encoding, schema *openapi3.SchemaRef, def string) string {
	if enc != nil && enc.ContentType != "" {
		first, _, _ := strings.Cut(enc.ContentType, ",")
		first = strings.TrimSpace(first)
		if !strings.Contains(first, "*") {
			return first
		}
	}
	if schema != nil && schema.Value != nil && schema.Value.ContentMediaType != "" {
		return schema.Value.ContentMediaType
	}
	return def
}

func (bp *bodyPlan) fieldError(prop, msg string) *argError {
	if bp.flattened {
		if arg, ok := bp.propArg[prop]; ok {
			return &argError{arg: arg, msg: msg}
		}
	}
	return &argError{arg: bp.arg, msg: fmt.Sprintf("property %q %s", prop, msg)}
}

// explain maps a schema error in the body to the argument it concerns.
func (bp *bodyPlan) explain(ptr []string, reason string, required bool) *argError {
	if bp.flattened {
		if len(ptr) > 0 {
			if arg, ok := bp.propArg[ptr[0]]; ok {
				return schemaArgError(arg, ptr[1:], reason, required)
			}
		}
		return &argError{msg: reason + atPointer(ptr)}
	}
	return schemaArgError(bp.arg, ptr, reason, required)
}

// propertySchema finds a property's schema in an object schema, looking
// into allOf members too.
func propertySchema(ref *openapi3.SchemaRef, name string) *openapi3.SchemaRef {
	if ref == nil || ref.Value == nil {
		return nil
	}
	if p := ref.Value.Properties[name]; p != nil && p.Value != nil {
		return p
	}
	for _, sub := range ref.Value.AllOf {
		if p := propertySchema(sub, name); p != nil {
			return p
		}
	}
	return nil
}

// decodeBase64 accepts standard or URL-safe base64, padded or not, with
// line breaks, or a data: URL.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "data:") {
		if comma := strings.IndexByte(s, ','); comma > 0 && strings.HasSuffix(s[:comma], ";base64") {
			s = s[comma+1:]
		}
	}
	if strings.ContainsAny(s, " \r\n\t") {
		s = strings.Map(func(r rune) rune {
			if r == ' ' || r == '\r' || r == '\n' || r == '\t' {
				return -1
			}
			return r
		}, s)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if data, err := enc.DecodeString(s); err == nil {
			return data, nil
		}
	}
	return nil, errors.New("not base64")
}
