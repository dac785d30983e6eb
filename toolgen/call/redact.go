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
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/mcp-gateway/mcp-gateway/internal/redact"
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

// credentials is the set of configured credential values (internal/redact).
func credentials(cfg Config) *redact.Set { return redact.New(credentialValues(cfg)...) }

// credentialValues are the configured credential values: the static ones
// and the client secret of the backend's authorization server.
func credentialValues(cfg Config) []string {
	values := []string{cfg.BearerToken, cfg.OAuthClientSecret}
	for _, v := range cfg.APIKeys {
		// Also as this package sends them in a query or a cookie, which
		// encode other bytes than url.QueryEscape and url.PathEscape.
		values = append(values, v, escapeQueryValue(v), escapeCookie(v))
	}
	for _, v := range cfg.Headers {
		values = append(values, v)
	}
	return values
}

// tokenSecrets is the redaction set of a call that carried fetched
// tokens: the configured credentials and those tokens, so a backend that
// echoes its request cannot hand a client the gateway's backend token.
// The set of the last tokens seen is kept: a token serves many calls.
type tokenSecrets struct {
	configured []string
	last       atomic.Pointer[tokenSet]
}

type tokenSet struct {
	key string
	set *redact.Set
}

func (t *tokenSecrets) with(tokens []string) *redact.Set {
	key := strings.Join(tokens, "\x00")
	if ts := t.last.Load(); ts != nil && ts.key == key {
		return ts.set
	}
	set := redact.New(append(append([]string(nil), t.configured...), tokens...)...)
	t.last.Store(&tokenSet{key: key, set: set})
	return set
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
