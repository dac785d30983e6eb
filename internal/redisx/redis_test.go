package redisx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
)

// Real replies of a real server, and real failures to reach one.
func TestIsOutage(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx := context.Background()
	key := redistest.Prefix(t) + "k"
	redistest.Cleanup(t, c, redistest.Prefix(t))
	require.NoError(t, c.Set(ctx, key, "v", 0).Err())

	wrongType := c.HGet(ctx, key, "f").Err()
	require.Error(t, wrongType)
	require.False(t, IsOutage(wrongType), "WRONGTYPE is a fault: %v", wrongType)
	scriptErr := c.Eval(ctx, "return redis.error_reply('boom')", nil).Err()
	require.False(t, IsOutage(scriptErr), "a script's error reply is a fault: %v", scriptErr)

	for _, reply := range []string{"LOADING Redis is loading", "CLUSTERDOWN The cluster is down", "TRYAGAIN Multiple keys request during rehashing of slot", "READONLY You can't write", "OOM command not allowed"} {
		err := c.Eval(ctx, fmt.Sprintf("return redis.error_reply(%q)", reply), nil).Err()
		require.True(t, IsOutage(err), "%q means the server cannot serve now: %v", reply, err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	dead := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer dead.Close()
	refused := dead.Ping(ctx).Err()
	require.True(t, IsOutage(refused), "no reply is an outage: %v", refused)
	require.True(t, IsOutage(errors.New("i/o timeout")))
}

func TestHashTag(t *testing.T) {
	require.Equal(t, "{abc}", HashTag("abc"))
	require.Equal(t, "{%}", HashTag(""))
	require.Equal(t, "{a%7Db%25}", HashTag("a}b%"))
	require.NotEqual(t, HashTag("%"), HashTag(""), "distinct strings stay apart")
}
