package mrtr

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sentinels are every error Open may return.
var sentinels = []error{ErrMalformed, ErrTampered, ErrExpired, ErrForeignPrincipal, ErrOtherRequest}

// testKey is a fixed key, so that fuzz inputs saved from one run still
// mean the same in the next.
func testKey(b byte) []byte {
	k := make([]byte, KeyLen)
	for i := range k {
		k[i] = b + byte(i)
	}
	return k
}

// newTestSealer returns a Sealer of testKey(b) whose ids come from a
// seeded stream: it seals the same tokens on every run.
func newTestSealer(t testing.TB, b byte) *Sealer {
	t.Helper()
	s, err := NewSealer(testKey(b))
	require.NoError(t, err)
	s.random = rand.NewChaCha8([32]byte{b})
	return s
}

func digest(t testing.TB, params string) [32]byte {
	t.Helper()
	d, err := ParamsDigest(json.RawMessage(params))
	require.NoError(t, err)
	return d
}

var (
	t0      = time.UnixMilli(1_800_000_000_000)
	expires = t0.Add(5 * time.Minute)
)

func binding(t testing.TB) Binding {
	return Binding{Principal: "alice", Method: "tools/call", Params: digest(t, `{"name":"deploy","arguments":{"env":"prod"}}`)}
}

func TestNewSealerNeedsA32ByteKey(t *testing.T) {
	for _, n := range []int{0, 1, 16, 24, 31, 33, 64} {
		_, err := NewSealer(make([]byte, n))
		require.Error(t, err, "%d bytes", n)
	}
	_, err := NewSealer(make([]byte, 32))
	require.NoError(t, err)
}

func TestSealOpenRoundTrip(t *testing.T) {
	s, err := NewSealer(testKey(1))
	require.NoError(t, err)
	other, err := NewSealer(testKey(1))
	require.NoError(t, err)
	b := binding(t)
	for _, tc := range []struct {
		name    string
		b       Binding
		payload []byte
	}{
		{"small", b, []byte(`{"step":2,"tool":"deploy"}`)},
		{"empty payload", b, nil},
		{"binary payload", b, []byte{0, 1, 2, 0xff, 0xfe}},
		{"anonymous", Binding{Method: "prompts/get", Params: b.Params}, []byte("x")},
		{"long principal", Binding{Principal: strings.Repeat("p", 300), Method: "resources/read", Params: b.Params}, []byte("x")},
		{"large payload", b, bytes.Repeat([]byte("z"), 60<<10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token, id, err := s.Seal(tc.b, tc.payload, expires.Add(123*time.Microsecond))
			require.NoError(t, err)
			require.Regexp(t, `^[A-Za-z0-9_-]+$`, token, "URL-safe, no padding")
			require.LessOrEqual(t, len(token), MaxTokenLen)
			require.Regexp(t, `^[0-9a-f]{32}$`, id, "128 bits")

			payload, gotID, gotExp, err := other.Open(tc.b, token, t0)
			require.NoError(t, err, "another Sealer of the same key opens it")
			require.Equal(t, id, gotID)
			require.True(t, expires.Equal(gotExp), "kept to the millisecond: %v", gotExp)
			require.Equal(t, len(tc.payload), len(payload))
			if len(tc.payload) > 0 {
				require.Equal(t, tc.payload, payload)
			}
		})
	}
}

func TestSealGivesEachTokenItsOwnID(t *testing.T) {
	s, err := NewSealer(testKey(1))
	require.NoError(t, err)
	b := binding(t)
	tokens, ids := map[string]bool{}, map[string]bool{}
	for range 100 {
		token, id, err := s.Seal(b, []byte("same"), expires)
		require.NoError(t, err)
		require.False(t, tokens[token], "a token repeated")
		require.False(t, ids[id], "an id repeated")
		tokens[token], ids[id] = true, true
		_, gotID, _, err := s.Open(b, token, t0)
		require.NoError(t, err)
		require.Equal(t, id, gotID)
	}
}

