package jsonlex

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// plainASCII marks the ASCII bytes a JSON string carries unescaped;
// plainASCIIHTML also escapes <, > and & as encoding/json does. Bytes from
// utf8.RuneSelf up are false: they take the UTF-8 path.
var plainASCII, plainASCIIHTML = func() (t, h [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
		h[c] = t[c] && c != '<' && c != '>' && c != '&'
	}
	return t, h
}()

// AppendString appends s as a JSON string the way encoding/json does:
// quotes, backslashes, control characters and U+2028/U+2029 escaped,
// invalid UTF-8 replaced with U+FFFD, and with escapeHTML also <, > and &.
// Schemas are written without HTML escaping (descriptions and patterns stay
// readable); the gateway's responses with it, byte for byte as
// encoding/json.
func AppendString(b []byte, s string, escapeHTML bool) []byte {
	plain := &plainASCII
	if escapeHTML {
		plain = &plainASCIIHTML
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Most bytes need no escape: skip them in a tight loop.
		for i < len(s) && plain[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
