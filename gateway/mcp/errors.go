package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"
)

// JSON-RPC and MCP error codes. PROTOCOL.md §5 has the table per revision.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	// Session era, implementation-defined range: the session is unknown.
	CodeSessionNotFound = -32001
	// Session era: a resource does not exist (2026-07-28 uses -32602).
	CodeResourceNotFound = -32002
	// Both eras: a store the request needs cannot be reached.
	CodeUnavailable = -32003

	// Stateless era (2026-07-28).
	CodeHeaderMismatch         = -32020
	CodeMissingCapability      = -32021
	CodeUnsupportedProtocolVer = -32022
)

// Error is a JSON-RPC error object. Handlers return it (directly or
// wrapped) to choose the code the client sees; any other error becomes an
// internal error whose text stays in the log (the transport's translator).
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
	// Status is the HTTP status to use when the error is the whole
	// response; zero means 200 (the transport picks 400 for its own
	// rejections).
	Status int `json:"-"`
	// Header are HTTP response headers to send with the error when it is
	// the whole response (WWW-Authenticate on a 401 or 403, Retry-After
	// on a 429); nil means none.
	Header map[string]string `json:"-"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc %d: %s", e.Code, e.Message) }

// NewError returns an error with code and a message made from format.
//
// Every string argument is cut to MaxQuoted bytes with an ellipsis
// (Truncate): error texts quote what the client sent (a header, a method
// or tool name, a version), and a 500 KB header must not come back whole.
// An argument of type Verbatim (the operator's own values) is left whole.
func NewError(code int, format string, args ...any) *Error {
	for i, a := range args {
		if s, ok := a.(string); ok && len(s) > MaxQuoted {
			args[i] = Truncate(s)
		}
	}
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Verbatim marks an argument of NewError that is the operator's, not the
// client's (a configured path): it is not truncated.
type Verbatim string

func (v Verbatim) String() string { return string(v) }

// MaxQuoted bounds a client-supplied value quoted back in an error.
const MaxQuoted = 64

// Truncate cuts s to MaxQuoted bytes (on a rune boundary) with an ellipsis.
func Truncate(s string) string { return TruncateTo(s, MaxQuoted, "…") }

// TruncateTo cuts s to at most n bytes on a rune boundary and appends
// mark when it cut anything.
func TruncateTo(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}

// WithStatus sets the HTTP status the error answers with when it is the
// whole response.
func (e *Error) WithStatus(status int) *Error { e.Status = status; return e }

// WithHeader adds an HTTP response header sent when the error is the
// whole response.
func (e *Error) WithHeader(name, value string) *Error {
	if e.Header == nil {
		e.Header = make(map[string]string, 1)
	}
	e.Header[name] = value
	return e
}

// WithData sets the error's data member.
func (e *Error) WithData(data any) *Error { e.Data = data; return e }

// InvalidParams is a -32602 error: the message names the problem without
// echoing internals.
func InvalidParams(format string, args ...any) *Error {
	return NewError(CodeInvalidParams, format, args...)
}

// ErrCancelled tells the dispatcher that a request was cancelled and must
// not be answered.
var ErrCancelled = errors.New("request cancelled")

// InternalError is what every error that is not an *Error looks like to the
// client.
func InternalError() *Error { return &Error{Code: CodeInternalError, Message: "Internal error"} }

// DecodeParams decodes r's params into v; a failure is -32602 naming the
// method and, when it can, the member.
func DecodeParams(r *Request, v any) error {
	if len(r.Params) == 0 {
		return nil
	}
	if err := json.Unmarshal(r.Params, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return InvalidParams("Invalid params for %s: %q must be %s", r.Method, te.Field, jsonTypeName(te.Type))
		}
		return InvalidParams("Invalid params for %s: params must be an object", r.Method)
	}
	return nil
}

func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Float64, reflect.Uint64:
		return "a number"
	}
	return "of another type"
}