func TestSealRefuses(t *testing.T) {
	s, err := NewSealer(testKey(1))
	require.NoError(t, err)
	b := binding(t)
	_, _, err = s.Seal(Binding{Principal: "alice", Params: b.Params}, nil, expires)
	require.ErrorContains(t, err, "empty method")
	_, _, err = s.Seal(b, nil, time.Time{})
	require.ErrorContains(t, err, "no expiry")
	_, _, err = s.Seal(b, make([]byte, MaxTokenLen), expires)
	require.ErrorContains(t, err, "longer than")

	// The longest payload that fits seals and opens.
	fixed := header + fixedPlain + 1 + len(b.Method) + 1 + len(b.Principal) + tagLen
	most := MaxTokenLen*3/4 - fixed
	token, _, err := s.Seal(b, make([]byte, most), expires)
	require.NoError(t, err)
	require.LessOrEqual(t, len(token), MaxTokenLen)
	require.Greater(t, len(token), MaxTokenLen-4)
	_, _, _, err = s.Open(b, token, t0)
	require.NoError(t, err)
	_, _, err = s.Seal(b, make([]byte, most+1), expires)
	require.Error(t, err)
}

// openErr opens token and returns the error, checking that it is one of
// the sentinels as it is, with a client-safe message.
func openErr(t *testing.T, s *Sealer, b Binding, token string, now time.Time) error {
	t.Helper()
	payload, id, exp, err := s.Open(b, token, now)
	if err == nil {
		return nil
	}
	require.Contains(t, sentinels, err, "not wrapped: %v", err)
	require.Nil(t, payload)
	require.Empty(t, id)
	require.True(t, exp.IsZero())
	require.NotContains(t, err.Error(), "mrtr")
	require.Less(t, len(err.Error()), 60)
	return err
}

