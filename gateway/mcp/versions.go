package mcp

import "slices"

// Protocol revisions the gateway serves.
const (
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"
)

// SessionVersions are the handshake revisions, newest first. The newest is
// what initialize counter-offers to a client asking for anything else.
var SessionVersions = []string{Version20251125, Version20250618, Version20250326}

// StatelessVersions are the revisions served without a session.
var StatelessVersions = []string{Version20260728}

// SupportedVersions is what discovery and -32022 errors list: the stateless
// revision first, then the handshake ones (a dual-era client then knows to
// use initialize for those).
var SupportedVersions = append(slices.Clone(StatelessVersions), SessionVersions...)

// IsSessionVersion reports whether v is a handshake revision served here.
func IsSessionVersion(v string) bool { return slices.Contains(SessionVersions, v) }

// IsStatelessVersion reports whether v is a stateless revision served here.
func IsStatelessVersion(v string) bool { return slices.Contains(StatelessVersions, v) }

// NegotiateVersion answers an initialize request: the client's version when
// it is a handshake revision we serve, else our newest handshake revision
// (never the stateless one: it has no initialize).
func NegotiateVersion(requested string) string {
	if IsSessionVersion(requested) {
		return requested
	}
	return SessionVersions[0]
}

// Era is the protocol family of one request.
type Era uint8

const (
	EraSession   Era = 1 << iota // 2025-03-26, 2025-06-18, 2025-11-25
	EraStateless                 // 2026-07-28
	EraBoth      = EraSession | EraStateless
)

// Label is the era's metric label: "session" or the stateless revision.
func (e Era) Label() string {
	if e == EraStateless {
		return Version20260728
	}
	return "session"
}
