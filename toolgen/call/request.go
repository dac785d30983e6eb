package call

// Parameter serialization, following the style tables of OpenAPI 3
// (RFC 6570 expansion for path parameters, form-style query strings).
//
// Escaping is per value, never per serialized string: each array item,
// object key and object value is escaped on its own, and the delimiters the
// style adds stay literal. So a value can never forge a delimiter, a path
// separator, a query or a fragment: "../admin", "a/b", "%2F", "x?y=1" and
// "#frag" each arrive as one literal path segment.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// requestParts is the serialized form of one call's arguments.
type requestParts struct {
	path, rawPath string // after the base path; decoded and escaped
	query         string // raw query, without credentials
	headers       []headerField
	cookie        string
	// pathParams are the serialized (unescaped) path values, keyed by
	// parameter name, as openapi3filter expects them from a router.
	pathParams  map[string]string
	body        []byte // nil: no body
	contentType string
	// asJSON are argument values validated against their schema as JSON
	// because openapi3filter cannot decode their wire form.
	asJSON []jsonCheck
	// urlBytes and headerBytes are what each argument adds to the URL and
	// to the headers (cookie included), for the request bounds.
	urlBytes, headerBytes map[string]int
}

type headerField struct{ k, v string }

func (r *requestParts) addURL(arg string, n int) {
	if r.urlBytes == nil {
		r.urlBytes = map[string]int{}
	}
	r.urlBytes[arg] += n
}

func (r *requestParts) addHeader(arg string, n int) {
	if r.headerBytes == nil {
		r.headerBytes = map[string]int{}
	}
	r.headerBytes[arg] += n
}

// biggest is the argument that adds the most of sizes.
func biggest(sizes map[string]int) string {
	arg, most := "", -1
	for a, n := range sizes {
		if n > most || n == most && a < arg {
			arg, most = a, n
		}
	}
	return arg
}

// jsonCheck is one argument value to validate as JSON.
type jsonCheck struct {
	value  any
	schema *openapi3.SchemaRef
	// explain maps a schema error to the argument it concerns.
	explain func(ptr []string, reason string, required bool) *argError
}

// serialize places every argument of in into its part of the request.
func (p *callPlan) serialize(in map[string]json.RawMessage) (*requestParts, *argError) {
	parts := &requestParts{}
	var pathValues []pathValue
	var query, cookie strings.Builder
	for i := range p.params {
		pp := &p.params[i]
		if pp.dropped {
			continue
		}
		raw, ok := in[pp.arg]
		if !ok || isJSONNull(raw) {
			if pp.required {
				return nil, &argError{arg: pp.arg, msg: "a value is required"}
			}
			continue
		}
		v, err := decodeJSONValue(raw)
		if err != nil {
			return nil, &argError{arg: pp.arg, msg: "is not valid JSON"}
		}
		if !pp.jsonContent {
			if msg := shapeMismatch(pp.schema, v); msg != "" {
				return nil, &argError{arg: pp.arg, msg: msg}
			}
		}
		if !pp.onWire && pp.schema != nil {
			arg := pp.arg
			parts.asJSON = append(parts.asJSON, jsonCheck{value: v, schema: pp.schema, explain: func(ptr []string, reason string, required bool) *argError {
				return schemaArgError(arg, ptr, reason, required)
			}})
		}
		if pp.jsonContent {
			v = compactJSON(raw)
		}
		switch pp.in {
		case openapi3.ParameterInPath:
			if isEmptyValue(v) {
				return nil, &argError{arg: pp.arg, msg: "must not be empty: it is part of the URL path"}
			}
			raw, decoded := pp.pathValue(v)
			if pathValues == nil {
				pathValues = make([]pathValue, len(p.params))
				parts.pathParams = make(map[string]string, len(p.params))
			}
			pathValues[i] = pathValue{raw: raw, decoded: decoded}
			parts.pathParams[pp.name] = decoded
			parts.addURL(pp.arg, len(raw))
		case openapi3.ParameterInQuery:
			before := query.Len()
			appendQueryValue(&query, pp.style, pp.explode, pp.reserved, pp.name, v)
			parts.addURL(pp.arg, query.Len()-before)
		case openapi3.ParameterInHeader:
			hv := headerValue(pp.explode, v)
			if strings.ContainsFunc(hv, isHeaderControl) {
				return nil, &argError{arg: pp.arg, msg: "must not contain control characters such as line breaks: it is sent as an HTTP header"}
			}
			parts.headers = append(parts.headers, headerField{k: pp.headerKey, v: hv})
			parts.addHeader(pp.arg, len(pp.headerKey)+len(hv)+4)
		case openapi3.ParameterInCookie:
			before := cookie.Len()
			appendCookie(&cookie, pp.explode, pp.name, v)
			parts.addHeader(pp.arg, cookie.Len()-before)
		}
	}
	parts.path, parts.rawPath = p.expandPath(pathValues)
	parts.query = query.String()
	parts.cookie = cookie.String()
	if p.body != nil {
		if aerr := p.body.build(in, parts); aerr != nil {
			return nil, aerr
		}
	}
	return parts, nil
}

