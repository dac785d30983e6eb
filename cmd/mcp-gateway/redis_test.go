package main

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

func TestRedisClientKinds(t *testing.T) {
	for _, tc := range []struct {
		url, mode string
		want      any
	}{
		{"redis://127.0.0.1:6379/0", "auto", &redis.Client{}},
		{"rediss://cache.example:6380/1", "auto", &redis.Client{}},
		{"redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002", "auto", &redis.ClusterClient{}},
		{"redis://127.0.0.1:7000", "cluster", &redis.ClusterClient{}},
		{"redis://127.0.0.1:26379?master_name=mymaster&addr=127.0.0.1:26380", "auto", &redis.Client{}},
	} {
		c, err := redisClient(&config{RedisURL: tc.url, RedisMode: tc.mode})
		require.NoError(t, err, tc.url)
		require.IsType(t, tc.want, c, tc.url)
		_ = c.Close()
	}
	for _, bad := range []string{"http://x:1", "redis://", "redis://h:1?nope=1"} {
		_, err := redisClient(&config{RedisURL: bad, RedisMode: "auto"})
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "redis_url")
	}
}

func TestRedisClientAuthAndFailFast(t *testing.T) {
	c, err := redisClient(&config{RedisURL: "redis://u:p@127.0.0.1:6379/0", RedisMode: "auto", RedisUsername: "acl-user", RedisPassword: "secret"})
	require.NoError(t, err)
	defer c.Close()
	o := c.(*redis.Client).Options()
	require.Equal(t, "acl-user", o.Username)
	require.Equal(t, "secret", o.Password)
	require.Equal(t, time.Second, o.DialTimeout)
	require.Equal(t, 1, o.MaxRetries)

	c2, err := redisClient(&config{RedisURL: "redis://127.0.0.1:6379/0?max_retries=4", RedisMode: "auto"})
	require.NoError(t, err)
	defer c2.Close()
	require.Equal(t, 4, c2.(*redis.Client).Options().MaxRetries, "the URL wins")
}

// tlsOf is the TLS configuration a client of any kind dials with.
func tlsOf(t *testing.T, c redis.UniversalClient) *tls.Config {
	t.Helper()
	switch c := c.(type) {
	case *redis.ClusterClient:
		return c.Options().TLSConfig
	case *redis.Client:
		return c.Options().TLSConfig
	}
	t.Fatalf("unexpected client %T", c)
	return nil
}

func TestRedisTLSEveryMode(t *testing.T) {
	certs := redistest.NewCerts(t)
	for _, tc := range []struct{ url, serverName string }{
		{"rediss://127.0.0.1:6380/0", ""},
		{"rediss://cache.example:6380/0", "cache.example"},
		{"rediss://127.0.0.1:7000?addr=127.0.0.1:7001", ""},
		{"rediss://node.example:7000?addr=node2.example:7001", "node.example"},
		// A Sentinel client's sentinel connections take the same
		// configuration as its master's (go-redis FailoverOptions).
		{"rediss://127.0.0.1:26379?master_name=mymaster&addr=127.0.0.1:26380", ""},
		{"rediss://[::1]:6380", ""},
	} {
		c, err := redisClient(&config{RedisURL: tc.url, RedisMode: "auto",
			RedisTLSCAFile: certs.CAFile, RedisTLSCertFile: certs.ClientCertFile, RedisTLSKeyFile: certs.ClientKeyFile})
		require.NoError(t, err, tc.url)
		tc1 := tlsOf(t, c)
		require.NotNil(t, tc1, tc.url)
		require.Equal(t, uint16(tls.VersionTLS12), tc1.MinVersion, tc.url)
		require.NotNil(t, tc1.RootCAs, tc.url)
		require.Len(t, tc1.Certificates, 1, tc.url)
		require.Equal(t, tc.serverName, tc1.ServerName, "%s: an IP is checked per dialed address", tc.url)
		require.False(t, tc1.InsecureSkipVerify, tc.url)
		_ = c.Close()
	}

	// rediss:// alone: the system's roots, no client certificate.
	c, err := redisClient(&config{RedisURL: "rediss://cache.example:6380", RedisMode: "auto"})
	require.NoError(t, err)
	tc := tlsOf(t, c)
	require.Nil(t, tc.RootCAs)
	require.Empty(t, tc.Certificates)
	require.Equal(t, uint16(tls.VersionTLS12), tc.MinVersion)
	_ = c.Close()
	// The URL's skip_verify still works.
	c, err = redisClient(&config{RedisURL: "rediss://cache.example:6380?skip_verify=true", RedisMode: "auto", RedisTLSCAFile: certs.CAFile})
	require.NoError(t, err)
	require.True(t, tlsOf(t, c).InsecureSkipVerify)
	_ = c.Close()
	// redis:// is plain TCP.
	c, err = redisClient(&config{RedisURL: "redis://127.0.0.1:6379", RedisMode: "auto"})
	require.NoError(t, err)
	require.Nil(t, tlsOf(t, c))
	_ = c.Close()
}

