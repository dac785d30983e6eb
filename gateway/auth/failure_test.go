package auth

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWWWAuthenticate(t *testing.T) {
	const md = "https://gw.example/.well-known/oauth-protected-resource/mcp"
	for _, tc := range []struct {
		name string
		f    Failure
		want string
	}{
		{"no credentials", Failure{Status: 401, Description: "the request has no bearer token", ResourceMetadata: md},
			`Bearer resource_metadata="` + md + `"`},
		{"no credentials, no metadata", Failure{Status: 401, Description: "x"}, `Bearer`},
		{"invalid token", Failure{Status: 401, Code: CodeInvalidToken, Description: "the token has expired", ResourceMetadata: md},
			`Bearer error="invalid_token", error_description="the token has expired", resource_metadata="` + md + `"`},
		{"invalid request, no metadata", Failure{Status: 400, Code: CodeInvalidRequest, Description: "bad"},
			`Bearer error="invalid_request", error_description="bad"`},
		{"quote and backslash escaped", Failure{Code: CodeInvalidToken, Description: `say "hi" \o/`},
			`Bearer error="invalid_token", error_description="say \"hi\" \\o/"`},
		{"control characters replaced", Failure{Code: CodeInvalidToken, Description: "a\r\nb\tc\x00d\x7f", ResourceMetadata: "https://x/\"\n"},
			`Bearer error="invalid_token", error_description="a??b?c?d?", resource_metadata="https://x/\"?"`},
		{"non-ASCII replaced", Failure{Code: CodeInvalidToken, Description: "café"},
			`Bearer error="invalid_token", error_description="caf??"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.f.WWWAuthenticate())
		})
	}
}

func TestInsufficientScope(t *testing.T) {
	const md = "https://gw.example/.well-known/oauth-protected-resource"
	require.Equal(t, `Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="`+md+`"`,
		InsufficientScope([]string{"files:read", "files:write"}, md))
	require.Equal(t, `Bearer error="insufficient_scope"`, InsufficientScope(nil, ""))
	require.Equal(t, `Bearer error="insufficient_scope", scope="a\"b ?"`, InsufficientScope([]string{`a"b`, "\n"}, ""))
}

func TestFailureIsAChallenge(t *testing.T) {
	// The shape package gateway's transport asks of an authentication
	// error, declared here as gateway declares it.
	var _ interface {
		error
		HTTPStatus() int
		WWWAuthenticate() string
	} = (*Failure)(nil)
	f := &Failure{Status: http.StatusBadRequest, Description: "d", cause: errUnknownKey}
	require.Equal(t, http.StatusBadRequest, f.HTTPStatus())
	require.Equal(t, "d", f.Error())
	require.ErrorIs(t, f, errUnknownKey)
}
