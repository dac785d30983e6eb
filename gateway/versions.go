package gateway

import "slices"

// Protocol revisions the gateway serves.
const (
	version20250326 = "2025-03-26"
	version20250618 = "2025-06-18"
	version20251125 = "2025-11-25"
	version20260728 = "2026-07-28"
)

// sessionVersions are the handshake revisions, newest first. The newest is
// what initialize counter-offers to a client asking for anything else.
var sessionVersions = []string{version20251125, version20250618, version20250326}

// statelessVersions are the revisions served without a session.
var statelessVersions = []string{version20260728}

// supportedVersions is what discovery and -32022 errors list: the stateless
// revision first, then the handshake ones (a dual-era client then knows to
// use initialize for those).
var supportedVersions = append(slices.Clone(statelessVersions), sessionVersions...)

func isSessionVersion(v string) bool   { return slices.Contains(sessionVersions, v) }
func isStatelessVersion(v string) bool { return slices.Contains(statelessVersions, v) }

// negotiateVersion answers an initialize request: the client's version when
// it is a handshake revision we serve, else our newest handshake revision
// (never the stateless one: it has no initialize).
func negotiateVersion(requested string) string {
	if isSessionVersion(requested) {
		return requested
	}
	return sessionVersions[0]
}
