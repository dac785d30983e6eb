package jsonlex

// Reading the members of a JSON object without decoding it. Every tools/call
// passes through three small objects (the JSON-RPC envelope, its params and
// the arguments) of which the gateway reads a few members and forwards the
// rest as raw bytes; encoding/json spends about thirty allocations a call on
// that. ScanObject validates the same grammar and hands out sub-slices.
//
// It differs from encoding/json in one respect on purpose: keys match
// exactly, as JSON-RPC and MCP name them, not case-insensitively. Duplicate
// keys are all passed to the callback in order, so "last wins" is the
// caller's to keep. Like encoding/json it does not check strings for valid
// UTF-8.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// maxScanDepth is encoding/json's nesting limit.
const maxScanDepth = 10000

// SyntaxError reports where a document stops being JSON.
type SyntaxError struct {
	Offset int
	msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.msg)
}

// ErrNotObject is returned by ScanObject for valid JSON that is not an object.
var ErrNotObject = errors.New("not a JSON object")

// ScanObject checks that data is one JSON value and, when it is an object,
// calls fn with each member's key and raw value (no surrounding space), in
// document order, as it validates them. The slices point into data (a key is
// copied only when it has escapes) and are valid as long as data is. An error
// from fn stops the scan and is returned as is. A valid non-object returns
// ErrNotObject. On a syntax error fn may already have seen the members before
// it: callers discard what they collected.
func ScanObject(data []byte, fn func(key, value []byte) error) error {
	start, err := scanDocument(data, fn)
	if err == nil && data[start] != '{' {
		return ErrNotObject
	}
	return err
}

// scanDocument checks that data is one JSON value, calling fn (when not nil)
// with the members of a top-level object; start is where the value begins.
func scanDocument(data []byte, fn func(key, value []byte) error) (start int, err error) {
	start = skipSpace(data, 0)
	var end int
	if start < len(data) && data[start] == '{' {
		end, err = scanMembers(data, start, 1, fn)
	} else {
		end, err = scanValue(data, start, 0)
	}
	if err != nil {
		return start, err
	}
	if rest := skipSpace(data, end); rest != len(data) {
		return start, &SyntaxError{Offset: rest, msg: "data after the top-level value"}
	}
	return start, nil
}

// String returns the value of a raw JSON string (as ScanObject gives it):
// ok is false when raw is not a string. Strings without escapes in valid
// UTF-8 are converted directly; the others are decoded by encoding/json,
// which turns invalid UTF-8 into U+FFFD.
func String(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if !hasEscape(body) && utf8.Valid(body) {
		return string(body), true
	}
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// StringEquals reports whether raw is a JSON string whose value is s,
// without allocating when raw has no escapes.
func StringEquals(raw []byte, s string) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	body := raw[1 : len(raw)-1]
	if !hasEscape(body) && utf8.Valid(body) {
		return string(body) == s
	}
	v, ok := String(raw)
	return ok && v == s
}

