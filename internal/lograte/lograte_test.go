package lograte

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLimiterHoldsBackRepeats(t *testing.T) {
	var l Limiter
	now := time.Now()
	ok, _ := l.Allow("store", now)
	require.True(t, ok)
	for i := range 5 {
		ok, _ = l.Allow("store", now.Add(time.Duration(i)*100*time.Millisecond))
		require.False(t, ok)
	}
	ok, _ = l.Allow("bus", now)
	require.True(t, ok, "kinds are counted apart")
	ok, held := l.Allow("store", now.Add(1100*time.Millisecond))
	require.True(t, ok)
	require.Equal(t, 5, held)
}