func TestOpenRefuses(t *testing.T) {
	s := newTestSealer(t, 1)
	b := binding(t)
	token, _, err := s.Seal(b, []byte(`{"continuation":"abc"}`), expires)
	require.NoError(t, err)
	require.NoError(t, openErr(t, s, b, token, t0))
	raw, err := enc.DecodeString(token)
	require.NoError(t, err)
	reencode := func(raw []byte) string { return enc.EncodeToString(raw) }

	t.Run("every flipped bit of the token's bytes", func(t *testing.T) {
		// Version, id, ciphertext (expiry, digest, method, principal,
		// payload) and tag: each byte, each bit.
		for i := range raw {
			for bit := range 8 {
				m := bytes.Clone(raw)
				m[i] ^= 1 << bit
				want := ErrTampered
				if i == 0 {
					want = ErrMalformed
				}
				require.Equal(t, want, openErr(t, s, b, reencode(m), t0), "byte %d bit %d", i, bit)
			}
		}
	})

	t.Run("every changed character", func(t *testing.T) {
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		for i := range token {
			for _, c := range []byte{alphabet[(strings.IndexByte(alphabet, token[i])+1)%64], alphabet[(strings.IndexByte(alphabet, token[i])+63)%64]} {
				m := []byte(token)
				m[i] = c
				require.Error(t, openErr(t, s, b, string(m), t0), "char %d", i)
			}
		}
	})

	t.Run("truncated or extended", func(t *testing.T) {
		for n := range len(token) {
			err := openErr(t, s, b, token[:n], t0)
			require.True(t, errors.Is(err, ErrMalformed) || errors.Is(err, ErrTampered), "length %d: %v", n, err)
		}
		for _, tail := range []string{"A", "AA", "AAA", "AAAA", "="} {
			require.Error(t, openErr(t, s, b, token+tail, t0), "+%q", tail)
		}
		require.Equal(t, ErrTampered, openErr(t, s, b, reencode(raw[:len(raw)-1]), t0), "a byte short")
		require.Equal(t, ErrTampered, openErr(t, s, b, reencode(append(bytes.Clone(raw), 0)), t0), "a byte long")
		require.Equal(t, ErrMalformed, openErr(t, s, b, reencode(raw[:header+tagLen-1]), t0), "shorter than a header and tag")
	})

	t.Run("another spelling of the same bytes", func(t *testing.T) {
		for what, m := range map[string]string{
			"a line break":      token[:10] + "\n" + token[10:],
			"a carriage return": token[:10] + "\r" + token[10:],
			"padding":           token + strings.Repeat("=", (4-len(token)%4)%4) + "=",
			"standard alphabet": strings.NewReplacer("-", "+", "_", "/").Replace(token) + "+",
			"a space":           " " + token,
		} {
			require.Equal(t, ErrMalformed, openErr(t, s, b, m, t0), what)
		}
		for n := range 3 {
			partial, _, err := s.Seal(b, make([]byte, n), expires)
			require.NoError(t, err)
			if len(partial)%4 == 0 {
				continue
			}
			require.NoError(t, openErr(t, s, b, partial, t0))
			require.Equal(t, ErrMalformed, openErr(t, s, b, flipTrailingBits(partial), t0), "unused trailing bits, %d", len(partial)%4)
		}
	})

	t.Run("not a token", func(t *testing.T) {
		for _, m := range []string{"", "x", "not a token", "eyJhbGciOiJIUzI1NiJ9", strings.Repeat("A", MaxTokenLen+1), "ünï"} {
			require.Equal(t, ErrMalformed, openErr(t, s, b, m, t0), "%.40q", m)
		}
	})

	t.Run("another version", func(t *testing.T) {
		for _, v := range []byte{0, 2, 0xff} {
			m := bytes.Clone(raw)
			m[0] = v
			require.Equal(t, ErrMalformed, openErr(t, s, b, reencode(m), t0))
		}
	})

	t.Run("another key", func(t *testing.T) {
		for _, k := range []byte{2, 3} {
			other, err := NewSealer(testKey(k))
			require.NoError(t, err)
			require.Equal(t, ErrTampered, openErr(t, other, b, token, t0))
		}
	})

	t.Run("expired", func(t *testing.T) {
		require.NoError(t, openErr(t, s, b, token, expires.Add(-time.Millisecond)))
		require.Equal(t, ErrExpired, openErr(t, s, b, token, expires), "at its expiry")
		require.Equal(t, ErrExpired, openErr(t, s, b, token, expires.Add(time.Hour)))
	})

	t.Run("another principal", func(t *testing.T) {
		for _, p := range []string{"", "bob", "alice ", "Alice", "alic", "alice\x00"} {
			o := b
			o.Principal = p
			require.Equal(t, ErrForeignPrincipal, openErr(t, s, o, token, t0), "%q", p)
		}
		anon, _, err := s.Seal(Binding{Method: b.Method, Params: b.Params}, nil, expires)
		require.NoError(t, err)
		require.NoError(t, openErr(t, s, Binding{Method: b.Method, Params: b.Params}, anon, t0))
		require.Equal(t, ErrForeignPrincipal, openErr(t, s, b, anon, t0), "an anonymous token is no one else's")
		require.Equal(t, ErrForeignPrincipal, openErr(t, s, b.with("bob"), token, expires.Add(time.Hour)), "before its age")
	})

	t.Run("another request", func(t *testing.T) {
		for _, m := range []string{"prompts/get", "resources/read", "tools/cal", ""} {
			o := b
			o.Method = m
			require.Equal(t, ErrOtherRequest, openErr(t, s, o, token, t0), "%q", m)
		}
		for _, p := range []string{
			`{"name":"deploy","arguments":{"env":"staging"}}`,
			`{"name":"deploy"}`,
			`{"name":"deploy","arguments":{"env":"prod","force":true}}`,
			`{"name":"deploy","arguments":{"env":"prod"},"extra":1}`,
		} {
			o := b
			o.Params = digest(t, p)
			require.Equal(t, ErrOtherRequest, openErr(t, s, o, token, t0), "%s", p)
			require.Equal(t, ErrOtherRequest, openErr(t, s, o, token, expires.Add(time.Hour)), "before its age")
		}
	})

	t.Run("the retry's params open it", func(t *testing.T) {
		o := b
		o.Params = digest(t, `{ "requestState": "`+token+`", "arguments": {"env": "prod"},
			"inputResponses": {"confirm": {"action": "accept"}}, "_meta": {"progressToken": 7}, "name": "deploy" }`)
		require.NoError(t, openErr(t, s, o, token, t0))
	})
}

func (b Binding) with(principal string) Binding {
	b.Principal = principal
	return b
}

// flipTrailingBits changes a bit of the last character that carries no
// data (token's length is not a multiple of 4), which a lax decoder would
// ignore.
func flipTrailingBits(token string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, token[len(token)-1])
	return token[:len(token)-1] + string(alphabet[last^1])
}

func TestSealerIsSafeForConcurrentUse(t *testing.T) {
	s, err := NewSealer(testKey(1))
	require.NoError(t, err)
	b := binding(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				payload := []byte{byte(w), byte(i)}
				token, _, err := s.Seal(b, payload, expires)
				if err == nil {
					var got []byte
					got, _, _, err = s.Open(b, token, t0)
					if err == nil && !bytes.Equal(got, payload) {
						err = errors.New("payload mixed up")
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
