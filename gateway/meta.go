package gateway

import (
	"bytes"
	"encoding/json"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

// requestMeta is the part of params the transport reads: _meta and, for
// handlers (mcp.Meta), the target and the arguments.
type requestMeta struct {
	// fields are the members of params._meta the gateway reads; nil when
	// there is no _meta.
	fields *metaFields
	mcp.Meta
}

// metaFields are the members of params._meta the gateway reads.
type metaFields struct {
	ProtocolVersion    *string
	ClientCapabilities json.RawMessage
	ClientInfo         json.RawMessage
	LogLevel           *string
	ProgressToken      json.RawMessage
}

// readMeta reads what the transport needs from params (already valid JSON:
// decodeMessage checked the whole message). Params that are not an object
// yield an empty meta; the handler reports them. Member names match exactly.
func readMeta(params json.RawMessage) requestMeta {
	var m requestMeta
	p := bytes.TrimSpace(params)
	if len(p) == 0 || p[0] != '{' {
		m.OK = len(p) == 0
		return m
	}
	// As encoding/json would, a member of the wrong type is skipped (ok
	// becomes false) and the others are still read.
	m.OK = true
	err := jsonlex.ScanObject(p, func(key, value []byte) error {
		switch string(key) {
		case "_meta":
			switch value[0] {
			case 'n':
				m.fields = nil
			case '{':
				m.fields = readMetaFields(value, &m.OK)
			default:
				m.OK = false
			}
		case "name":
			optionalString(&m.Name, value, &m.OK)
		case "uri":
			optionalString(&m.URI, value, &m.OK)
		case "arguments":
			m.Arguments = value
		}
		return nil
	})
	m.OK = m.OK && err == nil
	return m
}

func readMetaFields(raw []byte, ok *bool) *metaFields {
	f := &metaFields{}
	_ = jsonlex.ScanObject(raw, func(key, value []byte) error {
		switch string(key) {
		case "io.modelcontextprotocol/protocolVersion":
			optionalString(&f.ProtocolVersion, value, ok)
		case "io.modelcontextprotocol/clientCapabilities":
			f.ClientCapabilities = value
		case "io.modelcontextprotocol/clientInfo":
			f.ClientInfo = value
		case "io.modelcontextprotocol/logLevel":
			optionalString(&f.LogLevel, value, ok)
		case "progressToken":
			f.ProgressToken = value
		}
		return nil
	})
	return f
}

// optionalString reads a JSON string member that may be null into dst; a
// value of another type leaves dst as it was and clears ok.
func optionalString(dst **string, raw []byte, ok *bool) {
	if raw[0] == 'n' {
		*dst = nil
		return
	}
	s, isString := jsonlex.String(raw)
	if !isString {
		*ok = false
		return
	}
	*dst = &s
}
