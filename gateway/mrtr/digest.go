package mrtr

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ignoredParams are the top-level params a retry adds or may change.
var ignoredParams = []string{"_meta", "inputResponses", "requestState"}

// maxDepth is encoding/json's nesting limit, so that what the gateway
// decodes elsewhere has a digest here.
const maxDepth = 10000

var (
	errDuplicateKey = errors.New("duplicate object key")
	errTooDeep      = errors.New("nested too deeply")
	errTrailing     = errors.New("data after the params")
)

// ParamsDigest returns the SHA-256 of params' canonical form without the
// top-level keys _meta, inputResponses and requestState. The canonical
// form is params decoded and encoded again by encoding/json, object keys
// sorted and numbers kept as written (json.Number), so a client that
// encodes the same params with other key order, spacing or string
// escapes gets the same digest. Absent params (empty) digest as null.
// Invalid JSON is an error, and so is an object with a key twice: the
// decoders that later read the params might not agree on which one
// counts.
func ParamsDigest(params json.RawMessage) ([32]byte, error) {
	if len(params) == 0 {
		params = json.RawMessage("null")
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err == nil {
		if _, end := dec.Token(); end != io.EOF {
			err = errTrailing
		}
	}
	if err != nil {
		return [32]byte{}, fmt.Errorf("mrtr: params: %w", err)
	}
	if obj, ok := v.(map[string]any); ok {
		for _, k := range ignoredParams {
			delete(obj, k)
		}
	}
	canonical, err := json.Marshal(v)
	if err != nil {
		return [32]byte{}, fmt.Errorf("mrtr: params: %w", err)
	}
	return sha256.Sum256(canonical), nil
}

// decodeValue reads one value as encoding/json would into an any (with
// UseNumber), refusing duplicate keys and nesting past maxDepth.
func decodeValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := token(dec)
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // a string, json.Number, bool or nil
	}
	if depth >= maxDepth {
		return nil, errTooDeep
	}
	switch d {
	case '{':
		obj := map[string]any{}
		for dec.More() {
			kt, err := token(dec)
			if err != nil {
				return nil, err
			}
			k, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key %v", kt)
			}
			if _, dup := obj[k]; dup {
				return nil, fmt.Errorf("%w %q", errDuplicateKey, k)
			}
			if obj[k], err = decodeValue(dec, depth+1); err != nil {
				return nil, err
			}
		}
		_, err := token(dec) // '}'
		return obj, err
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := token(dec) // ']'
		return arr, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// token is dec.Token inside a value, where the end of the input is
// unexpected.
func token(dec *json.Decoder) (json.Token, error) {
	tok, err := dec.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return tok, err
}
