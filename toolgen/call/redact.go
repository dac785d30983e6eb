package call

// Nothing secret comes back. The gateway holds the backend's credentials
// (a bearer token, API keys, static headers); a backend that echoes its
// request headers, in an error page or a 200, would hand them to whoever
// calls the tool. Every configured credential value is replaced in every
// backend body before it goes anywhere. Backend errors say less: a 5xx
// body is not forwarded by default (it is for the operator's logs, not the
// model), and a forwarded excerpt loses the lines that look like stack
// frames, file paths, internal addresses or credentials.

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// The backend_error_body modes.
const (
	ErrorBodyExcerpt = "excerpt" // 4xx bodies as an excerpt, 5xx not at all (default)
	ErrorBodyAll     = "all"     // every error body as an excerpt
	ErrorBodyNone    = "none"    // the status and a one-line reason only
)

// ValidErrorBody reports whether mode is a backend_error_body mode.
func ValidErrorBody(mode string) bool {
	return mode == ErrorBodyExcerpt || mode == ErrorBodyAll || mode == ErrorBodyNone
}

// redactedMark replaces a credential value.
var redactedMark = []byte("[redacted]")

// minSecret: shorter configured values are not redacted (a header such
// as "X-Version: 2" is no secret, and replacing every "2" would garble
// the data).
const minSecret = 6

// redactor replaces the configured credential values.
type redactor struct{ secrets [][]byte }

func newRedactor(cfg Config) redactor {
	var r redactor
	one := func(v string) {
		if len(v) >= minSecret && !slices.ContainsFunc(r.secrets, func(s []byte) bool { return string(s) == v }) {
			r.secrets = append(r.secrets, []byte(v))
		}
	}
	// Each value as configured, and as a backend may echo it: URL-escaped
	// (an API key sent in the query), JSON-escaped, and without an auth
	// scheme ("Bearer X" in a static header: X alone).
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) < minSecret {
			return
		}
		forms := []string{v, url.QueryEscape(v), url.PathEscape(v)}
		if scheme, cred, ok := strings.Cut(v, " "); ok && len(scheme) < 16 && !strings.ContainsAny(scheme, "=:") {
			forms = append(forms, strings.TrimSpace(cred))
		}
		for _, f := range forms {
			one(f)
			if js, err := json.Marshal(f); err == nil {
				one(string(js[1 : len(js)-1]))
				one(strings.ReplaceAll(string(js[1:len(js)-1]), "/", `\/`))
			}
		}
	}
	add(cfg.BearerToken)
	for _, v := range cfg.APIKeys {
		add(v)
	}
	for _, v := range cfg.Headers {
		add(v)
	}
	// The longest first, so that a secret holding another is replaced whole.
	slices.SortFunc(r.secrets, func(a, b []byte) int { return len(b) - len(a) })
	return r
}

// longest is the length of the longest secret form: an excerpt is read
// that much past its cap, so that a secret across the cut is redacted too.
func (r redactor) longest() int {
	if len(r.secrets) == 0 {
		return 0
	}
	return len(r.secrets[0])
}

// redact returns b without the secrets: b itself when it holds none, else
// a copy (b may be a pooled buffer; the caller keeps owning it).
func (r redactor) redact(b []byte) []byte {
	out := b
	for _, s := range r.secrets {
		if bytes.Contains(out, s) {
			out = bytes.ReplaceAll(out, s, redactedMark)
		}
	}
	return out
}

// leakyLine matches lines an error excerpt drops: stack frames (Go, Java,
// Python, Node, .NET, Ruby, PHP), source file paths with line numbers,
// private and loopback addresses, cluster-internal names, and lines that
// set a password, secret, token or key.
var leakyLine = regexp.MustCompile(`(?i)` +
	`goroutine \d+|panic:|\.go:\d+|^\s*at [\w$.<>]+\(.*\)|\bat .+:\d+:\d+\)?\s*$|^\s*\.\.\. \d+ more|caused by:|exception in thread|` +
	`traceback \(most recent call last\)|^\s*file ".*", line \d+|\.(py|rb|php|java|js|ts|cs|kt|scala):\d+|` +
	`(^|[\s"'(=])(/(home|usr|var|opt|srv|app|etc|tmp|root|src)/|[a-z]:\\)|` +
	`\b(10\.\d{1,3}|127\.\d{1,3}|192\.168|172\.(1[6-9]|2\d|3[01]))\.\d{1,3}\.\d{1,3}\b|\blocalhost:\d+|\[::1\]|` +
	`\.(internal|local|svc|cluster\.local|corp|lan)\b|` +
	`(password|passwd|secret|token|api[_-]?key|authorization)["']?\s*[:=]`)

// scrubExcerpt drops the lines of an error excerpt that leakyLine matches;
// what is left may be empty.
func scrubExcerpt(text string) string {
	lines := strings.Split(text, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !leakyLine.MatchString(l) {
			kept = append(kept, l)
		}
	}
	return strings.TrimSpace(strings.Join(kept, "\n"))
}
