package watch

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	webhookSecret = []byte("s3cret-shared-with-the-backend")
	otherSecret   = []byte("another-gateway's-secret")
)

func sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// pathURIs is the REST-backed resources' view: which URIs a backend path
// serves.
func pathURIs(path string) []string {
	switch path {
	case "/items/1":
		return []string{"res://items/1", "res://items", "res://a"}
	case "/static":
		return []string{"static:page"}
	}
	return nil
}

// hook is a watcher's webhook on an httptest server.
type hook struct {
	*single
	url string
}

func newHook(t *testing.T) *hook {
	s := newSingle(t, testConfig("r1"))
	srv := httptest.NewServer(s.w.Webhook(webhookSecret, pathURIs))
	t.Cleanup(srv.Close)
	return &hook{single: s, url: srv.URL + "/webhooks/resources"}
}

// post sends body signed with sig (no header when empty) and returns the
// status, the headers and the decoded JSON body.
func (h *hook) post(t *testing.T, method string, body []byte, sig string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, h.url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if sig != "" {
		req.Header.Set(SignatureHeader, sig)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	return resp.StatusCode, resp.Header, out
}

// requireUntouched checks that nothing was done about uri: no poll state,
// no delivery scheduled, no window claimed.
func (h *hook) requireUntouched(t *testing.T, uris ...string) {
	t.Helper()
	for _, uri := range uris {
		st, err := h.subs.State(context.Background(), uri)
		require.NoError(t, err)
		require.Nil(t, st, "poll state of %s", uri)
		require.False(t, pending(h.w, uri), "a delivery of %s", uri)
		require.Empty(t, holder(t, h.lease, notifyLease(uri)), "the window of %s", uri)
	}
}

func TestWebhookAccepts(t *testing.T) {
	h := newHook(t)
	subscribe(t, h.w, "res://a", "sa")
	subscribe(t, h.w, "res://items/1", "s1")
	subscribe(t, h.w, "res://items", "si", "sa")
	subscribe(t, h.w, "static:page", "sp")

	body := []byte(`{"uris": ["res://a", "res://a", "", "res://unsubscribed"], "paths": ["/items/1", "items/1", "/nowhere", "/static"]}`)
	status, _, out := h.post(t, http.MethodPost, body, sign(webhookSecret, body))
	require.Equal(t, http.StatusAccepted, status)
	require.Equal(t, []any{"res://a", "res://unsubscribed", "res://items/1", "res://items", "static:page"}, out["uris"],
		"each URI once; paths resolved; relative paths and empty URIs ignored")

	h.in.awaitEach(t, "res://a", 1, "sa")
	h.in.awaitEach(t, "res://items/1", 1, "s1")
	h.in.awaitEach(t, "res://items", 1, "si", "sa")
	h.in.awaitEach(t, "static:page", 1, "sp")
	require.Eventually(t, func() bool {
		for _, uri := range out["uris"].([]any) {
			if pending(h.w, uri.(string)) {
				return false
			}
		}
		return true
	}, hangGuard, tick)
	require.Equal(t, 5, h.in.total(), "one notification per subscriber and URI")

	// A change event resets the poll state of what can change, so that
	// the next poll records the new contents instead of reporting them.
	for _, uri := range []string{"res://a", "res://items/1", "res://items", "res://unsubscribed"} {
		st, err := h.subs.State(context.Background(), uri)
		require.NoError(t, err)
		require.JSONEq(t, `{"r": true}`, string(st), uri)
	}
	st, err := h.subs.State(context.Background(), "static:page")
	require.NoError(t, err)
	require.Nil(t, st, "a static resource keeps no poll state")

	// Hex digits may be upper case.
	body = []byte(`{"uris": ["res://a"]}`)
	status, _, _ = h.post(t, http.MethodPost, body, "sha256="+strings.ToUpper(strings.TrimPrefix(sign(webhookSecret, body), "sha256=")))
	require.Equal(t, http.StatusAccepted, status)
	h.in.awaitEach(t, "res://a", 2, "sa")
}

func TestWebhookRefusesUnsigned(t *testing.T) {
	h := newHook(t)
	subscribe(t, h.w, "res://a", "sa")
	body := []byte(`{"uris": ["res://a"]}`)
	good := sign(webhookSecret, body)
	for name, sig := range map[string]string{
		"no signature":            "",
		"another secret":          sign(otherSecret, body),
		"an empty secret":         sign(nil, body),
		"another body's":          sign(webhookSecret, []byte(`{"uris": ["res://b"]}`)),
		"no sha256= prefix":       strings.TrimPrefix(good, "sha256="),
		"another algorithm":       "sha1=" + strings.TrimPrefix(good, "sha256="),
		"upper-case prefix":       "SHA256=" + strings.TrimPrefix(good, "sha256="),
		"not hex":                 "sha256=" + strings.Repeat("zz", sha256.Size),
		"empty":                   "sha256=",
		"truncated":               good[:len(good)-2],
		"too long":                good + "00",
		"two signatures in one":   good + "," + good,
		"the secret itself":       "sha256=" + hex.EncodeToString(webhookSecret),
		"the body's plain sha256": "sha256=" + fmt.Sprintf("%x", sha256.Sum256(body)),
	} {
		t.Run(name, func(t *testing.T) {
			status, _, out := h.post(t, http.MethodPost, body, sig)
			require.Equal(t, http.StatusUnauthorized, status)
			require.Contains(t, out["error"], SignatureHeader)
			h.requireUntouched(t, "res://a")
		})
	}

	// Nothing was delivered: an accepted event for another URI, sent
	// after the refused ones, arrives alone.
	subscribe(t, h.w, "res://b", "sb")
	marker := []byte(`{"uris": ["res://b"]}`)
	status, _, _ := h.post(t, http.MethodPost, marker, sign(webhookSecret, marker))
	require.Equal(t, http.StatusAccepted, status)
	h.in.awaitEach(t, "res://b", 1, "sb")
	require.Zero(t, h.in.count("sa", "res://a"))
	require.Equal(t, 1, h.in.total())
}

func TestWebhookRefusesBadRequests(t *testing.T) {
	h := newHook(t)
	subscribe(t, h.w, "res://a", "sa")
	tooMany := map[string][]string{"uris": make([]string, maxWebhookURIs+1)}
	for i := range tooMany["uris"] {
		tooMany["uris"][i] = fmt.Sprintf("res://a/%d", i)
	}
	tooManyBody, err := json.Marshal(tooMany)
	require.NoError(t, err)
	split, err := json.Marshal(map[string][]string{"uris": tooMany["uris"][:maxWebhookURIs/2], "paths": make([]string, maxWebhookURIs/2+1)})
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		body   []byte
		status int
	}{
		{"malformed JSON", []byte(`{"uris": ["res://a"`), http.StatusBadRequest},
		{"empty body", nil, http.StatusBadRequest},
		{"not an object", []byte(`["res://a"]`), http.StatusBadRequest},
		{"uris not a list", []byte(`{"uris": "res://a"}`), http.StatusBadRequest},
		{"trailing data", []byte(`{"uris": ["res://a"]} {}`), http.StatusBadRequest},
		{"null", []byte(`null`), http.StatusBadRequest},
		{"nothing named", []byte(`{}`), http.StatusBadRequest},
		{"empty lists", []byte(`{"uris": [], "paths": []}`), http.StatusBadRequest},
		{"over 1000 URIs", tooManyBody, http.StatusRequestEntityTooLarge},
		{"over 1000 URIs and paths", split, http.StatusRequestEntityTooLarge},
		{"over 1 MiB", append([]byte(`{"uris": ["res://a"], "pad": "`), bytes.Repeat([]byte("x"), maxWebhookBody)...), http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, out := h.post(t, http.MethodPost, tc.body, sign(webhookSecret, tc.body))
			require.Equal(t, tc.status, status)
			require.NotEmpty(t, out["error"])
			h.requireUntouched(t, "res://a", "res://a/0")
		})
	}

	t.Run("over 1 MiB and unsigned", func(t *testing.T) {
		status, _, _ := h.post(t, http.MethodPost, bytes.Repeat([]byte(" "), maxWebhookBody+1), "")
		require.Equal(t, http.StatusRequestEntityTooLarge, status)
	})

	t.Run("exactly 1 MiB is read", func(t *testing.T) {
		head, tail := []byte(`{"uris": ["res://a"], "pad": "`), []byte(`"}`)
		body := append(append(head, bytes.Repeat([]byte("x"), maxWebhookBody-len(head)-len(tail))...), tail...)
		require.Len(t, body, maxWebhookBody)
		status, _, _ := h.post(t, http.MethodPost, body, sign(webhookSecret, body))
		require.Equal(t, http.StatusAccepted, status)
		h.in.awaitEach(t, "res://a", 1, "sa")
	})

	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		t.Run(method, func(t *testing.T) {
			body := []byte(`{"uris": ["res://b"]}`)
			status, header, out := h.post(t, method, body, sign(webhookSecret, body))
			require.Equal(t, http.StatusMethodNotAllowed, status)
			require.Equal(t, http.MethodPost, header.Get("Allow"))
			require.NotEmpty(t, out["error"])
			h.requireUntouched(t, "res://b")
		})
	}
	require.Equal(t, 1, h.in.total())
}

// TestWebhookAndPoller: an event the poller sees too is one notification,
// and the poll after it records the new contents.
func TestWebhookAndPoller(t *testing.T) {
	h := newHook(t)
	const uri = "res://items/1"
	h.be.set(uri, "v1")
	subscribe(t, h.w, uri, "a", "b")
	run(t, h.w)
	awaitPolls(t, h.be, uri, 2) // a baseline, then unchanged

	h.be.set(uri, "v2")
	body := []byte(`{"paths": ["/items/1"]}`)
	status, _, _ := h.post(t, http.MethodPost, body, sign(webhookSecret, body))
	require.Equal(t, http.StatusAccepted, status)
	h.in.awaitEach(t, uri, 1, "a", "b")
	awaitPolls(t, h.be, uri, 4)
	h.in.requireEach(t, uri, 1, "a", "b")

	h.be.set(uri, "v3") // unannounced: the poller reports it
	h.in.awaitEach(t, uri, 2, "a", "b")
	awaitPolls(t, h.be, uri, 4)
	h.in.requireEach(t, uri, 2, "a", "b")
}
