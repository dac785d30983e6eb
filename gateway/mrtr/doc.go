// Package mrtr seals the requestState of MCP 2026-07-28 multi
// round-trip requests. A tools/call (or prompts/get, resources/read) that
// needs input from the client answers resultType "input_required" with
// inputRequests and a requestState; the client retries with a new id, the
// same method and params, inputResponses and the requestState echoed. The
// gateway keeps its continuation in that requestState, so any replica can
// resume it, and the client must be able neither to read it nor to change
// it, nor to use it for another principal, another request, after it
// expires, or twice.
//
// Sealer does all but the last: Seal encrypts a payload with AES-256-GCM,
// bound (inside the plaintext) to a Binding, the principal, the method
// and ParamsDigest of the params, and to an expiry; Open checks and
// decrypts it and names each failure with its own sentinel error. Single
// use is the caller's: after Open succeeds it marks the token's id used
// until the token expires (sessions/pending.Store.Consume) and refuses a
// replay.
//
// # Token
//
// A token is base64url text without padding of
//
//	version (1 byte, 1) | id (16 random bytes) | ciphertext | GCM tag (16 bytes)
//
// and the plaintext is
//
//	expiry (int64 ms since the Unix epoch, big endian) | params digest (32 bytes) |
//	uvarint len | method | uvarint len | principal | payload
//
// Each token has a key and nonce of its own, HKDF-SHA256 of the sealer's
// key with the id in the info, so that the 96-bit GCM nonce never repeats
// under one key however many tokens a deployment seals with its
// long-lived key (random nonces under one key are good for about 2^32
// messages). The header (version and id) is the additional data. Open
// reads nothing but the base64url alphabet, and strictly, so one token
// has one spelling, and refuses text over MaxTokenLen before decoding it.
//
// The package imports no project package: only the standard library.
package mrtr
