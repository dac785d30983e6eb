package jsonlex

// SkipValue returns the offset just past the JSON value that starts at
// data[i] (no space before it), checking it as Valid does: a caller that only
// needs to find where a value ends, such as the OpenAPI loader cutting a
// document into chunks, shares the one scanner. On a syntax error the
// returned offset is where the value stops being JSON and err is a
// *SyntaxError.
func SkipValue(data []byte, i int) (end int, err error) {
	return scanValue(data, i, 0)
}

// SkipString is SkipValue for a value known to be a string: data[i] is its
// opening quote.
func SkipString(data []byte, i int) (end int, err error) {
	return scanString(data, i)
}

// SkipNested is SkipValue for a value inside depth enclosing objects and
// arrays, so that the nesting bound Valid applies counts from the top of
// the document, not from data[i].
func SkipNested(data []byte, i, depth int) (end int, err error) {
	return scanValue(data, i, depth)
}

// MaxDepth is the deepest nesting of objects and arrays Valid accepts.
const MaxDepth = maxScanDepth
