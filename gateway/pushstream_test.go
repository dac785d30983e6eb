package gateway

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// pushRecord is the session's push streams as the store has them.
func pushRecord(t *testing.T, g *testGateway, sid string) sessions.PushStreams {
	t.Helper()
	sess, err := g.srv.store.Get(context.Background(), sid)
	require.NoError(t, err)
	return sess.Push
}

// awaitOpen waits until the record lists n open streams (a closed stream
// has handed its place on by then).
func awaitOpen(t *testing.T, g *testGateway, sid string, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(pushRecord(t, g, sid).Open) == n }, 5*time.Second, 5*time.Millisecond)
}

func requireText(t *testing.T, s *sseClient, want string) {
	t.Helper()
	require.Equal(t, want, eventText(t, s.next(t)))
}

// Each push-stream event goes on one stream only, the newest open one;
// when it closes, the next newest takes over where delivery stopped, with
// nothing lost or repeated. Streams may be on different replicas.
func TestPushEventsGoToTheNewestStreamOnly(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replicas int
		kind     string
	}{{"one replica", 1, "memory"}, {"two replicas", 2, "memory"}, {"two replicas on redis", 2, "redis"}} {
		t.Run(tc.name, func(t *testing.T) {
			da, db := replicaDeps(t, tc.kind)
			a := newTestGatewayWith(t, Config{}, da)
			b := a
			if tc.replicas == 2 {
				b = newTestGatewayWith(t, Config{}, db)
			}
			sid := a.initialize(t, "2025-11-25")

			s1 := a.openGET(t, sid, "")
			push(t, a, sid, "a1")
			requireText(t, s1, "a1")

			s2 := b.openGET(t, sid, "")
			push(t, b, sid, "a2")
			requireText(t, s2, "a2")

			s3 := a.openGET(t, sid, "")
			push(t, a, sid, "a3")
			requireText(t, s3, "a3")

			// Closing an older stream changes nothing.
			s2.close()
			awaitOpen(t, a, sid, 2)
			push(t, b, sid, "a4")
			requireText(t, s3, "a4")

			// Closing the newest hands over to the next newest, s1, which
			// had only a1: it goes on after a5 (s3's last), without a2..a5.
			push(t, a, sid, "a5")
			requireText(t, s3, "a5")
			s3.close()
			awaitOpen(t, a, sid, 1)
			push(t, b, sid, "a6")
			push(t, a, sid, "a7")
			requireText(t, s1, "a6")
			requireText(t, s1, "a7")
		})
	}
}

// Events appended while the owner hands over to a newer stream are
// neither lost nor doubled: the new owner goes on from where the last one
// stopped, and the old one carries none of them.
func TestPushStreamHandoverLosesNothing(t *testing.T) {
	g := newTestGateway(t, Config{})
	sid := g.initialize(t, "2025-06-18")
	s1 := g.openGET(t, sid, "")
	push(t, g, sid, "b1")
	requireText(t, s1, "b1")
	s2 := g.openGET(t, sid, "")
	for _, m := range []string{"b2", "b3", "b4"} {
		push(t, g, sid, m)
	}
	for _, m := range []string{"b2", "b3", "b4"} {
		requireText(t, s2, m)
	}
	s2.close()
	awaitOpen(t, g, sid, 1)
	push(t, g, sid, "b5")
	requireText(t, s1, "b5")
}

// A stream whose replica died (its lease no longer renewed) stops counting
// once its lease lapses: the live stream takes delivery back, from where
// it handed over.
func TestDeadPushStreamRegistrationLapses(t *testing.T) {
	g := newTestGateway(t, Config{SSEKeepAlive: 50 * time.Millisecond})
	sid := g.initialize(t, "2025-11-25")
	s1 := g.openGET(t, sid, "")
	push(t, g, sid, "x1")
	requireText(t, s1, "x1")

	// Another replica registers a newer stream and dies at once.
	const dead = "DEADDEADDEADDEAD"
	_, err := g.srv.updateSession(context.Background(), sid, func(x *sessions.Session) error {
		x.Push.Open = append(x.Push.Open, sessions.StreamLease{Token: dead, Until: time.Now().Add(2 * time.Second)})
		return nil
	})
	require.NoError(t, err)
	(&pushStream{srv: g.srv, sid: sid}).hint(context.Background())
	// s1 hands over to it (unless the lease lapsed first: then s1 never did).
	require.Eventually(t, func() bool {
		rec := pushRecord(t, g, sid)
		return rec.Owner == dead || leaseOf(&rec, dead) < 0
	}, 5*time.Second, 5*time.Millisecond)

	push(t, g, sid, "x2")
	push(t, g, sid, "x3")
	requireText(t, s1, "x2")
	requireText(t, s1, "x3")
	push(t, g, sid, "x4")
	requireText(t, s1, "x4")
	rec := pushRecord(t, g, sid)
	require.Equal(t, -1, leaseOf(&rec, dead), "the lapsed registration is gone")
}

// A session holds a bounded number of GET streams.
func TestPushStreamsAreBounded(t *testing.T) {
	g := newTestGateway(t, Config{})
	sid := g.initialize(t, "2025-06-18")
	for range maxPushStreams {
		g.openGET(t, sid, "")
	}
	r := g.do(t, exchange{method: http.MethodGet, headers: map[string]string{"Mcp-Session-Id": sid, "Accept": "text/event-stream"}})
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
}

// A client that resumes a stream whose replica died names it in its
// Last-Event-ID: the new stream takes its place at once, without waiting
// for the dead one's lease to lapse, and replays what the client missed.
func TestResumingReplacesTheDeadStream(t *testing.T) {
	g := newTestGateway(t, Config{})
	sid := g.initialize(t, "2025-06-18")
	push(t, g, sid, "y1")
	last, err := g.srv.store.LastEventID(context.Background(), sid)
	require.NoError(t, err)
	// The stream that carried y1 was on a replica that died: its lease
	// would hold for an hour.
	const dead = "gDEADDEADDEADDEA"
	_, err = g.srv.updateSession(context.Background(), sid, func(x *sessions.Session) error {
		x.Push.Open = []sessions.StreamLease{{Token: dead, Until: time.Now().Add(time.Hour)}}
		x.Push.Owner, x.Push.Cursor = dead, last
		return nil
	})
	require.NoError(t, err)
	push(t, g, sid, "y2")

	s := g.openGET(t, sid, last+"."+dead)
	requireText(t, s, "y2")
	push(t, g, sid, "y3")
	ev := s.next(t)
	require.Equal(t, "y3", eventText(t, ev))
	require.Regexp(t, `^[0-9]+\.g[A-Za-z0-9_-]{15}$`, ev.id, "push-stream ids name the stream")
	rec := pushRecord(t, g, sid)
	require.Equal(t, -1, leaseOf(&rec, dead))
	require.Equal(t, tokenOf(ev.id), rec.Owner)

	r := g.do(t, exchange{method: http.MethodGet, headers: map[string]string{"Mcp-Session-Id": sid, "Accept": "text/event-stream", "Last-Event-ID": last + ".gshort"}})
	require.Equal(t, http.StatusBadRequest, r.status)
}
