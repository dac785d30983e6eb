package jsonlex

import "errors"

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

// ScanArray checks that data is one JSON array and calls fn with each
// element's raw value (no surrounding space), in order. An error from fn
// stops the scan and is returned as is; a valid non-array returns
// ErrNotArray.
func ScanArray(data []byte, fn func(elem []byte) error) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		if _, err := scanDocument(data, nil); err != nil {
			return err
		}
		return ErrNotArray
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return trailing(data, i+1)
	}
	for {
		end, err := scanValue(data, i, 1)
		if err != nil {
			return err
		}
		if err := fn(data[i:end]); err != nil {
			return err
		}
		i = skipSpace(data, end)
		switch {
		case i < len(data) && data[i] == ',':
			i = skipSpace(data, i+1)
		case i < len(data) && data[i] == ']':
			return trailing(data, i+1)
		default:
			return syntaxErr(data, i, "expected , or ] in array")
		}
	}
}

// ErrNotArray is returned by ScanArray for valid JSON that is not an array.
var ErrNotArray = errors.New("not a JSON array")

func trailing(data []byte, i int) error {
	if rest := skipSpace(data, i); rest != len(data) {
		return &SyntaxError{Offset: rest, msg: "data after the top-level value"}
	}
	return nil
}
