// Package redact holds the credential values the gateway is configured
// with and replaces them wherever they might come back: in backend bodies
// (toolgen/call) and in the log (cmd/mcp-gateway). It imports only the
// standard library: no project package.
package redact

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Mark replaces a credential value.
const Mark = "[redacted]"

// MinLen: shorter values are not treated as secrets (a header such as
// "X-Version: 2" is none, and replacing every "2" would garble the data).
const MinLen = 6

// Set is a set of secrets, each in the forms it may be echoed in. The zero
// Set holds none.
type Set struct{ forms [][]byte } // longest first

// New returns the set of values (blank and short ones are left out).
func New(values ...string) *Set {
	s := &Set{}
	for _, v := range values {
		s.add(v)
	}
	slices.SortFunc(s.forms, func(a, b []byte) int { return len(b) - len(a) })
	return s
}

// add takes v as configured, URL-escaped (an API key sent in a query),
// JSON-escaped, and without an auth scheme ("Bearer X": X alone).
func (s *Set) add(v string) {
	v = strings.TrimSpace(v)
	if len(v) < MinLen {
		return
	}
	forms := []string{v, url.QueryEscape(v), url.PathEscape(v)}
	if scheme, cred, ok := strings.Cut(v, " "); ok && len(scheme) < 16 && !strings.ContainsAny(scheme, "=:") {
		forms = append(forms, strings.TrimSpace(cred))
	}
	for _, f := range forms {
		s.one(f)
		if js, err := json.Marshal(f); err == nil {
			s.one(string(js[1 : len(js)-1]))
			s.one(strings.ReplaceAll(string(js[1:len(js)-1]), "/", `\/`))
		}
	}
}

func (s *Set) one(f string) {
	if len(f) >= MinLen && !slices.ContainsFunc(s.forms, func(x []byte) bool { return string(x) == f }) {
		s.forms = append(s.forms, []byte(f))
	}
}

// Longest is the length of the longest form (0 for an empty set): read
// that much past a cut to redact a secret that straddles it.
func (s *Set) Longest() int {
	if len(s.forms) == 0 {
		return 0
	}
	return len(s.forms[0])
}

// Bytes returns b without the secrets: b itself when it holds none, else
// a copy (b may be a pooled buffer; the caller keeps owning it).
func (s *Set) Bytes(b []byte) []byte {
	out := b
	for _, f := range s.forms {
		if bytes.Contains(out, f) {
			out = bytes.ReplaceAll(out, f, []byte(Mark))
		}
	}
	return out
}

// String is Bytes for a string.
func (s *Set) String(v string) string {
	for _, f := range s.forms {
		v = strings.ReplaceAll(v, string(f), Mark)
	}
	return v
}
