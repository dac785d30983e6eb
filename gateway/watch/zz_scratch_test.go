package watch

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

func TestScratchSlowPollStallsRenewals(t *testing.T) {
	s := newSingle(t, testConfig("r1"))
	const slow, y = "res://slow", "res://y"
	s.be.set(slow, "v1")
	s.be.set(y, "v1")
	gate := make(chan struct{})
	blocked := make(chan struct{}, 1)
	inner := s.be.poll("r1")
	armed := make(chan struct{})
	s.w.deps.Poll = func(uri string, cond call.Conditional) (Snapshot, error) {
		if uri == slow {
			select {
			case <-armed:
				select { case blocked <- struct{}{}: default: }
				<-gate
			default:
			}
		}
		return inner(uri, cond)
	}
	subscribe(t, s.w, slow, "a")
	subscribe(t, s.w, y, "b")
	run(t, s.w)
	awaitPolls(t, s.be, slow, 1)
	close(armed)
	<-blocked
	require.NoError(t, s.w.Unsubscribe(context.Background(), "a", slow))
	awaitPolls(t, s.be, y, int(3*leaseTTL/pollEvery))
	h := holder(t, s.lease, pollLease(y))
	t.Logf("holder of y after a stall: %q; polling %v", h, s.w.Polling())
	close(gate)
	require.Equal(t, "r1", h)
	_ = time.Second
}