// shapeMismatch reports an array or object given where the schema wants
// another shape. Styles serialize each shape differently, so a mismatch
// could otherwise slip through validation in a different form.
func shapeMismatch(schema *openapi3.SchemaRef, v any) string {
	if schema == nil || schema.Value == nil || schema.Value.Type == nil || len(*schema.Value.Type) != 1 {
		return ""
	}
	want := (*schema.Value.Type)[0]
	got := ""
	switch v.(type) {
	case []any:
		got = openapi3.TypeArray
	case map[string]any:
		got = openapi3.TypeObject
	}
	switch {
	case want == got:
		return ""
	case want == openapi3.TypeArray || want == openapi3.TypeObject:
		return "must be an " + want
	case got != "":
		return fmt.Sprintf("must be a single %s, not an %s", want, got)
	}
	return ""
}

type pathValue struct{ raw, decoded string }

// expandPath fills the path template. A segment that would be "." or ".."
// after expansion has its dots escaped, so no value can make a server or
// proxy that resolves dot segments climb out of the operation's path.
func (p *callPlan) expandPath(values []pathValue) (path, rawPath string) {
	var dec, raw strings.Builder
	for _, piece := range p.path {
		if piece.param < 0 {
			dec.WriteString(piece.literal)
			raw.WriteString(piece.rawLiteral)
			continue
		}
		v := values[piece.param]
		dec.WriteString(v.decoded)
		raw.WriteString(v.raw)
	}
	rawPath = raw.String()
	if strings.Contains(rawPath, "/.") {
		rawPath = escapeDotSegments(rawPath)
	}
	return dec.String(), rawPath
}

func escapeDotSegments(rawPath string) string {
	segs := strings.Split(rawPath, "/")
	changed := false
	for i, s := range segs {
		if s == "." || s == ".." {
			segs[i] = strings.Repeat("%2E", len(s))
			changed = true
		}
	}
	if !changed {
		return rawPath
	}
	return strings.Join(segs, "/")
}

// pathValue serializes a path parameter value by its style (simple, label,
// matrix), escaped and unescaped.
func (pp *paramPlan) pathValue(v any) (raw, decoded string) {
	return serializePath(pp.style, pp.explode, pp.name, v, escapePathValue),
		serializePath(pp.style, pp.explode, pp.name, v, noEscape)
}

