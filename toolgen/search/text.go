package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// words cuts s into lower-case words: at every character that is not a
// letter or digit, and inside a word at a camelCase boundary (listPets →
// list pets, HTTPServer → http server, v2Beta → v2 beta).
func words(s string) []string {
	var out []string
	start := -1 // byte offset of the current word
	var prev rune
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				out = append(out, strings.ToLower(s[start:i]))
				start = -1
			}
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			_, size := utf8.DecodeRuneInString(s[i:])
			next, _ := utf8.DecodeRuneInString(s[i+size:])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				out = append(out, strings.ToLower(s[start:i]))
				start = -1
			}
		}
		if start < 0 {
			start = i
		}
		prev = r
	}
	if start >= 0 {
		out = append(out, strings.ToLower(s[start:]))
	}
	return out
}

// terms is what the index and the query both match on: the words of s
// without stopwords, stemmed, abbreviations folded (vocab.go). It appends
// to dst.
func terms(dst []string, s string) []string {
	for _, w := range words(s) {
		if stopwords[w] {
			continue
		}
		st := stem(w)
		if a, ok := aliases[st]; ok {
			dst = append(dst, a...)
			continue
		}
		dst = append(dst, st)
	}
	return dst
}

// stem strips the common English inflections, lightly enough that
// identifiers survive: a plural (-ies → -y, -sses → -ss, -s except after s,
// u or i: status, access, analysis stay), then -ied → -y, -ing or -ed when
// what is left has a vowel (string stays), undoubling a final b, g, m, n, p,
// r or t (starred → star, committed → commit, but added → add, pulled →
// pull), then a final e of a word longer than three letters, so that merge,
// merges, merged and merging all become merg. It is not Porter's stemmer:
// it never conflates words of different roots (Porter: general, generic →
// gener), which matters more here than recall on rare forms. It is a page
// of code; the one maintained stemmer at hand comes inside bleve, a whole
// search engine to add to the module for it.
func stem(w string) string {
	if len(w) <= 2 || !isASCIILower(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ied") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ing") && len(w) >= 6 && hasVowel(w[:len(w)-3]):
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) >= 5 && hasVowel(w[:len(w)-2]):
		w = undouble(w[:len(w)-2])
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && strings.IndexByte("bgmnprt", w[n-1]) >= 0 {
		return w[:n-1]
	}
	return w
}

func hasVowel(w string) bool { return strings.ContainsAny(w, "aeiouy") }

// isASCIILower: the stemmer knows English suffixes only; other words (and
// ones with digits, like oauth2) pass through whole.
func isASCIILower(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}
