package toolgen

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
)

// maxNameLen is the strictest tool-name limit among common MCP clients
// (the specification allows 128).
const maxNameLen = 64

// hashLen is the length of the suffix that makes a truncated or colliding
// name unique: hex of a SHA-256, stable across runs and machines.
const hashLen = 6

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:hashLen]
}

// sanitizeName maps s onto [A-Za-z0-9_-]: each run of other characters
// between valid ones becomes one underscore (none when one is already
// there); runs at either end are dropped.
// A result longer than maxNameLen keeps its first characters and
// ends with "_" and a hash of the whole sanitized name, so two long names
// that share a prefix stay apart. The result may be empty.
func sanitizeName(s string) string {
	return sanitize(s, maxNameLen, func(r rune) bool {
		return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	})
}

// sanitizeArg is sanitizeName for argument (property) names, which may also
// hold dots: [A-Za-z0-9_.-], at most 64 characters, the limit some model
// providers put on property names.
func sanitizeArg(s string) string {
	return sanitize(s, maxNameLen, func(r rune) bool {
		return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	})
}

func sanitize(s string, limit int, valid func(rune) bool) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for _, r := range s {
		if valid(r) {
			if pending && b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
			pending = false
			b.WriteRune(r)
			continue
		}
		pending = true
	}
	return truncateName(b.String(), limit)
}

// truncateName shortens an already valid name to limit characters, ending
// it with "_" and a hash of the full name.
func truncateName(name string, limit int) string {
	if len(name) <= limit {
		return name
	}
	keep := strings.TrimRight(name[:limit-hashLen-1], "_-.")
	return keep + "_" + shortHash(name)
}

// withSuffix appends "_" + suffix to base, shortening base to fit limit.
func withSuffix(base, suffix string, limit int) string {
	if room := limit - len(suffix) - 1; len(base) > room {
		base = strings.TrimRight(base[:room], "_-.")
	}
	if base == "" {
		return suffix
	}
	return base + "_" + suffix
}

// fallbackName is a readable name from the method and path of an operation
// without operationId: GET /pets/{petId}/photos → get_pets_by_petId_photos;
// consecutive parameters are joined with "and".
func fallbackName(method, path string) string {
	parts := []string{strings.ToLower(method)}
	prevParam := false
	hasSeg := false
	for _, seg := range strings.Split(path, "/") {
		if seg == "" {
			continue
		}
		hasSeg = true
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") && strings.Count(seg, "{") == 1 {
			name := seg[1 : len(seg)-1]
			if prevParam {
				parts = append(parts, "and", name)
			} else {
				parts = append(parts, "by", name)
			}
			prevParam = true
			continue
		}
		prevParam = false
		parts = append(parts, strings.NewReplacer("{", "", "}", "").Replace(seg))
	}
	if !hasSeg {
		parts = append(parts, "root")
	}
	return sanitizeName(strings.Join(parts, "_"))
}

// humanize turns a tool name into a title: listPets → "List pets",
// repos/get-content → "Repos get content".
func humanize(name string) string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	runes := []rune(name)
	for i, r := range runes {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && len(cur) > 0 &&
			(unicode.IsLower(cur[len(cur)-1]) || unicode.IsDigit(cur[len(cur)-1]) ||
				(i+1 < len(runes) && unicode.IsLower(runes[i+1]))):
			// fooBar, foo2Bar, HTTPServer → HTTP Server
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	if len(words) == 0 {
		return name
	}
	for i, w := range words {
		if !isAcronym(w) {
			words[i] = strings.ToLower(w)
		}
	}
	first := []rune(words[0])
	first[0] = unicode.ToUpper(first[0])
	words[0] = string(first)
	return strings.Join(words, " ")
}

func isAcronym(w string) bool {
	if len(w) < 2 {
		return false
	}
	for _, r := range w {
		if !unicode.IsUpper(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// nameSet hands out unique names.
type nameSet map[string]bool

// claim returns want if it is free, else want with a suffix made of a hash
// of key (stable: the operation's method and path), then of key and a
// counter should even that be taken.
func (ns nameSet) claim(want, key string, limit int) string {
	name := want
	for i := 0; name == "" || ns[name]; i++ {
		k := key
		if i > 0 {
			k = key + "#" + strconv.Itoa(i)
		}
		name = withSuffix(want, shortHash(k), limit)
	}
	ns[name] = true
	return name
}
