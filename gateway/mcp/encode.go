package mcp

// Hand-written encoding of the hot path's one big message, the tools/call
// response. encoding/json spends most of a large call's CPU re-validating
// and compacting structuredContent (which the call path already validated)
// and reflecting over the result; appending the bytes directly is several
// times cheaper. Everything else goes through encoding/json.

import (
	"bytes"
	"encoding/json"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

// Response is an outgoing JSON-RPC response.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Notification is an outgoing JSON-RPC notification.
type Notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// AppendResponse appends a JSON-RPC response. The output never holds a raw
// newline, so it can go into an SSE data line as is.
func AppendResponse(b []byte, id json.RawMessage, result any, rerr *Error) ([]byte, error) {
	if rerr == nil {
		switch res := result.(type) {
		case *PooledResult:
			res.mu.Lock()
			defer res.mu.Unlock()
			return appendCallResponse(b, id, &res.res)
		case *CallToolResult:
			return appendCallResponse(b, id, res)
		}
	}
	if result == nil && rerr == nil {
		result = struct{}{}
	}
	return AppendMarshal(b, Response{JSONRPC: "2.0", ID: id, Result: result, Error: rerr})
}

// Marshal is json.Marshal without HTML escaping: MCP is not HTML, and a
// body of "<" characters must not grow sixfold on the wire ("\u003c").
// Every message the gateway writes is encoded this way.
func Marshal(v any) ([]byte, error) { return AppendMarshal(nil, v) }

// AppendMarshal appends v encoded as Marshal does.
func AppendMarshal(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	out := buf.Bytes()
	return out[:len(out)-1], nil // Encode ends with a newline
}

func appendCallResponse(b []byte, id json.RawMessage, r *CallToolResult) ([]byte, error) {
	start := len(b)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendCompact(b, id)
	b = append(b, `,"result":{"content":[`...)
	for i := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendContent(b, &r.Content[i])
	}
	b = append(b, ']')
	if sc := r.StructuredContent; len(sc) > 0 {
		b = append(b, `,"structuredContent":`...)
		b = appendCompact(b, sc)
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if m := &r.ResultMeta; !m.empty() {
		meta, err := Marshal(m) // small: the stateless era's resultType and _meta
		if err != nil {
			return b[:start], err
		}
		if len(meta) > 2 {
			b = append(b, ',')
			b = append(b, meta[1:len(meta)-1]...)
		}
	}
	return append(b, `}}`...), nil
}

func appendContent(b []byte, c *Content) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, c.Type)
	if c.Text != "" {
		b = append(b, `,"text":`...)
		b = appendString(b, c.Text)
	}
	if c.Data != "" {
		b = append(b, `,"data":`...)
		b = appendString(b, c.Data)
	}
	if c.MimeType != "" {
		b = append(b, `,"mimeType":`...)
		b = appendString(b, c.MimeType)
	}
	if rc := c.Resource; rc != nil {
		b = append(b, `,"resource":{"uri":`...)
		b = appendString(b, rc.URI)
		if rc.MimeType != "" {
			b = append(b, `,"mimeType":`...)
			b = appendString(b, rc.MimeType)
		}
		if rc.Text != "" {
			b = append(b, `,"text":`...)
			b = appendString(b, rc.Text)
		}
		if rc.Blob != "" {
			b = append(b, `,"blob":`...)
			b = appendString(b, rc.Blob)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendCompact appends valid JSON, dropping insignificant whitespace only
// when there is a line break to drop (raw line breaks cannot appear inside
// JSON strings, and SSE data lines must not contain them).
func appendCompact(b []byte, raw []byte) []byte {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(b, raw...)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		// Not valid JSON after all: encode it as a string rather than corrupt the stream.
		return appendString(b, string(raw))
	}
	return append(b, out.Bytes()...)
}

// appendString appends s as a JSON string, HTML characters as they are.
func appendString(b []byte, s string) []byte { return jsonlex.AppendString(b, s, false) }
