package auth

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
)

// A token verified once is answered from memory (the same principal)
// until it expires or its key leaves the key set; a token differing in
// one byte is verified on its own and refused.
func TestVerifiedTokensAreRemembered(t *testing.T) {
	a, b := rsaKey(0, "a", jwt.SigningMethodRS256), rsaKey(1, "b", jwt.SigningMethodRS256)
	is := newIssuer(t, a)
	v := is.verifier(t)
	tok := a.sign(t, is.claims())
	p1, err := v.Authenticate(request("Bearer " + tok))
	require.NoError(t, err)
	p2, err := v.Authenticate(request("Bearer " + tok))
	require.NoError(t, err)
	require.Same(t, p1, p2, "the second request is answered from the cache")

	forged := tok[:len(tok)-2] + "AA"
	if forged == tok {
		forged = tok[:len(tok)-2] + "BB"
	}
	_, err = v.Authenticate(request("Bearer " + forged))
	require.Error(t, err)

	// An entry ends with its token.
	short := is.claims()
	short["exp"] = time.Now().Add(-time.Second).Unix() // within the skew: accepted
	stok := a.sign(t, short)
	_, err = v.Authenticate(request("Bearer " + stok))
	require.NoError(t, err)
	p, _ := v.cache.get(stok, time.Now().Add(time.Minute))
	require.Nil(t, p, "past exp + skew the cache does not answer")

	// The issuer withdraws key a: its cached tokens stop at the refresh
	// a token with the new kid triggers.
	is.setKeys(t, b)
	_, err = v.Authenticate(request("Bearer " + b.sign(t, is.claims())))
	require.NoError(t, err)
	_, err = v.Authenticate(request("Bearer " + tok))
	require.Equal(t, "the token's signing key is unknown", failureOf(t, err).Description)
}

// The cache stays bounded under a flood of distinct valid tokens.
func TestTokenCacheIsBounded(t *testing.T) {
	var c tokenCache
	now := time.Now()
	for i := range 3 * cacheEntries {
		c.put(string(rune(i))+"tok", "", nil, now.Add(time.Hour), now)
	}
	require.LessOrEqual(t, len(c.m), cacheEntries)
}
