package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestRedactDefaultList(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"flat", `{"user":"bob","password":"hunter2"}`, `{"user":"bob","password":"[REDACTED]"}`},
		{"case and separators",
			`{"API_KEY":"a","X-Api-Key":"b","apiKey":"c","api.key":"d","Authorization":"Bearer x","set-cookie":"e"}`,
			`{"API_KEY":"[REDACTED]","X-Api-Key":"[REDACTED]","apiKey":"[REDACTED]","api.key":"[REDACTED]","Authorization":"[REDACTED]","set-cookie":"[REDACTED]"}`},
		{"substrings", `{"client_secret":"s","refreshToken":"t","db_password_hash":"h","aws_secret_access_key":"k"}`,
			`{"client_secret":"[REDACTED]","refreshToken":"[REDACTED]","db_password_hash":"[REDACTED]","aws_secret_access_key":"[REDACTED]"}`},
		{"nested objects", `{"a":{"b":{"c":{"privateKey":"-----BEGIN"}},"d":1}}`, `{"a":{"b":{"c":{"privateKey":"[REDACTED]"}},"d":1}}`},
		{"objects in arrays", `{"items":[{"name":"x","token":"t"},[{"passwd":"p"}],"token"]}`,
			`{"items":[{"name":"x","token":"[REDACTED]"},[{"passwd":"[REDACTED]"}],"token"]}`},
		{"top-level array", `[{"secret":1},{"ok":true}]`, `[{"secret":"[REDACTED]"},{"ok":true}]`},
		{"whole value replaced", `{"credentials":{"user":"u","pass":"p"},"cookies":["a","b"],"token":null,"pin":1234}`,
			`{"credentials":"[REDACTED]","cookies":"[REDACTED]","token":"[REDACTED]","pin":1234}`},
		{"harmless look-alikes kept", `{"sessionTimeout":30,"author":"a","authority":"b","shipping":"c","keyword":"d","footprint":1,"monkey":2,"field_snapshot":3}`,
			`{"sessionTimeout":30,"author":"a","authority":"b","shipping":"c","keyword":"d","footprint":1,"monkey":2,"field_snapshot":3}`},
		{"session credentials", `{"session_id":"s","sessionKey":"k","session":"kept"}`,
			`{"session_id":"[REDACTED]","sessionKey":"[REDACTED]","session":"kept"}`},
		{"token counts too", `{"max_tokens":512}`, `{"max_tokens":"[REDACTED]"}`},
		{"escaped key", `{"pass\u0077ord":"x"}`, `{"password":"[REDACTED]"}`},
		{"duplicate keys kept in order", `{"b":1,"a":2,"b":3,"secret":4,"secret":5}`, `{"b":1,"a":2,"b":3,"secret":"[REDACTED]","secret":"[REDACTED]"}`},
		{"numbers as written", `{"n":1.50e3,"m":-0,"big":123456789012345678901234567890}`, `{"n":1.50e3,"m":-0,"big":123456789012345678901234567890}`},
		{"space dropped", " {\n\t\"a\" : [ 1 , 2 ] ,\"b\":{ } } ", `{"a":[1,2],"b":{}}`},
		{"control characters escaped", `{"q":"a\u0001b\nc\u0000\"\\"}`, `{"q":"a\u0001b\nc\u0000\"\\"}`},
		{"no HTML escaping", `{"q":"<b>&amp;` + "\u2028" + `"}`, `{"q":"<b>&amp;` + "\u2028" + `"}`},
		{"no HTML escaping, rewritten", `{"q":"<b>&amp;` + "\u2028" + `","token":1}`, `{"q":"<b>&amp;\u2028","token":"[REDACTED]"}`},
		{"escapes read as characters", `{"pass\nword":"x","a\"b":"\u0041"}`, `{"pass\nword":"[REDACTED]","a\"b":"A"}`},
		{"escapes kept", `{"a\nb":"x\ty\/"}`, `{"a\nb":"x\ty\/"}`},
		{"unicode escape in a key", `{"to\u006ben":"x"}`, `{"token":"[REDACTED]"}`},
		{"invalid UTF-8 replaced", "{\"q\":\"a\xffb\"}", `{"q":"a` + "\ufffd" + `b"}`},
		{"scalars", `"token"`, `"token"`},
		{"null", `null`, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRedactor(mustMatcher(t, nil))
			require.NoError(t, r.rewrite([]byte(tc.in)))
			require.Equal(t, tc.want, r.out.String())
			require.True(t, json.Valid(r.out.Bytes()))
		})
	}
}

