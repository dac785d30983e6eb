package gateway

// Hand-written encoding of the hot path's one big message, the tools/call
// response. encoding/json spends most of a large call's CPU re-validating
// and compacting structuredContent (which toolgen already validated) and
// reflecting over the result; appending the bytes directly is several times
// cheaper. Everything else goes through encoding/json.

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > 1<<20 { // let rare huge buffers go
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// appendResponse appends a JSON-RPC response. The output never holds a raw
// newline, so it can go into an SSE data line as is.
func appendResponse(b []byte, id json.RawMessage, result any, rerr *rpcError) ([]byte, error) {
	if rerr == nil {
		if res, ok := result.(*callToolResult); ok {
			if out, ok := appendCallResponse(b, id, res); ok {
				return out, nil
			}
		}
	}
	if result == nil && rerr == nil {
		result = struct{}{}
	}
	data, err := json.Marshal(response{JSONRPC: "2.0", ID: id, Result: result, Error: rerr})
	if err != nil {
		return b, err
	}
	return append(b, data...), nil
}

// appendCallResponse reports false when the result holds something it does
// not encode itself; the caller then falls back to encoding/json.
func appendCallResponse(b []byte, id json.RawMessage, r *callToolResult) ([]byte, bool) {
	if r.Result == nil {
		return b, false
	}
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
	switch sc := r.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		if len(sc) > 0 {
			b = append(b, `,"structuredContent":`...)
			b = appendCompact(b, sc)
		}
	default:
		return b[:start], false
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if m := r.resultMeta; m.ResultType != "" || m.Meta != nil || m.TTLMs != nil || m.CacheScope != "" {
		meta, err := json.Marshal(r.resultMeta) // small: the stateless era's resultType and _meta
		if err != nil || len(meta) < 2 {
			return b[:start], false
		}
		if len(meta) > 2 {
			b = append(b, ',')
			b = append(b, meta[1:len(meta)-1]...)
		}
	}
	b = append(b, `}}`...)
	return b, true
}

func appendContent(b []byte, c *toolgen.Content) []byte {
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

// appendString appends s as encoding/json would (HTML characters escaped).
func appendString(b []byte, s string) []byte { return jsonlex.AppendString(b, s, true) }
