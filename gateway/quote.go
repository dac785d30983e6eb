package gateway

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// truncate cuts a client-supplied value quoted in an error.
func truncate(s string) string { return mcp.Truncate(s) }

// shortID is how logs name a session: a short hash, not the id itself
// (the id is the session's only credential).
func shortID(sid string) string {
	sum := sha256.Sum256([]byte(sid))
	return hex.EncodeToString(sum[:4])
}
