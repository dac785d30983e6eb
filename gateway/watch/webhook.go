package watch

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// Webhook bounds.
const (
	maxWebhookBody = 1 << 20
	maxWebhookURIs = 1000
)

// SignatureHeader carries a change event's signature: "sha256=" and the
// hex HMAC-SHA256 of the raw body under the shared secret.
const SignatureHeader = "X-Signature-256"

// changeEvent is the body of POST /webhooks/resources.
type changeEvent struct {
	URIs  []string `json:"uris"`
	Paths []string `json:"paths"`
}

// Webhook is POST /webhooks/resources: the backend says which resources
// changed, by URI ("uris") or by the backend path of a REST-backed one
// ("paths", resolved by pathURIs). Unsigned or badly signed events are
// refused with 401 and change nothing; an accepted one is 202 with the
// number of URIs it named.
func (w *Watcher) Webhook(secret []byte, pathURIs func(path string) []string) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if len(secret) == 0 {
			// Anyone can sign with an empty key: accept nothing.
			webhookError(rw, http.StatusUnauthorized, "no webhook secret is configured")
			return
		}
		if r.Method != http.MethodPost {
			rw.Header().Set("Allow", http.MethodPost)
			webhookError(rw, http.StatusMethodNotAllowed, "use POST")
			return
		}
		raw, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxWebhookBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				webhookError(rw, http.StatusRequestEntityTooLarge, "the body is over 1 MiB")
				return
			}
			webhookError(rw, http.StatusBadRequest, "the body could not be read")
			return
		}
		if !validSignature(secret, raw, r.Header.Get(SignatureHeader)) {
			webhookError(rw, http.StatusUnauthorized, "missing or bad "+SignatureHeader+": want sha256=<hex HMAC-SHA256 of the body>")
			return
		}
		var ev changeEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			webhookError(rw, http.StatusBadRequest, `the body must be JSON: {"uris": [...]} or {"paths": [...]}`)
			return
		}
		if len(ev.URIs)+len(ev.Paths) == 0 {
			webhookError(rw, http.StatusBadRequest, `name what changed: {"uris": [...]} or {"paths": [...]}`)
			return
		}
		if len(ev.URIs)+len(ev.Paths) > maxWebhookURIs {
			webhookError(rw, http.StatusRequestEntityTooLarge, "at most 1000 uris and paths per event")
			return
		}
		seen := map[string]bool{}
		uris := make([]string, 0, len(ev.URIs))
		add := func(u string) {
			if u != "" && !seen[u] {
				seen[u] = true
				uris = append(uris, u)
			}
		}
		for _, u := range ev.URIs {
			add(u)
		}
		for _, p := range ev.Paths {
			if strings.HasPrefix(p, "/") && pathURIs != nil {
				for _, u := range pathURIs(p) {
					add(u)
				}
			}
		}
		for _, u := range uris {
			w.Changed(r.Context(), u, true)
		}
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusAccepted)
		_ = json.NewEncoder(rw).Encode(map[string]any{"uris": uris})
	})
}

func validSignature(secret, body []byte, header string) bool {
	sig, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

func webhookError(rw http.ResponseWriter, status int, msg string) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(map[string]string{"error": msg})
}
