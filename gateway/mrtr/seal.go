package mrtr

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"
)

// The errors of Open, returned as they are (never wrapped), so each
// message is short and safe to show a client.
var (
	// ErrMalformed: not a token of ours, badly encoded, too long, or of
	// another version.
	ErrMalformed = errors.New("requestState is malformed")
	// ErrTampered: authentication failed; the token was modified or
	// sealed with another key.
	ErrTampered = errors.New("requestState failed verification")
	// ErrExpired: the token's expiry has passed.
	ErrExpired = errors.New("requestState has expired")
	// ErrForeignPrincipal: the token was sealed for another principal.
	ErrForeignPrincipal = errors.New("requestState belongs to another principal")
	// ErrOtherRequest: the token was sealed for another method or other
	// params.
	ErrOtherRequest = errors.New("requestState belongs to another request")
)

// MaxTokenLen bounds a token's text: Open refuses a longer one before
// decoding it, and Seal refuses a payload whose token would be longer.
const MaxTokenLen = 96 << 10

// KeyLen is the length of a Sealer's key.
const KeyLen = 32

const (
	version  = 1
	idLen    = 16
	tagLen   = 16
	nonceLen = 12
	header   = 1 + idLen
	// fixedPlain is the plaintext before the method: expiry and digest.
	fixedPlain = 8 + sha256.Size
	// info labels the per-token key derivation; the id follows it.
	info = "mcp-gateway mrtr requestState v1 "
)

// Binding is what a token is good for.
type Binding struct {
	// Principal is the caller's subject ("" anonymous).
	Principal string
	// Method is the request's method: "tools/call", "prompts/get",
	// "resources/read".
	Method string
	// Params is ParamsDigest of the request's params.
	Params [32]byte
}

// Sealer seals and opens tokens under one key. It is safe for concurrent
// use.
type Sealer struct {
	prk []byte // HKDF-Extract of the key
	// random, when set, replaces crypto/rand for ids: tests use it to
	// seal the same tokens on every run.
	random io.Reader
}

// SameKey reports whether s and o seal with the same key.
func (s *Sealer) SameKey(o *Sealer) bool {
	return o != nil && subtle.ConstantTimeCompare(s.prk, o.prk) == 1
}

// NewSealer returns a Sealer of a KeyLen-byte key (any other length is
// an error). Replicas that share the key open each other's tokens.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != KeyLen {
		return nil, fmt.Errorf("mrtr: key of %d bytes, want %d", len(key), KeyLen)
	}
	prk, err := hkdf.Extract(sha256.New, key, nil)
	if err != nil {
		return nil, fmt.Errorf("mrtr: %w", err)
	}
	return &Sealer{prk: prk}, nil
}

// aead returns the cipher and nonce of the token with id.
func (s *Sealer) aead(id []byte) (cipher.AEAD, []byte, error) {
	km, err := hkdf.Expand(sha256.New, s.prk, info+string(id), KeyLen+nonceLen)
	if err != nil {
		return nil, nil, err
	}
	block, err := aes.NewCipher(km[:KeyLen])
	if err != nil {
		return nil, nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, nil, err
	}
	return gcm, km[KeyLen:], nil
}

var enc = base64.RawURLEncoding.Strict()