func TestRedactCustomListReplacesDefault(t *testing.T) {
	r := newRedactor(mustMatcher(t, []string{"SSN", "date_of_birth"}))
	require.NoError(t, r.rewrite([]byte(`{"customer_ssn":"1","DateOfBirth":"2","password":"p","nested":[{"Ssn":3}]}`)))
	require.Equal(t, `{"customer_ssn":"[REDACTED]","DateOfBirth":"[REDACTED]","password":"p","nested":[{"Ssn":"[REDACTED]"}]}`, r.out.String())
}

func TestRedactInvalid(t *testing.T) {
	for _, in := range []string{``, ` `, `{`, `{"a":}`, `{"a" 1}`, `[1,]`, `1 2`, `{"a":1}{}`, `{'a':1}`, `"\x"`, `nul`} {
		r := newRedactor(mustMatcher(t, nil))
		require.Error(t, r.rewrite([]byte(in)), "%q", in)
		got := r.arguments([]byte(in), len(in))
		require.True(t, json.Valid(got), "%q", in)
		require.Equal(t, fmt.Sprintf(`{"_invalid":true,"bytes":%d}`, len(in)), string(got))
		if len(in) > 4 {
			require.NotContains(t, string(got), in, "raw bytes are never written")
		}
	}
}

func TestNewMatcherRejectsEmptyPattern(t *testing.T) {
	_, err := newMatcher([]string{"token", "_-"})
	require.ErrorContains(t, err, `"_-"`)
}

func TestDefaultRedactIsACopy(t *testing.T) {
	l := DefaultRedact()
	l[0] = "changed"
	require.NotEqual(t, "changed", DefaultRedact()[0])
}

func mustMatcher(t testing.TB, keys []string) matcher {
	t.Helper()
	m, err := newMatcher(keys)
	require.NoError(t, err)
	return m
}

// FuzzRedact checks the rewrite against encoding/json: the output is valid
// UTF-8 JSON, and decodes to what the input decodes to with the values of
// matching keys replaced.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		`{"password":"x","a":[{"token":1},{"b":{"Api-Key":null}}]}`,
		`{"a":1,"a":{"secret":2}}`, `[1,"x",true,null,{"k":-1.5e-3}]`, `"\u0000\ud800"`,
		`{"q":"<>&` + "\u2028\xff" + `"}`, `{"pass\u0077ord":"x"}`, `{"pass\nword":"x"}`, `{"sessionTimeout":1}`, `{`, `1 2`,
	} {
		f.Add([]byte(s))
	}
	m := mustMatcher(f, nil)
	f.Fuzz(func(t *testing.T, in []byte) {
		r := newRedactor(m)
		err := r.rewrite(in)
		if !json.Valid(in) {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		out := r.out.Bytes()
		require.True(t, json.Valid(out), "%s", out)
		require.True(t, utf8.Valid(out), "%q", out)
		require.Equal(t, oracle(m, decodeAny(t, in)), decodeAny(t, out))
	})
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

// oracle redacts a decoded document.
func oracle(m matcher, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if m.match(k) {
				v[k] = Mark
			} else {
				v[k] = oracle(m, x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = oracle(m, x)
		}
	}
	return v
}

func BenchmarkRedact(b *testing.B) {
	body := strings.Repeat(`Steps to reproduce:\n1. run it\n`, 20)
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", MaxArguments/45-1)
	for _, bc := range []struct{ name, args string }{
		{"plain", `{"owner":"mcp-gateway","repo":"mcp-gateway","title":"Audit log","labels":["a","b"],"body":"` + body + `","per_page":30}`},
		{"matching", `{"owner":"mcp-gateway","repo":"mcp-gateway","title":"Audit log","labels":["a","b"],"body":"` + body + `","auth":{"token":"ghp_0123456789"}}`},
		{"plain16K", `{"data":"` + text + `"}`},
		{"matching16K", `{"token":1,"data":"` + text + `"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := []byte(bc.args)
			r := newRedactor(mustMatcher(b, nil))
			b.ReportAllocs()
			b.SetBytes(int64(len(args)))
			for b.Loop() {
				r.arguments(args, len(args))
			}
		})
	}
}
