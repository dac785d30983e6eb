package mcp

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Cursors are opaque to clients: a tag naming the list's generation and an
// offset. A cursor from another generation (the document was reloaded) is
// rejected rather than silently skipping or repeating items.

// EncodeCursor returns the cursor of offset in the list tagged tag.
func EncodeCursor(tag string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(tag + ":" + strconv.Itoa(offset)))
}

// DecodeCursor returns the offset a cursor names in a list of n items
// tagged tag, or the -32602 error to answer with.
func DecodeCursor(cursor, tag string, n int) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, ErrBadCursor()
	}
	t, off, ok := strings.Cut(string(raw), ":")
	if !ok || t != tag {
		return 0, ErrBadCursor()
	}
	i, err := strconv.Atoi(off)
	if err != nil || i < 0 || i > n {
		return 0, ErrBadCursor()
	}
	return i, nil
}

// ErrBadCursor is the answer to a cursor this list never issued.
func ErrBadCursor() *Error {
	return InvalidParams("Invalid params: unknown or expired cursor; list again from the start")
}
