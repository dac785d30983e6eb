package jsonlex

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var scanCorpus = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a" : [1, 2, {"b":null}] , "c":"d"}`, `{"a":1,"a":2}`,
	`{"k\u0041y":true,"x\"y":"\\"}`, `{"n":-0.5e+10,"m":0,"o":1E3,"p":-12}`,
	`{"s":"\u00e9\n\t\/","e":"","u":"\uD83D\uDE00"}`, "{\"bad\xffutf8\":\"\xfe\"}",
	`[1,2]`, `"str"`, `12`, `true`, `null`, `  false  `,
	``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{a:1}`, `{"a":01}`,
	`{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":tru}`, `{"a":nul}`, `{"a":"\x"}`,
	`{"a":"\u12"}`, "{\"a\":\"tab\there\"}", `{"a":1} x`, `{"a":1}{}`, `[1,]`, `[,1]`, `{"a":[}`,
	`{"a":"unterminated}`, `{"a":"\`, `{"a":1}` + "\n", `{"a":+1}`, `{"a":Infinity}`, `{"a":NaN}`,
	strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001),
	`{"a":` + strings.Repeat(`[`, 9990) + strings.Repeat(`]`, 9990) + `}`,
}

// checkScanAgainstStdlib is the property ScanObject must keep: it accepts
// exactly what encoding/json accepts, and the members it reports are what
// encoding/json decodes into a map of raw messages (duplicates: last wins).
func checkScanAgainstStdlib(t *testing.T, in []byte) {
	got := map[string]json.RawMessage{}
	err := ScanObject(in, func(k, v []byte) error {
		got[string(k)] = append(json.RawMessage(nil), v...)
		return nil
	})
	valid := json.Valid(in)
	if !valid {
		var se *SyntaxError
		require.ErrorAs(t, err, &se, "input %q", in)
		return
	}
	if lead := bytes.TrimLeft(in, " \t\r\n"); lead[0] != '{' {
		require.ErrorIs(t, err, ErrNotObject, "input %q", in)
		return
	}
	var want map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(in, &want))
	require.NoError(t, err, "input %q", in)
	// encoding/json turns each invalid UTF-8 byte of a key into U+FFFD;
	// ScanObject hands keys over as they are.
	norm := map[string]json.RawMessage{}
	for k, v := range got {
		var s string
		b, _ := json.Marshal(k)
		require.NoError(t, json.Unmarshal(b, &s))
		norm[s] = v
	}
	require.Equal(t, len(want), len(norm), "input %q", in)
	for k, v := range want {
		assert.Equal(t, string(v), string(norm[k]), "input %q key %q", in, k)
	}
}

func TestScanObjectMatchesEncodingJSON(t *testing.T) {
	for _, in := range scanCorpus {
		checkScanAgainstStdlib(t, []byte(in))
	}
	// Strings are scanned eight bytes at a time: put each special byte at
	// every offset of a long string.
	for _, special := range []string{`"`, `\`, `\"`, `\u00e9`, `\x`, "\x00", "\x1f", "\n", "\x7f", "é", "\xff", ` `} {
		for pos := 0; pos < 20; pos++ {
			str := strings.Repeat("a", pos) + special + strings.Repeat("b", 20-pos)
			checkScanAgainstStdlib(t, []byte(`{"k":"`+str+`","v":1}`))
			checkScanAgainstStdlib(t, []byte(`{"`+str+`":"`+str+`"}`))
		}
	}
}

func FuzzScanObject(f *testing.F) {
	for _, in := range scanCorpus {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkScanAgainstStdlib(t, in) })
}

func TestScanObjectKeysAreExactAndOrdered(t *testing.T) {
	var keys []string
	require.NoError(t, ScanObject([]byte(`{"Name":1,"name":2,"n\u0061me":3}`), func(k, v []byte) error {
		keys = append(keys, string(k)+"="+string(v))
		return nil
	}))
	assert.Equal(t, []string{"Name=1", "name=2", "name=3"}, keys)
}

func TestScanObjectStopsOnCallbackError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := ScanObject([]byte(`{"a":1,"b":2,"c":3}`), func(k, v []byte) error {
		n++
		if bytes.Equal(k, []byte("b")) {
			return stop
		}
		return nil
	})
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 2, n)
}

func TestScanObjectSyntaxErrorOffset(t *testing.T) {
	err := ScanObject([]byte(`{"a": 1, "b": x}`), func(k, v []byte) error { return nil })
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 14, se.Offset)
	assert.Contains(t, se.Error(), `found 'x'`)
}

func TestJSONString(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string
		ok   bool
	}{
		{`"plain"`, "plain", true},
		{`"a\"b\u00e9"`, "a\"bé", true},
		{`""`, "", true},
		{`12`, "", false},
		{`null`, "", false},
		{`{"a":1}`, "", false},
	} {
		got, ok := String([]byte(tc.raw))
		assert.Equal(t, tc.ok, ok, tc.raw)
		assert.Equal(t, tc.want, got, tc.raw)
		assert.Equal(t, tc.ok, StringEquals([]byte(tc.raw), tc.want), tc.raw)
	}
	assert.True(t, StringEquals([]byte(`"2\u002e0"`), "2.0"))
	// As encoding/json: invalid UTF-8 becomes U+FFFD; a string must be closed.
	got, ok := String([]byte("\"a\xffb\""))
	assert.True(t, ok)
	assert.Equal(t, "a\uFFFDb", got)
	_, ok = String([]byte(`"abc`))
	assert.False(t, ok)
	assert.False(t, StringEquals([]byte(`"2.1"`), "2.0"))
}
