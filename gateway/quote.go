package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// maxQuoted bounds a client-supplied value quoted back in an error: the
// client knows what it sent, and a 500 KB header must not come back whole.
const maxQuoted = 64

// truncate cuts s to maxQuoted bytes (on a rune boundary) with an ellipsis.
func truncate(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// shortID is how logs name a session: a short hash, not the id itself
// (the id is the session's only credential).
func shortID(sid string) string {
	sum := sha256.Sum256([]byte(sid))
	return hex.EncodeToString(sum[:4])
}
