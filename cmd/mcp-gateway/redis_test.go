package main

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
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