// Seal encrypts payload bound to b, expiring at expires (kept to the
// millisecond, rounded down). It returns the token, URL-safe text, and
// its id, a random 128-bit identifier (32 hex digits) for the caller's
// single-use mark. An empty method, a zero expiry or a token longer than
// MaxTokenLen is an error.
func (s *Sealer) Seal(b Binding, payload []byte, expires time.Time) (token, id string, err error) {
	if b.Method == "" {
		return "", "", errors.New("mrtr: seal: empty method")
	}
	if expires.IsZero() {
		return "", "", errors.New("mrtr: seal: no expiry")
	}
	plainLen := fixedPlain + uvarintLen(len(b.Method)) + len(b.Method) +
		uvarintLen(len(b.Principal)) + len(b.Principal) + len(payload)
	rawLen := header + plainLen + tagLen
	if enc.EncodedLen(rawLen) > MaxTokenLen {
		return "", "", fmt.Errorf("mrtr: seal: a token of %d bytes is longer than %d", enc.EncodedLen(rawLen), MaxTokenLen)
	}

	raw := make([]byte, header, rawLen)
	raw[0] = version
	random := s.random
	if random == nil {
		random = rand.Reader
	}
	if _, err := io.ReadFull(random, raw[1:header]); err != nil {
		return "", "", fmt.Errorf("mrtr: seal: %w", err)
	}
	plain := make([]byte, 0, plainLen)
	plain = binary.BigEndian.AppendUint64(plain, uint64(expires.UnixMilli()))
	plain = append(plain, b.Params[:]...)
	plain = binary.AppendUvarint(plain, uint64(len(b.Method)))
	plain = append(plain, b.Method...)
	plain = binary.AppendUvarint(plain, uint64(len(b.Principal)))
	plain = append(plain, b.Principal...)
	plain = append(plain, payload...)

	gcm, nonce, err := s.aead(raw[1:header])
	if err != nil {
		return "", "", fmt.Errorf("mrtr: seal: %w", err)
	}
	raw = gcm.Seal(raw, nonce, plain, raw[:header])
	return enc.EncodeToString(raw), hex.EncodeToString(raw[1:header]), nil
}

func uvarintLen(n int) int {
	var buf [binary.MaxVarintLen64]byte
	return binary.PutUvarint(buf[:], uint64(n))
}

// Open checks token against b at now and returns its payload, id and
// expiry. Its errors are exactly the package's sentinels: ErrMalformed,
// then ErrTampered, then, after decryption, ErrForeignPrincipal,
// ErrOtherRequest and ErrExpired in that order (a token presented for
// another principal or request is refused as such whatever its age).
// Open does not consume the token; see the package comment.
func (s *Sealer) Open(b Binding, token string, now time.Time) (payload []byte, id string, expires time.Time, err error) {
	if len(token) > MaxTokenLen || !isBase64URL(token) {
		return nil, "", time.Time{}, ErrMalformed
	}
	raw, err := enc.DecodeString(token)
	if err != nil || len(raw) < header+tagLen || raw[0] != version {
		return nil, "", time.Time{}, ErrMalformed
	}
	gcm, nonce, err := s.aead(raw[1:header])
	if err != nil {
		return nil, "", time.Time{}, ErrTampered
	}
	plain, err := gcm.Open(nil, nonce, raw[header:], raw[:header])
	if err != nil {
		return nil, "", time.Time{}, ErrTampered
	}
	p, ok := parsePlain(plain)
	if !ok {
		return nil, "", time.Time{}, ErrMalformed
	}
	if subtle.ConstantTimeCompare([]byte(p.principal), []byte(b.Principal)) != 1 {
		return nil, "", time.Time{}, ErrForeignPrincipal
	}
	sameMethod := subtle.ConstantTimeCompare([]byte(p.method), []byte(b.Method))
	sameParams := subtle.ConstantTimeCompare(p.params, b.Params[:])
	if sameMethod&sameParams != 1 {
		return nil, "", time.Time{}, ErrOtherRequest
	}
	if !now.Before(p.expires) {
		return nil, "", time.Time{}, ErrExpired
	}
	return p.payload, hex.EncodeToString(raw[1:header]), p.expires, nil
}

// isBase64URL reports whether s holds only the base64url alphabet: the
// decoder would skip CR and LF, giving one token many spellings.
func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

type plaintext struct {
	expires   time.Time
	params    []byte
	method    string
	principal string
	payload   []byte
}

// parsePlain splits a decrypted plaintext into its fields.
func parsePlain(b []byte) (plaintext, bool) {
	var p plaintext
	if len(b) < fixedPlain {
		return p, false
	}
	p.expires = time.UnixMilli(int64(binary.BigEndian.Uint64(b)))
	p.params = b[8:fixedPlain]
	rest := b[fixedPlain:]
	field := func() (string, bool) {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return "", false
		}
		f := string(rest[w : w+int(n)])
		rest = rest[w+int(n):]
		return f, true
	}
	var ok bool
	if p.method, ok = field(); !ok {
		return p, false
	}
	if p.principal, ok = field(); !ok {
		return p, false
	}
	p.payload = rest
	return p, true
}