func hasEscape(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

func unescapeKey(raw []byte) []byte {
	var s string
	_ = json.Unmarshal(raw, &s) // raw is a valid string: scanned before
	return []byte(s)
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

func syntaxErr(data []byte, i int, what string) error {
	if i >= len(data) {
		return &SyntaxError{Offset: len(data), msg: "unexpected end of input"}
	}
	return &SyntaxError{Offset: i, msg: fmt.Sprintf("%s, found %q", what, data[i])}
}

// scanValue returns the offset just past the value starting at data[i].
func scanValue(data []byte, i, depth int) (int, error) {
	if i >= len(data) {
		return i, syntaxErr(data, i, "expected a value")
	}
	switch c := data[i]; {
	case c == '"':
		return scanString(data, i)
	case c == '{':
		return scanObject(data, i, depth+1)
	case c == '[':
		return scanArray(data, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(data, i)
	case c == 't':
		return scanLiteral(data, i, "true")
	case c == 'f':
		return scanLiteral(data, i, "false")
	case c == 'n':
		return scanLiteral(data, i, "null")
	}
	return i, syntaxErr(data, i, "expected a value")
}

func scanLiteral(data []byte, i int, lit string) (int, error) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, syntaxErr(data, i, "expected "+lit)
	}
	return i + len(lit), nil
}

func scanObject(data []byte, i, depth int) (int, error) {
	return scanMembers(data, i, depth, nil)
}

// scanMembers scans the object starting at data[i], calling fn (when not
// nil) with each member.
func scanMembers(data []byte, i, depth int, fn func(key, value []byte) error) (int, error) {
	if depth > maxScanDepth {
		return i, &SyntaxError{Offset: i, msg: "nested too deeply"}
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, syntaxErr(data, i, "expected a string key")
		}
		keyStart := i
		var err error
		if i, err = scanString(data, i); err != nil {
			return i, err
		}
		keyEnd := i
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != ':' {
			return i, syntaxErr(data, i, "expected ':' after a key")
		}
		valStart := skipSpace(data, i+1)
		if i, err = scanValue(data, valStart, depth); err != nil {
			return i, err
		}
		if fn != nil {
			key := data[keyStart+1 : keyEnd-1]
			if hasEscape(key) {
				key = unescapeKey(data[keyStart:keyEnd])
			}
			if err := fn(key, data[valStart:i]); err != nil {
				return i, err
			}
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return i, syntaxErr(data, i, "")
		}
		switch data[i] {
		case '}':
			return i + 1, nil
		case ',':
			i = skipSpace(data, i+1)
		default:
			return i, syntaxErr(data, i, "expected ',' or '}'")
		}
	}
}

func scanArray(data []byte, i, depth int) (int, error) {
	if depth > maxScanDepth {
		return i, &SyntaxError{Offset: i, msg: "nested too deeply"}
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = scanValue(data, i, depth); err != nil {
			return i, err
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return i, syntaxErr(data, i, "")
		}
		switch data[i] {
		case ']':
			return i + 1, nil
		case ',':
			i = skipSpace(data, i+1)
		default:
			return i, syntaxErr(data, i, "expected ',' or ']'")
		}
	}
}

// stringPlain marks the bytes a JSON string holds as they are: all but the
// quote, the backslash and control characters.
var stringPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// stringSpecial has the high bit set in the byte of v (little-endian) that
// is the first quote, backslash or control character, if any; bits above
// that byte may be set too. A high bit in the input never counts: those
// bytes belong to UTF-8 sequences.
func stringSpecial(v uint64) uint64 {
	quote := v ^ (lsbs * '"')
	backslash := v ^ (lsbs * '\\')
	return ((quote - lsbs) | (backslash - lsbs) | (v - lsbs*0x20)) & ^v & msbs
}

// scanString returns the offset past the closing quote of the string that
// starts at data[i] (a '"').
func scanString(data []byte, i int) (int, error) {
	i++
	for {
		// Eight bytes at a time while none of them ends the run; then
		// byte by byte to the one that does.
		for i+8 <= len(data) {
			if m := stringSpecial(binary.LittleEndian.Uint64(data[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		for i < len(data) && stringPlain[data[i]] {
			i++
		}
		if i >= len(data) {
			return i, syntaxErr(data, i, "")
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(data) {
				return i, syntaxErr(data, i+1, "")
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(data)-i < 6 {
					return i, syntaxErr(data, len(data), "")
				}
				for k := i + 2; k < i+6; k++ {
					if !isHex(data[k]) {
						return k, syntaxErr(data, k, `expected a hex digit in \u escape`)
					}
				}
				i += 6
			default:
				return i + 1, syntaxErr(data, i+1, "invalid escape")
			}
		default:
			return i, syntaxErr(data, i, "control character in a string")
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNumber follows RFC 8259's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(data []byte, i int) (int, error) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && isDigit(data[i]):
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	default:
		return i, syntaxErr(data, i, "expected a digit")
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || !isDigit(data[i]) {
			return i, syntaxErr(data, i, "expected a digit after '.'")
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			return i, syntaxErr(data, i, "expected a digit in the exponent")
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	return i, nil
}

// Valid is json.Valid at a fraction of the cost: it runs on every JSON
// response body, the largest input on the hot path.
func Valid(b []byte) bool {
	_, err := scanDocument(b, nil)
	return err == nil
}
