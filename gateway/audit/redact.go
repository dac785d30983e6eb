package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mark replaces the value of a redacted argument.
const Mark = "[REDACTED]"

// MaxArguments is the largest arguments document recorded; a larger one is
// recorded as {"_truncated":true,"bytes":N}.
const MaxArguments = 16 << 10

var defaultRedact = []string{
	"password", "passwd", "passphrase", "pwd",
	"secret", "token", "authorization", "bearer",
	"apikey", "accesskey", "privatekey", "signingkey", "encryptionkey",
	"credential", "cookie", "sessionid", "sessionkey",
	"connectionstring",
}

// DefaultRedact returns the redact list used when Config.Redact is empty
// (a copy: extend it with append to keep the defaults):
//
//	password passwd passphrase pwd secret token authorization bearer
//	apikey accesskey privatekey signingkey encryptionkey credential
//	cookie sessionid sessionkey connectionstring
//
// Every entry is matched as a substring of the normalized key, so "token"
// also covers access_token, refreshToken and X-Auth-Token, "secret"
// client_secret, and "apikey" api_key and X-Api-Key. Left out on purpose,
// because as substrings they match common harmless keys: "session"
// (sessionTimeout; sessionid and sessionkey are listed instead), "auth"
// (author, authority), "pin" (shipping, mapping), "otp" (footprint), "key"
// (keyword, monkey), "dsn" (field_snapshot once normalized). "token" does
// match max_tokens and tokenCount: a count lost from the log is cheaper
// than a token in it.
func DefaultRedact() []string { return append([]string(nil), defaultRedact...) }

// normalizeKey is how keys and patterns are compared: lower case, with
// everything but letters and digits removed ("X-Api-Key", "api_key" and
// "apiKey" are all "apikey").
func normalizeKey(k string) string {
	var b strings.Builder
	b.Grow(len(k))
	for _, r := range k {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// matcher decides which argument keys are redacted.
type matcher struct{ patterns []string } // normalized

func newMatcher(keys []string) (matcher, error) {
	if len(keys) == 0 {
		keys = defaultRedact
	}
	m := matcher{patterns: make([]string, 0, len(keys))}
	for _, k := range keys {
		p := normalizeKey(k)
		if p == "" {
			// An empty pattern is a substring of every key.
			return matcher{}, fmt.Errorf("audit: redact key %q has no letter or digit", k)
		}
		m.patterns = append(m.patterns, p)
	}
	return m, nil
}

func (m matcher) match(key string) bool {
	k := normalizeKey(key)
	for _, p := range m.patterns {
		if strings.Contains(k, p) {
			return true
		}
	}
	return false
}

// errInvalid: the arguments are not one JSON value.
var errInvalid = errors.New("invalid JSON")

// redactor rewrites argument documents. It is used by the writer's
// goroutine only and keeps its buffers between entries.
type redactor struct {
	keys   matcher
	out    bytes.Buffer
	str    bytes.Buffer
	strEnc *json.Encoder // into str, without HTML escaping
	norm   []byte        // plain's scratch
}

func newRedactor(keys matcher) *redactor {
	r := &redactor{keys: keys}
	r.strEnc = json.NewEncoder(&r.str)
	r.strEnc.SetEscapeHTML(false)
	return r
}

// arguments returns what the log records for args, of size bytes
// (size > len(args) when Record left a too large document out). The result
// is valid JSON and is only good until the next call.
func (r *redactor) arguments(args []byte, size int) []byte {
	r.out.Reset()
	switch {
	case size > MaxArguments:
		fmt.Fprintf(&r.out, `{"_truncated":true,"bytes":%d}`, size)
	case r.rewrite(args) != nil:
		r.out.Reset()
		fmt.Fprintf(&r.out, `{"_invalid":true,"bytes":%d}`, size)
	}
	return r.out.Bytes()
}

// rewrite writes args to r.out with the values of matching keys replaced
// and space dropped. Member order and duplicate members are kept.
func (r *redactor) rewrite(args []byte) error {
	if !json.Valid(args) {
		return errInvalid
	}
	if r.plain(args) {
		return json.Compact(&r.out, args)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := r.value(dec); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errInvalid
	}
	return nil
}

func (r *redactor) value(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return r.object(dec)
		case '[':
			return r.array(dec)
		}
		return errInvalid
	case string:
		r.string(t)
	case json.Number:
		r.out.WriteString(t.String())
	case bool:
		r.out.WriteString(strconv.FormatBool(t))
	case nil:
		r.out.WriteString("null")
	default:
		return errInvalid
	}
	return nil
}

func (r *redactor) object(dec *json.Decoder) error {
	r.out.WriteByte('{')
	for i := 0; dec.More(); i++ {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return errInvalid
		}
		if i > 0 {
			r.out.WriteByte(',')
		}
		r.string(key)
		r.out.WriteByte(':')
		if r.keys.match(key) {
			// Read past the value, however deep, without looking inside.
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			r.string(Mark)
			continue
		}
		if err := r.value(dec); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return err
	}
	r.out.WriteByte('}')
	return nil
}

func (r *redactor) array(dec *json.Decoder) error {
	r.out.WriteByte('[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			r.out.WriteByte(',')
		}
		if err := r.value(dec); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return err
	}
	r.out.WriteByte(']')
	return nil
}

// string writes s as a JSON string.
func (r *redactor) string(s string) {
	r.str.Reset()
	_ = r.strEnc.Encode(s) // a string always encodes
	b := r.str.Bytes()
	r.out.Write(b[:len(b)-1]) // without Encode's '\n'
}

// plain reports whether valid JSON args can be copied as they are, space
// aside: no key in it may match, and it holds no invalid UTF-8 (which the
// rewrite replaces with U+FFFD). It is the fast path: the token-by-token
// rewrite costs two to three times as much on arguments of a few hundred
// bytes, and allocates for every token (BenchmarkRedact). No
// key can match when no pattern occurs in the whole document normalized as
// keys are, with an escape such as \n read as the character it stands for
// (none is a letter or digit); a \u escape could be a letter, so it sends
// the document down the slow path.
func (r *redactor) plain(args []byte) bool {
	if !utf8.Valid(args) {
		return false
	}
	n := r.norm[:0]
	for i := 0; i < len(args); {
		c := args[i]
		switch {
		case c == '\\':
			if args[i+1] == 'u' {
				return false
			}
			i += 2 // \" \\ \/ \b \f \n \r \t: none a letter or digit
		case c < utf8.RuneSelf:
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
				n = append(n, c)
			}
			i++
		default:
			rn, size := utf8.DecodeRune(args[i:])
			if unicode.IsLetter(rn) || unicode.IsDigit(rn) {
				n = utf8.AppendRune(n, unicode.ToLower(rn))
			}
			i += size
		}
	}
	r.norm = n
	for _, p := range r.keys.patterns {
		if bytes.Contains(n, []byte(p)) {
			return false
		}
	}
	return true
}