func serializePath(style string, explode bool, name string, v any, esc func(string) string) string {
	var b strings.Builder
	prefix, sep := "", ","
	switch style {
	case openapi3.SerializationLabel:
		prefix = "."
		if explode {
			sep = "."
		}
	case openapi3.SerializationMatrix:
		prefix = ";" + esc(name) + "="
		if explode {
			sep = prefix
		}
	}
	switch x := v.(type) {
	case []any:
		b.WriteString(prefix)
		for i, item := range x {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(esc(scalarText(item)))
		}
	case map[string]any:
		if style == openapi3.SerializationMatrix && explode {
			prefix, sep = ";", ";"
		}
		b.WriteString(prefix)
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(esc(k))
			if explode {
				b.WriteByte('=')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(esc(scalarText(x[k])))
		}
	default:
		if style == openapi3.SerializationMatrix || style == openapi3.SerializationLabel {
			b.WriteString(prefix)
		}
		b.WriteString(esc(scalarText(v)))
	}
	return b.String()
}

// appendQueryValue appends name's value in the given style to a raw query.
// Empty arrays and objects are left out, like absent values.
func appendQueryValue(q *strings.Builder, style string, explode, allowReserved bool, name string, v any) {
	esc := escapeQueryValue
	if allowReserved {
		esc = escapeQueryReserved
	}
	key := escapeQueryValue(name)
	pair := func(k, val string) {
		if q.Len() > 0 {
			q.WriteByte('&')
		}
		q.WriteString(k)
		q.WriteByte('=')
		q.WriteString(val)
	}
	delim := ","
	switch style {
	case openapi3.SerializationSpaceDelimited:
		delim = "%20"
	case openapi3.SerializationPipeDelimited:
		delim = "%7C"
	}
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return
		}
		if explode || style == openapi3.SerializationDeepObject {
			for _, item := range x {
				pair(key, esc(scalarText(item)))
			}
			return
		}
		var b strings.Builder
		for i, item := range x {
			if i > 0 {
				b.WriteString(delim)
			}
			b.WriteString(esc(scalarText(item)))
		}
		pair(key, b.String())
	case map[string]any:
		if len(x) == 0 {
			return
		}
		switch {
		case style == openapi3.SerializationDeepObject:
			appendDeepObject(pair, key, x, esc)
		case style == openapi3.SerializationForm && explode:
			for _, k := range sortedKeys(x) {
				pair(escapeQueryValue(k), esc(scalarText(x[k])))
			}
		default:
			var b strings.Builder
			for i, k := range sortedKeys(x) {
				if i > 0 {
					b.WriteString(delim)
				}
				b.WriteString(esc(k))
				b.WriteString(delim)
				b.WriteString(esc(scalarText(x[k])))
			}
			pair(key, b.String())
		}
	default:
		pair(key, esc(scalarText(v)))
	}
}

// appendDeepObject writes name[key]=value pairs; nested objects add
// brackets, and arrays are indexed (name[key][0]=...), which is what
// openapi3filter and most frameworks (Rails, qs, PHP) read back.
func appendDeepObject(pair func(k, v string), prefix string, v any, esc func(string) string) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			appendDeepObject(pair, prefix+"%5B"+escapeQueryValue(k)+"%5D", x[k], esc)
		}
	case []any:
		for i, item := range x {
			appendDeepObject(pair, prefix+"%5B"+strconv.Itoa(i)+"%5D", item, esc)
		}
	default:
		pair(prefix, esc(scalarText(v)))
	}
}

// headerValue serializes a header parameter (style simple). Header values
// are not percent-encoded.
func headerValue(explode bool, v any) string {
	switch x := v.(type) {
	case []any:
		items := make([]string, len(x))
		for i, item := range x {
			items[i] = scalarText(item)
		}
		return strings.Join(items, ",")
	case map[string]any:
		var b strings.Builder
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(k)
			if explode {
				b.WriteByte('=')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(scalarText(x[k]))
		}
		return b.String()
	}
	return scalarText(v)
}

