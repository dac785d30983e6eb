package mcp

import (
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// CallToolResult is an MCP CallToolResult. Nothing in it is shared with
// anything else: it may be kept as long as wanted.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	ResultMeta
}

// Content is one MCP content block: text, image, audio or an embedded resource.
type Content struct {
	Type     string            `json:"type"` // "text", "image", "audio", "resource"
	Text     string            `json:"text,omitempty"`
	Data     string            `json:"data,omitempty"` // base64, image/audio
	MimeType string            `json:"mimeType,omitempty"`
	Resource *ResourceContents `json:"resource,omitempty"`
}

// ResourceContents is the body of an embedded resource content block.
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"` // base64
}

// TextResult is a successful result with one text block.
func TextResult(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{{Type: "text", Text: text}}}
}

// ErrorResult is a tool-level failure the model can read and act on.
func ErrorResult(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{{Type: "text", Text: text}}, IsError: true}
}

// FirstText is the text of the first text block, or "".
func (r *CallToolResult) FirstText() string {
	for _, c := range r.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

// clone returns a copy that shares no memory with r.
func (r *CallToolResult) clone() *CallToolResult {
	cp := *r
	cp.Content = make([]Content, len(r.Content))
	for i, c := range r.Content {
		c.Text = strings.Clone(c.Text)
		c.Data = strings.Clone(c.Data)
		if c.Resource != nil {
			rc := *c.Resource
			rc.Text = strings.Clone(rc.Text)
			rc.Blob = strings.Clone(rc.Blob)
			c.Resource = &rc
		}
		cp.Content[i] = c
	}
	if r.StructuredContent != nil {
		cp.StructuredContent = json.RawMessage(strings.Clone(string(r.StructuredContent)))
	}
	return &cp
}

// PooledResult is a tools/call result as the REST call path makes it: its
// text and structuredContent may be views of a pooled buffer (the
// backend's body, not copied on the hot path), which is reused for a later
// call once the result is released.
//
// The views are unexported, so by construction only this package reads
// them: the response encoder (AppendResponse), and Copy, which hands out a
// result that shares nothing. The transport releases the result once its
// response is written; a result never released is simply collected, and
// one read after release is empty, never another call's bytes.
type PooledResult struct {
	mu      sync.Mutex
	res     CallToolResult
	buf     []byte
	release func([]byte)
	isError bool
	// denied names the check that refused the call (rate_limited,
	// concurrency, quota_exceeded, quota_unavailable, policy, busy,
	// declined: the audit reasons); empty when the call ran.
	denied string
	// status is the backend's HTTP status; zero when no backend answered.
	status int
	// backendTime is how long the backend exchange took; zero when
	// nothing was sent.
	backendTime time.Duration
}

// Denied names the check that refused the call without running it
// (an audit reason: rate_limited, quota_exceeded, quota_unavailable,
// policy, busy…), or is empty.
func (p *PooledResult) Denied() string { return p.denied }

// SetDenied marks the result as a refusal by the named check.
func (p *PooledResult) SetDenied(kind string) *PooledResult { p.denied = kind; return p }

// BackendStatus is the HTTP status the backend answered the call with;
// zero when no backend answered (a refusal, invalid arguments, a
// transport failure).
func (p *PooledResult) BackendStatus() int { return p.status }

// SetBackendStatus records the backend's HTTP status.
func (p *PooledResult) SetBackendStatus(status int) { p.status = status }

// BackendTime is how long the backend took, from sending the request to
// reading its answer (or giving up on it); zero when nothing was sent.
func (p *PooledResult) BackendTime() time.Duration { return p.backendTime }

// SetBackendTime records how long the backend took.
func (p *PooledResult) SetBackendTime(d time.Duration) { p.backendTime = d }

// NewPooledResult wraps res, whose strings may point into buf; release
// (when not nil) is given buf back once nothing refers to it.
func NewPooledResult(res CallToolResult, buf []byte, release func([]byte)) *PooledResult {
	return &PooledResult{res: res, buf: buf, release: release, isError: res.IsError}
}

// Pooled wraps a result that shares no buffer.
func Pooled(res *CallToolResult) *PooledResult {
	return &PooledResult{res: *res, isError: res.IsError}
}

// IsError reports whether the result is a tool error. It stays true after
// release.
func (p *PooledResult) IsError() bool { return p.isError }

// SetMeta sets the stateless era's result fields.
func (p *PooledResult) SetMeta(m ResultMeta) {
	p.mu.Lock()
	p.res.ResultMeta = m
	p.mu.Unlock()
}

// Copy returns the result as a CallToolResult that shares no memory with
// the pool: what anything but the response writer keeps (an audit record,
// a batch, a log line). After Release it returns an empty result.
func (p *PooledResult) Copy() *CallToolResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.buf == nil {
		// No view: the result's strings are its own; copy only the slices.
		cp := p.res
		cp.Content = append([]Content(nil), p.res.Content...)
		if cp.Content == nil {
			cp.Content = []Content{}
		}
		return &cp
	}
	return p.res.clone()
}

// Release gives the result's buffer back for reuse and empties p. Only the
// result's owner calls it: the response writer once the response carrying
// p is written (or the call path's own Call, after its Copy). Anyone else
// keeps a Copy and leaves p alone.
func (p *PooledResult) Release() {
	if p == nil {
		return
	}
	p.mu.Lock()
	buf, release := p.buf, p.release
	p.res, p.buf, p.release = CallToolResult{Content: []Content{}}, nil, nil
	p.mu.Unlock()
	if buf != nil && release != nil {
		release(buf)
	}
}

// MarshalJSON encodes the result as its CallToolResult (for encoding/json
// callers; the transport uses AppendResponse).
func (p *PooledResult) MarshalJSON() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Marshal(&p.res)
}
