package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Certs are PEM files made for one test: a CA, a server certificate it
// signed for 127.0.0.1 and localhost, a client certificate it signed, and a
// second CA that signed nothing here (trusting only it must fail).
type Certs struct {
	CAFile         string
	ServerCertFile string
	ServerKeyFile  string
	ClientCertFile string
	ClientKeyFile  string
	OtherCAFile    string

	ca     *x509.CertPool
	client tls.Certificate
}

// NewCerts writes a fresh set of certificates into t.TempDir().
func NewCerts(t testing.TB) *Certs {
	t.Helper()
	c, err := newCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newCerts(dir string) (*Certs, error) {
	c := &Certs{
		CAFile:         filepath.Join(dir, "ca.pem"),
		ServerCertFile: filepath.Join(dir, "server.pem"),
		ServerKeyFile:  filepath.Join(dir, "server-key.pem"),
		ClientCertFile: filepath.Join(dir, "client.pem"),
		ClientKeyFile:  filepath.Join(dir, "client-key.pem"),
		OtherCAFile:    filepath.Join(dir, "other-ca.pem"),
	}
	caCert, caKey, err := issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "redistest CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}, nil, nil, c.CAFile, "")
	if err != nil {
		return nil, err
	}
	// The server's certificate also serves as the client certificate of
	// its outgoing connections (a replica's link to its master).
	if _, _, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "redistest server"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:    []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}, caCert, caKey, c.ServerCertFile, c.ServerKeyFile); err != nil {
		return nil, err
	}
	if _, _, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "redistest client"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, caCert, caKey, c.ClientCertFile, c.ClientKeyFile); err != nil {
		return nil, err
	}
	if _, _, err := issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "redistest other CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}, nil, nil, c.OtherCAFile, ""); err != nil {
		return nil, err
	}
	c.ca = x509.NewCertPool()
	c.ca.AddCert(caCert)
	if c.client, err = tls.LoadX509KeyPair(c.ClientCertFile, c.ClientKeyFile); err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	return c, nil
}

// issue makes a P-256 key and a certificate of tmpl signed by parent (self
// signed when parent is nil), valid for a day, and writes them as PEM.
func issue(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, certFile, keyFile string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("redistest: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, fmt.Errorf("redistest: %w", err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("redistest: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("redistest: %w", err)
	}
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return nil, nil, err
	}
	if keyFile != "" {
		kb, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, nil, fmt.Errorf("redistest: %w", err)
		}
		if err := writePEM(keyFile, "PRIVATE KEY", kb); err != nil {
			return nil, nil, err
		}
	}
	return cert, key, nil
}

func writePEM(file, kind string, der []byte) error {
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("redistest: %w", err)
	}
	return nil
}

// ClientTLS is a client configuration that trusts the CA and, withCert,
// presents the client certificate.
func (c *Certs) ClientTLS(withCert bool) *tls.Config {
	tc := &tls.Config{RootCAs: c.ca, MinVersion: tls.VersionTLS12}
	if withCert {
		tc.Certificates = []tls.Certificate{c.client}
	}
	return tc
}

// TLSServer is a standalone redis-server that speaks TLS only, owned by one
// test.
type TLSServer struct {
	// Addr is host:port of the TLS port on loopback.
	Addr string
	// URL is the rediss:// form the gateway accepts, database 0.
	URL string
	// Certs are the files the server uses and a client needs.
	Certs *Certs
}

// TLS starts a TLS-only redis-server (the plain port off) with fresh
// certificates; authClients is its tls-auth-clients: "yes" (a client
// certificate is required), "no" or "optional". It stops when t ends and
// skips t when redis-server is not on PATH.
func TLS(t testing.TB, authClients string) *TLSServer {
	t.Helper()
	if err := lookBinaries("redis-server"); err != nil {
		fail(t, err)
	}
	certs := NewCerts(t)
	s := startOnFreePort(t, certs.ClientTLS(true), append(certs.serverArgs(), "--tls-auth-clients", authClients))
	t.Cleanup(s.stop)
	return &TLSServer{Addr: s.addr(), URL: fmt.Sprintf("rediss://%s/0", s.addr()), Certs: certs}
}

// serverArgs are the redis-server arguments that load the certificates.
func (c *Certs) serverArgs() []string {
	return []string{
		"--tls-cert-file", c.ServerCertFile,
		"--tls-key-file", c.ServerKeyFile,
		"--tls-ca-cert-file", c.CAFile,
	}
}

// Client returns a client of this server presenting the client
// certificate, closed when t ends.
func (s *TLSServer) Client(t testing.TB) redis.UniversalClient {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DialTimeout: 2 * time.Second, TLSConfig: s.Certs.ClientTLS(true)})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
