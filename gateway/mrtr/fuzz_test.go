package mrtr

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzOpen feeds Open mutations of real tokens: it must never panic,
// return only its sentinels, and accept nothing but the tokens sealed
// here, byte for byte. The key and the ids are fixed, so that a saved
// input means the same on every run.
func FuzzOpen(f *testing.F) {
	s := newTestSealer(f, 1)
	b := binding(f)
	originals := map[string][]byte{}
	for i, payload := range [][]byte{nil, []byte("x"), []byte(`{"step":1}`), bytes.Repeat([]byte{0xff}, 300)} {
		token, _, err := s.Seal(b, payload, expires.Add(time.Duration(i)*time.Second))
		require.NoError(f, err)
		originals[token] = payload
		f.Add(token)
		f.Add(token[:len(token)-1])
		f.Add(token + "A")
	}
	f.Add("")
	f.Add("AQ")
	f.Fuzz(func(t *testing.T, token string) {
		payload, id, exp, err := s.Open(b, token, t0)
		if err != nil {
			require.Contains(t, sentinels, err)
			return
		}
		want, ok := originals[token]
		require.True(t, ok, "accepted a token not sealed here: %q", token)
		require.Equal(t, len(want), len(payload))
		require.Len(t, id, 32)
		require.True(t, exp.After(t0))
	})
}

// referenceDigest is what ParamsDigest promises, built from
// encoding/json alone (which lets a later duplicate key win).
func referenceDigest(params []byte) ([32]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return [32]byte{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return [32]byte{}, errors.New("trailing data")
	}
	if obj, ok := v.(map[string]any); ok {
		delete(obj, "_meta")
		delete(obj, "inputResponses")
		delete(obj, "requestState")
	}
	out, err := json.Marshal(v)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(out), nil
}

// FuzzParamsDigest checks ParamsDigest against encoding/json: it refuses
// invalid JSON, refuses valid JSON only for a duplicate key, and gives
// the digest of encoding/json's re-encoding.
func FuzzParamsDigest(f *testing.F) {
	for _, seed := range []string{
		`{"name":"deploy","arguments":{"env":"prod","n":1.50,"tags":["a",{"b":null}]}}`,
		`{"_meta":{"progressToken":1},"requestState":"x","inputResponses":{}}`,
		`[1,2,{"z":"\u00e9","a":"<&>"}]`, `"\ud800"`, "\"\xff\"", `-0.0e+00`, `{"a":1,"a":2}`,
		`{"a":1}x`, `1 2`, ` {} `, `[`, `{"a":[}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		got, err := ParamsDigest(params)
		if len(params) == 0 {
			require.NoError(t, err)
			require.Equal(t, sha256.Sum256([]byte("null")), got)
			return
		}
		want, refErr := referenceDigest(params)
		valid := json.Valid(params)
		switch {
		case err == nil:
			require.True(t, valid, "accepted invalid JSON %q", params)
			require.NoError(t, refErr)
			require.Equal(t, want, got, "%q", params)
		case valid:
			// A duplicate may also be found before a syntax error.
			require.ErrorIs(t, err, errDuplicateKey, "refused valid JSON %q", params)
		}
	})
}
