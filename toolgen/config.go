package toolgen

// Options controls which operations become tools and how they are described.
type Options struct {
	// Include, when non-empty, keeps only operations matched by at least one
	// glob. A glob matches an operation when it matches its operationId, any of
	// its tags, or its path (path.Match syntax; "**" is not special).
	Include []string
	// Exclude drops operations matched by any glob (same matching as Include);
	// it wins over Include.
	Exclude []string
	// MaxDescription trims tool descriptions to this many characters.
	// Zero means 1024.
	MaxDescription int
}
