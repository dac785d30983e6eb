package toolgen

// Result is an MCP CallToolResult.
//
// A JSON result's StructuredContent and its text content share one buffer,
// the backend's body: treat both as read-only.
type Result struct {
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitempty"`
	IsError           bool      `json:"isError,omitempty"`
	// body is the pooled buffer the result is made of, if any.
	body []byte
}

// Release lets the Result's buffer be reused for a later call's body and
// empties the Result. Call it when nothing holds the Result or anything
// taken from it (texts, StructuredContent) any more, e.g. once the response
// carrying it is written. A Result never released is simply collected.
func (r *Result) Release() {
	if r == nil {
		return
	}
	body := r.body
	*r = Result{}
	if body != nil {
		putBodyBuffer(body)
	}
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
func TextResult(text string) *Result {
	return &Result{Content: []Content{{Type: "text", Text: text}}}
}

// ErrorResult is a tool-level failure the model can read and act on.
func ErrorResult(text string) *Result {
	return &Result{Content: []Content{{Type: "text", Text: text}}, IsError: true}
}
