package tools

import "slices"

// satisfies reports whether granted scopes meet a security requirement
// list in OpenAPI's shape: alternatives are ORed, the scopes of one
// alternative ANDed. No alternatives means no requirement, and so does an
// empty alternative (OpenAPI's optional security, {}).
//
// It allocates nothing: it runs on every tools/call.
func satisfies(granted []string, alternatives [][]string) bool {
	if len(alternatives) == 0 {
		return true
	}
	for _, alt := range alternatives {
		if missing(granted, alt) == 0 {
			return true
		}
	}
	return false
}

// stepUp is the scope a client should ask for when granted does not
// satisfy alternatives: the whole scope set of the alternative closest to
// satisfied (fewest scopes missing; the first on a tie), as RFC 6750's
// scope= lists the scope a call needs, not only the part the token lacks.
// It returns nil when granted already satisfies alternatives. The result
// is a new slice, without duplicates.
func stepUp(granted []string, alternatives [][]string) []string {
	if satisfies(granted, alternatives) {
		return nil
	}
	best, fewest := -1, 0
	for i, alt := range alternatives {
		if n := missing(granted, alt); best < 0 || n < fewest {
			best, fewest = i, n
		}
	}
	out := make([]string, 0, len(alternatives[best]))
	for _, s := range alternatives[best] {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// missing counts the scopes of alt that granted lacks (a scope listed
// twice counts twice; that only shifts ties between odd lists).
func missing(granted, alt []string) int {
	n := 0
	for _, s := range alt {
		if !slices.Contains(granted, s) {
			n++
		}
	}
	return n
}
