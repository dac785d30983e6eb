package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMetadata(t *testing.T) {
	require.JSONEq(t, `{
		"resource": "https://gw.example/mcp",
		"authorization_servers": ["https://issuer.example"],
		"scopes_supported": ["files:read", "files:write"],
		"bearer_methods_supported": ["header"]
	}`, string(Metadata("https://gw.example/mcp", []string{"https://issuer.example"}, []string{"files:read", "files:write"})))
	require.JSONEq(t, `{"resource": "https://gw.example/mcp", "authorization_servers": ["https://issuer.example"], "bearer_methods_supported": ["header"]}`,
		string(Metadata("https://gw.example/mcp", []string{"https://issuer.example"}, nil)))
}

func TestMetadataHandler(t *testing.T) {
	h := MetadataHandler("https://gw.example/mcp", []string{"https://issuer.example"}, []string{"a"})
	body := string(Metadata("https://gw.example/mcp", []string{"https://issuer.example"}, []string{"a"}))

	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/mcp", nil))
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, "application/json", w.Header().Get("Content-Type"))
	require.Equal(t, "public, max-age=3600", w.Header().Get("Cache-Control"))
	require.Equal(t, "*", w.Header().Get("Access-Control-Allow-Origin"))
	require.Equal(t, body, w.Body.String())

	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/", nil))
	require.Equal(t, http.StatusOK, w.Code)
	require.Empty(t, w.Body.String())
	require.Equal(t, "application/json", w.Header().Get("Content-Type"))

	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodOptions, "/", nil))
	require.Equal(t, http.StatusNoContent, w.Code)
	require.Contains(t, w.Header().Get("Access-Control-Allow-Methods"), "GET")

	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", nil))
	require.Equal(t, http.StatusMethodNotAllowed, w.Code)
	require.Equal(t, "GET, HEAD, OPTIONS", w.Header().Get("Allow"))
}