func TestRedisTLSBadSettings(t *testing.T) {
	certs := redistest.NewCerts(t)
	dir := t.TempDir()
	secretish := filepath.Join(dir, "not-pem")
	require.NoError(t, os.WriteFile(secretish, []byte("hunter2-do-not-print\n"), 0o600))
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		name         string
		cfg          config
		key, problem string
	}{
		{"TLS files with redis://", config{RedisURL: "redis://127.0.0.1:6379", RedisTLSCAFile: certs.CAFile}, "redis_tls_ca_file", "needs a rediss:// redis_url"},
		{"client cert with redis://", config{RedisURL: "redis://127.0.0.1:6379", RedisTLSCertFile: certs.ClientCertFile, RedisTLSKeyFile: certs.ClientKeyFile}, "redis_tls_cert_file", "needs a rediss://"},
		{"missing CA", config{RedisTLSCAFile: missing}, "redis_tls_ca_file", "cannot read the file: no such file or directory"},
		{"CA not PEM", config{RedisTLSCAFile: secretish}, "redis_tls_ca_file", "holds no PEM certificate"},
		{"cert without key", config{RedisTLSCertFile: certs.ClientCertFile}, "redis_tls_key_file", "required with redis_tls_cert_file"},
		{"key without cert", config{RedisTLSKeyFile: certs.ClientKeyFile}, "redis_tls_cert_file", "required with redis_tls_key_file"},
		{"missing cert", config{RedisTLSCertFile: missing, RedisTLSKeyFile: certs.ClientKeyFile}, "redis_tls_cert_file", "cannot read the file"},
		{"missing key", config{RedisTLSCertFile: certs.ClientCertFile, RedisTLSKeyFile: missing}, "redis_tls_key_file", "cannot read the file"},
		{"key not PEM", config{RedisTLSCertFile: certs.ClientCertFile, RedisTLSKeyFile: secretish}, "redis_tls_cert_file", "not a certificate matching redis_tls_key_file"},
		{"key of another certificate", config{RedisTLSCertFile: certs.ClientCertFile, RedisTLSKeyFile: certs.ServerKeyFile}, "redis_tls_cert_file", "not a certificate matching redis_tls_key_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg.RedisURL == "" {
				cfg.RedisURL = "rediss://127.0.0.1:6380"
			}
			cfg.RedisMode = "auto"
			_, err := redisClient(&cfg)
			var ce *configError
			require.True(t, errors.As(err, &ce), "%v", err)
			require.Equal(t, tc.key, ce.key)
			require.Contains(t, ce.reason, tc.problem)
			require.NotContains(t, err.Error(), "hunter2", "a file's bytes never reach the message")
		})
	}
}

// The client the gateway builds against real TLS servers: trusted with
// and without a client certificate, and refused clearly when the server
// wants a certificate it lacks or the CA is not the server's.
func TestRedisTLSAgainstServers(t *testing.T) {
	ctx := context.Background()
	required := redistest.TLS(t, "yes")
	optional := redistest.TLS(t, "no")
	ping := func(srv *redistest.TLSServer, ca, cert, key string) error {
		c, err := redisClient(&config{RedisURL: srv.URL, RedisMode: "auto", RedisTLSCAFile: ca, RedisTLSCertFile: cert, RedisTLSKeyFile: key})
		require.NoError(t, err)
		defer c.Close()
		return pingRedis(ctx, c)
	}
	cs := required.Certs
	require.NoError(t, ping(required, cs.CAFile, cs.ClientCertFile, cs.ClientKeyFile), "client certificate where one is required")
	err := ping(required, cs.CAFile, "", "")
	require.ErrorContains(t, err, "certificate required", "no client certificate where one is required")
	require.ErrorContains(t, err, "redis not reachable yet")
	require.ErrorContains(t, ping(required, cs.OtherCAFile, cs.ClientCertFile, cs.ClientKeyFile), "certificate signed by unknown authority")

	co := optional.Certs
	require.NoError(t, ping(optional, co.CAFile, "", ""), "no client certificate where none is asked")
	require.ErrorContains(t, ping(optional, cs.CAFile, "", ""), "certificate signed by unknown authority", "another test's CA")
}

// Sentinel over TLS: the client reaches the sentinels and the master they
// name with the same certificates, and again the replica they promote.
func TestRedisTLSSentinel(t *testing.T) {
	ctx := context.Background()
	set := redistest.SentinelTLS(t)
	cs := set.Certs
	c, err := redisClient(&config{RedisURL: set.URL, RedisMode: "auto",
		RedisTLSCAFile: cs.CAFile, RedisTLSCertFile: cs.ClientCertFile, RedisTLSKeyFile: cs.ClientKeyFile})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() }) // after the key cleanup below
	require.NoError(t, pingRedis(ctx, c))
	p := redistest.Prefix(t)
	redistest.Cleanup(t, c, p)
	require.NoError(t, c.Set(ctx, p+"k", "v", 0).Err())

	noCert, err := redisClient(&config{RedisURL: set.URL, RedisMode: "auto", RedisTLSCAFile: cs.CAFile})
	require.NoError(t, err)
	defer noCert.Close()
	require.ErrorContains(t, pingRedis(ctx, noCert), "certificate required", "the sentinels want a client certificate too")

	set.AwaitReplicated(t)
	set.AwaitNewMaster(t, set.KillMaster(t), 30*time.Second)
	require.Eventually(t, func() bool { return c.Get(ctx, p+"k").Val() == "v" }, 10*time.Second, 20*time.Millisecond,
		"the write, read over TLS from the promoted replica")
}
