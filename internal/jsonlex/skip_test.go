package jsonlex

import (
	"bytes"
	"encoding/json"
	"testing"
)

// SkipValue accepts what encoding/json accepts as one value and ends where
// the value does, whatever follows it.
func checkSkipValue(t *testing.T, in []byte) {
	t.Helper()
	v := bytes.TrimLeft(in, " \t\r\n")
	end, err := SkipValue(v, 0)
	valid := json.Valid(v)
	if err == nil {
		if !json.Valid(v[:end]) {
			t.Fatalf("SkipValue(%q) = %d: %q is not JSON", v, end, v[:end])
		}
		if valid && len(bytes.TrimRight(v[end:], " \t\r\n")) != 0 {
			t.Fatalf("SkipValue(%q) = %d: stops inside the value", v, end)
		}
	} else if valid {
		t.Fatalf("SkipValue(%q): %v, but encoding/json accepts it", v, err)
	}
	if len(v) > 0 && v[0] == '"' {
		send, serr := SkipString(v, 0)
		if send != end || (serr == nil) != (err == nil) {
			t.Fatalf("SkipString(%q) = %d, %v; SkipValue = %d, %v", v, send, serr, end, err)
		}
	}
}

func TestSkipValue(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `"x"`, `"a\"b\\"`, `1`, `-0.5e+3`, `true`, `null`, ` {"a":[1,{"b":"}"}]} `,
		`{"a":1},{"b":2}`, `"x" y`, `12]`, `{`, `{"a"}`, `[1,]`, `"\x"`, `"` + "\x01" + `"`, `01`, `tru`,
	} {
		checkSkipValue(t, []byte(in))
	}
	if end, err := SkipValue([]byte(`{"a":[1,2]} , 3`), 0); err != nil || end != 11 {
		t.Fatalf("SkipValue = %d, %v; want 11", end, err)
	}
	if _, err := SkipValue([]byte(`[1,2`), 0); err == nil {
		t.Fatal("SkipValue accepts an unterminated array")
	}
}

func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,null,"x\u0041"]}`, `"s" 1`, `[{"a":{}}]]`, `-1e5,`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkSkipValue(t, in) })
}
