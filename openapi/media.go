package openapi

import (
	"mime"
	"strings"
)

// MediaClass says how the gateway carries a request body of some media type
// in a tool's arguments.
type MediaClass int

const (
	// MediaUnsupported: a media type the gateway does not know
	// (multipart/mixed, application/vnd.acme.thing, ...); it sends such a
	// body as JSON, text or bytes as the schema suggests.
	MediaUnsupported MediaClass = iota
	// MediaJSON: application/json, any +json type, and the wildcards */* and
	// application/*, for which the gateway sends application/json. The
	// argument is the JSON value.
	MediaJSON
	// MediaForm: application/x-www-form-urlencoded, from an object argument.
	MediaForm
	// MediaMultipart: multipart/form-data, from an object argument; binary
	// parts arrive base64-encoded.
	MediaMultipart
	// MediaText: text/*, XML and YAML types and a few other textual ones
	// (application/xml, application/x-ndjson, ...); the argument is the
	// body text.
	MediaText
	// MediaBinary: application/octet-stream and other binary types (image/*,
	// audio/*, video/*, font/*, application/pdf, archives); the argument is a
	// base64 string, sent decoded.
	MediaBinary
)

func (c MediaClass) String() string {
	switch c {
	case MediaJSON:
		return "json"
	case MediaForm:
		return "form"
	case MediaMultipart:
		return "multipart"
	case MediaText:
		return "text"
	case MediaBinary:
		return "binary"
	}
	return "unsupported"
}

// IsJSONMediaType reports a JSON media type; mt is a parsed, lower-case
// type/subtype without parameters.
func IsJSONMediaType(mt string) bool {
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}

// IsTextMediaType reports a media type whose content is text a model can
// read (JSON aside); mt is a parsed, lower-case type/subtype.
func IsTextMediaType(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+xml"), strings.HasSuffix(mt, "+yaml"):
		return true
	}
	switch mt {
	case "application/xml", "application/yaml", "application/x-yaml", "application/javascript",
		"application/ecmascript", "application/x-www-form-urlencoded", "application/graphql",
		"application/sql", "application/x-ndjson", "application/csv", "application/x-sh":
		return true
	}
	return false
}

// ClassifyMediaType classifies a media type as written in a content map or a
// Content-Type header (parameters such as charset are ignored, case is not
// significant).
func ClassifyMediaType(mediaType string) MediaClass {
	mt := strings.ToLower(strings.TrimSpace(mediaType))
	if parsed, _, err := mime.ParseMediaType(mt); err == nil {
		mt = parsed
	} else if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || typ == "" || sub == "" {
		return MediaUnsupported
	}
	switch {
	case IsJSONMediaType(mt) || mt == "*/*" || mt == "application/*":
		return MediaJSON
	case mt == "application/x-www-form-urlencoded":
		return MediaForm
	case mt == "multipart/form-data":
		return MediaMultipart
	case IsTextMediaType(mt):
		return MediaText
	case typ == "image" || typ == "audio" || typ == "video" || typ == "font":
		return MediaBinary
	}
	switch mt {
	case "application/octet-stream", "application/pdf", "application/zip", "application/gzip",
		"application/x-gzip", "application/x-tar", "application/x-7z-compressed":
		return MediaBinary
	}
	return MediaUnsupported
}