// appendCookie adds a cookie parameter (style form) to a Cookie header.
// Without explode, arrays and objects are comma lists in one cookie; with
// explode, each item (or each property, named by its key) is its own cookie.
func appendCookie(c *strings.Builder, explode bool, name string, v any) {
	add := func(k, val string) {
		if c.Len() > 0 {
			c.WriteString("; ")
		}
		c.WriteString(escapeCookie(k))
		c.WriteByte('=')
		c.WriteString(val)
	}
	switch x := v.(type) {
	case []any:
		if explode {
			for _, item := range x {
				add(name, escapeCookie(scalarText(item)))
			}
			return
		}
		items := make([]string, len(x))
		for i, item := range x {
			items[i] = escapeCookie(scalarText(item))
		}
		add(name, strings.Join(items, ","))
	case map[string]any:
		keys := sortedKeys(x)
		if explode {
			for _, k := range keys {
				add(k, escapeCookie(scalarText(x[k])))
			}
			return
		}
		items := make([]string, 0, 2*len(keys))
		for _, k := range keys {
			items = append(items, escapeCookie(k), escapeCookie(scalarText(x[k])))
		}
		add(name, strings.Join(items, ","))
	default:
		add(name, escapeCookie(scalarText(v)))
	}
}

// scalarText is the text of a primitive value; a nested array or object
// (which no style defines) is sent as compact JSON.
func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	case jsonText:
		return string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// jsonText is an argument sent as its JSON text (content parameters).
type jsonText []byte

func compactJSON(raw json.RawMessage) jsonText {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return jsonText(raw)
	}
	return jsonText(b.Bytes())
}

func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	case nil:
		return true
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// decodeJSONValue decodes one argument, keeping numbers exact.
func decodeJSONValue(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, io.ErrUnexpectedEOF
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	case '{', '[':
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		return v, err
	}
	return json.Number(raw), nil
}

func isJSONNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// Escaping. Each function returns s itself when nothing needs escaping.

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// escapePathValue escapes everything but RFC 3986 unreserved characters:
// "/", "?", "#", "%", ";", ",", "=" in a value are always encoded.
func escapePathValue(s string) string { return escapeExcept(s, isUnreserved) }

// escapeQueryValue does the same for query keys and values (a space is %20).
func escapeQueryValue(s string) string { return escapeExcept(s, isUnreserved) }

// escapeQueryReserved implements allowReserved: RFC 3986 reserved
// characters stay literal, except those that would change how the query
// splits into pairs ("&", "=", "+", "#", and ";", which some servers split
// on and Go's rejects) and "%" itself.
func escapeQueryReserved(s string) string {
	return escapeExcept(s, func(c byte) bool {
		return isUnreserved(c) || strings.IndexByte(":/?[]@!$'()*,", c) >= 0
	})
}

// escapeCookie percent-encodes bytes that a cookie value cannot hold
// (RFC 6265 cookie-octet) along with "%" and the comma used as a delimiter.
func escapeCookie(s string) string {
	return escapeExcept(s, func(c byte) bool {
		return c > 0x20 && c < 0x7f && c != '"' && c != ',' && c != ';' && c != '\\' && c != '%'
	})
}

// escapeLiteralPath escapes a literal part of a path template, keeping "/".
func escapeLiteralPath(s string) string {
	return escapeExcept(s, func(c byte) bool {
		return isUnreserved(c) || strings.IndexByte("/:@!$&'()*+,;=", c) >= 0
	})
}

func noEscape(s string) string { return s }

const upperHex = "0123456789ABCDEF"

func escapeExcept(s string, keep func(byte) bool) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !keep(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if keep(c) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', upperHex[c>>4], upperHex[c&15])
	}
	return string(b)
}

// isHeaderControl reports characters a header value cannot carry.
func isHeaderControl(r rune) bool {
	return (r < 0x20 && r != '\t') || r == 0x7f
}

// setBody attaches a buffered body so it can be re-read for validation and
// for redirects.
func setBody(req *http.Request, body []byte) {
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(body)), nil
	}
	req.Body, _ = req.GetBody()
}
