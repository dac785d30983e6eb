package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

// JSON-RPC and MCP error codes. PROTOCOL.md §5 has the table per revision.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603

	// Session era, implementation-defined range: the session is unknown.
	codeSessionNotFound = -32001
	// Session era: the session store cannot be reached.
	codeUnavailable = -32003

	// Stateless era (2026-07-28).
	codeHeaderMismatch         = -32020
	codeMissingCapability      = -32021
	codeUnsupportedProtocolVer = -32022
)

// message is any JSON-RPC 2.0 message as it arrives on the wire.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func (m *message) isRequest() bool      { return m.Method != "" && m.ID != nil }
func (m *message) isNotification() bool { return m.Method != "" && m.ID == nil }
func (m *message) isResponse() bool     { return m.Method == "" && m.ID != nil }

// rpcError is a JSON-RPC error object. Handlers return it (directly or
// wrapped) to choose the code the client sees; any other error becomes an
// internal error whose text stays in the log.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
	// status is the HTTP status to use when the error is the whole response;
	// zero means 200 (or 400 for parse and invalid-request errors).
	status int
}

func (e *rpcError) Error() string { return fmt.Sprintf("jsonrpc %d: %s", e.Code, e.Message) }

func newError(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *rpcError) withStatus(status int) *rpcError { e.status = status; return e }
func (e *rpcError) withData(data any) *rpcError     { e.Data = data; return e }

// errInvalidParams wraps a params decode failure so the message names the
// problem without echoing internals.
func errInvalidParams(format string, args ...any) *rpcError {
	return newError(codeInvalidParams, format, args...)
}

// response is an outgoing JSON-RPC response.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// notification is an outgoing JSON-RPC notification.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// asRPCError maps any handler error to the error the client sees. Internal
// failures never reveal their text; the caller logs err.
func asRPCError(err error) (e *rpcError, internal bool) {
	if errors.As(err, &e) {
		return e, false
	}
	return &rpcError{Code: codeInternalError, Message: "Internal error"}, true
}

// decodeMessage parses one JSON-RPC message and checks its envelope. Member
// names match exactly; id, params, result and error stay raw and point into
// raw, which the caller must not reuse while the message lives.
func decodeMessage(raw []byte) (*message, *rpcError) {
	var m message
	// As encoding/json would: a member of the wrong type makes the message
	// invalid but the scan goes on, so that a syntax error anywhere still
	// wins; null leaves a string member as it was.
	jsonrpcOK, wrongType := false, false
	err := jsonlex.ScanObject(raw, func(key, value []byte) error {
		switch string(key) {
		case "jsonrpc":
			switch value[0] {
			case 'n':
			case '"':
				jsonrpcOK = jsonlex.StringEquals(value, "2.0")
			default:
				wrongType = true
			}
		case "id":
			m.ID = value
		case "method":
			switch value[0] {
			case 'n':
			case '"':
				m.Method = methodName(value)
			default:
				wrongType = true
			}
		case "params":
			m.Params = value
		case "result":
			m.Result = value
		case "error":
			m.Error = value
		}
		return nil
	})
	var syn *jsonlex.SyntaxError
	if errors.As(err, &syn) {
		return nil, newError(codeParseError, "Parse error: body is not valid JSON")
	}
	if err != nil || wrongType {
		return nil, newError(codeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message")
	}
	if !jsonrpcOK {
		return &m, newError(codeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	if m.ID != nil && !validID(m.ID) {
		m.ID = nil
		return &m, newError(codeInvalidRequest, "Invalid Request: id must be a string or a number")
	}
	switch {
	case m.Method != "" && (m.Result != nil || m.Error != nil):
		return &m, newError(codeInvalidRequest, "Invalid Request: a message cannot have both method and result/error")
	case m.Method == "" && m.ID == nil:
		return &m, newError(codeInvalidRequest, `Invalid Request: missing "method"`)
	case m.Method == "" && m.Result == nil && m.Error == nil:
		return &m, newError(codeInvalidRequest, `Invalid Request: missing "method"`)
	}
	if p := bytes.TrimSpace(m.Params); len(p) > 0 {
		switch {
		case bytes.Equal(p, []byte("null")):
			m.Params = nil
		case p[0] != '{' && p[0] != '[':
			return &m, newError(codeInvalidRequest, "Invalid Request: params must be an object or an array")
		}
	}
	return &m, nil
}

// knownMethods maps each method name the gateway reads to itself, so that
// decoding a known name does not allocate. dispatch.go's init fills it.
var knownMethods = map[string]string{}

// methodName returns the value of the JSON string raw.
func methodName(raw []byte) string {
	if name, ok := knownMethods[string(raw[1:len(raw)-1])]; ok {
		return name
	}
	s, _ := jsonlex.String(raw)
	return s
}

// validID accepts the id forms JSON-RPC allows MCP to use: a string or a number.
func validID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	// The message already parsed, so id is valid JSON: only its kind matters.
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// isArray reports whether a body is a JSON array (a 2025-03-26 batch).
func isArray(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '['
}
