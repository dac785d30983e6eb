package openapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Read returns what Load reads, a URL conditionally, under the same rules.
func TestRead(t *testing.T) {
	const doc = `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{}}`
	gets := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets++
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "http://elsewhere.example/doc.json", http.StatusFound)
			return
		}
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		_, _ = w.Write([]byte(doc))
	}))
	defer srv.Close()
	ctx := context.Background()

	data, got, err := Read(ctx, srv.URL+"/doc.json", LoadOptions{}, Validators{})
	require.NoError(t, err)
	require.Equal(t, doc, string(data))
	require.Equal(t, Validators{ETag: `"v1"`}, got)
	data, got, err = Read(ctx, srv.URL+"/doc.json", LoadOptions{}, got)
	require.NoError(t, err)
	require.Nil(t, data, "unchanged")
	require.Equal(t, Validators{ETag: `"v1"`}, got)
	require.Equal(t, 2, gets)

	_, _, err = Read(ctx, srv.URL+"/away", LoadOptions{}, Validators{})
	var oe *OriginError
	require.True(t, errors.As(err, &oe), "a redirect to another origin is refused: %v", err)

	_, _, err = Read(ctx, srv.URL+"/doc.json", LoadOptions{MaxBytes: 10}, Validators{})
	require.ErrorIs(t, err, ErrTooLarge)

	file := filepath.Join(t.TempDir(), "doc.json")
	require.NoError(t, os.WriteFile(file, []byte(doc), 0o600))
	data, _, err = Read(ctx, file, LoadOptions{}, Validators{ETag: "ignored"})
	require.NoError(t, err)
	require.Equal(t, doc, string(data), "a file is read whole")
	loaded, err := LoadData(ctx, data, file, LoadOptions{})
	require.NoError(t, err)
	require.Equal(t, "t", loaded.T.Info.Title)
}
