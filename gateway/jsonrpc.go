package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
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

// decodeMessage parses one JSON-RPC message and checks its envelope. Member
// names match exactly; id, params, result and error stay raw and point into
// raw, which the caller must not reuse while the message lives.
// maxIDBytes bounds a request id as written.
const maxIDBytes = 256

func decodeMessage(raw []byte) (*message, *mcp.Error) {
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
		return nil, reject(http.StatusBadRequest, mcp.CodeParseError, "Parse error: body is not valid JSON")
	}
	if err != nil || wrongType {
		return nil, reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message")
	}
	if !jsonrpcOK {
		return &m, reject(http.StatusBadRequest, mcp.CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	if m.ID != nil && !mcp.ValidID(m.ID) {
		m.ID = nil
		return &m, reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Invalid Request: id must be a string or a number")
	}
	// Every answer repeats the id: it must be short and valid UTF-8 (an
	// invalid one is refused, everywhere the same, rather than repaired).
	if m.ID != nil && (len(m.ID) > maxIDBytes || !utf8.Valid(m.ID)) {
		m.ID = nil
		return &m, reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Invalid Request: id must be valid UTF-8 of at most %d bytes", maxIDBytes)
	}
	switch {
	case m.Method != "" && (m.Result != nil || m.Error != nil):
		return &m, reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Invalid Request: a message cannot have both method and result/error")
	case m.Method == "" && m.ID == nil:
		return &m, reject(http.StatusBadRequest, mcp.CodeInvalidRequest, `Invalid Request: missing "method"`)
	case m.Method == "" && m.Result == nil && m.Error == nil:
		return &m, reject(http.StatusBadRequest, mcp.CodeInvalidRequest, `Invalid Request: missing "method"`)
	}
	if p := bytes.TrimSpace(m.Params); len(p) > 0 {
		switch {
		case bytes.Equal(p, []byte("null")):
			m.Params = nil
		case p[0] != '{' && p[0] != '[':
			return &m, reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Invalid Request: params must be an object or an array")
		}
	}
	return &m, nil
}

// knownMethods maps each MCP method name to itself, so that decoding a
// known name does not allocate. It is an intern table of the protocol's
// names, not the dispatch table (that is the Server's).
var knownMethods = func() map[string]string {
	m := map[string]string{}
	for _, name := range []string{
		"initialize", "ping", "logging/setLevel", "server/discover", "subscriptions/listen",
		"tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read",
		"resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get", "completion/complete",
		"notifications/initialized", "notifications/cancelled", "notifications/progress",
		"notifications/roots/list_changed",
	} {
		m[name] = name
	}
	return m
}()

// methodName returns the value of the JSON string raw.
func methodName(raw []byte) string {
	if name, ok := knownMethods[string(raw[1:len(raw)-1])]; ok {
		return name
	}
	s, _ := jsonlex.String(raw)
	return s
}

// isArray reports whether a body is a JSON array (a 2025-03-26 batch).
func isArray(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '['
}
