package gateway

// Telling clients that the lists changed after a document reload: each
// replica tells the clients whose streams it holds, only those whose
// visible tools or resources differ between the versions (what a principal
// sees depends on its scopes), and a session once per version whichever
// replicas hold its streams.

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// listKinds are the lists a reload can change.
type listKinds struct{ tools, resources, prompts bool }

// localStreams are the streams open on this replica: a session's push
// stream (sid set) or a 2026-07-28 listen stream (ch set).
type localStreams struct {
	mu   sync.Mutex
	byID map[*localStream]struct{}
}

type localStream struct {
	sid       string
	principal *mcp.Principal
	// surface is what the stream's client is served: a listen stream's
	// own, or a session's as its record said when the stream opened (a
	// fresher cached record wins: streamSurface).
	surface mcp.Surface
	// ch receives the list_changed methods a listen stream sends; wants
	// says which it asked for.
	ch    chan string // room for one of each kind
	wants listKinds
}

func (l *localStreams) add(st *localStream) func() {
	l.mu.Lock()
	if l.byID == nil {
		l.byID = map[*localStream]struct{}{}
	}
	l.byID[st] = struct{}{}
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.byID, st)
		l.mu.Unlock()
	}
}

func (l *localStreams) all() []*localStream {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*localStream, 0, len(l.byID))
	for st := range l.byID {
		out = append(out, st)
	}
	return out
}

// view is what one principal sees of the lists: fingerprints.
type view struct{ tools, resources, prompts string }

// views are the fingerprints of what each open stream's principal sees,
// by mcp.ScopeKey.
func (s *Server) views() map[string]view {
	out := map[string]view{}
	for _, st := range s.local.all() {
		surface := s.streamSurface(st)
		key := s.viewKey(st, surface)
		if _, ok := out[key]; ok {
			continue
		}
		r := &mcp.Request{Ctx: context.Background(), Principal: st.principal}
		out[key] = view{tools: s.tools.Fingerprint(st.principal, surface), resources: s.resources.Fingerprint(r), prompts: s.prompts.Fingerprint(r)}
	}
	return out
}

// streamSurface is what a stream's client is served: a session's as its
// record (this replica's copy) says.
func (s *Server) streamSurface(st *localStream) mcp.Surface {
	if st.sid != "" {
		if sess, _ := s.cache.lookup(st.sid, time.Now()); sess != nil {
			return sessionSurface(sess)
		}
	}
	return st.surface
}

// viewKey groups the streams that see the same lists.
func (s *Server) viewKey(st *localStream, surface mcp.Surface) string {
	return mcp.ScopeKey(st.principal) + "\x00" + surface.Key()
}

// announceListChanges tells each open stream whose principal's view
// changed from before; it returns once they are told.
func (s *Server) announceListChanges(before map[string]view, version string) {
	if len(before) == 0 {
		return
	}
	after := s.views()
	// A session's streams share its log, and tellSession's lease is this
	// replica's to renew: tell each session once, not once per stream.
	told := map[string]bool{}
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, tellParallel)
	for _, st := range s.local.all() {
		key := s.viewKey(st, s.streamSurface(st))
		old, ok := before[key]
		if !ok {
			continue // opened during the swap: it lists the new version
		}
		now := after[key]
		changed := listKinds{tools: old.tools != now.tools, resources: old.resources != now.resources, prompts: old.prompts != now.prompts}
		if !changed.tools && !changed.resources && !changed.prompts {
			continue
		}
		if st.ch != nil {
			if changed.tools && st.wants.tools {
				st.send("notifications/tools/list_changed")
			}
			if changed.resources && st.wants.resources {
				st.send("notifications/resources/list_changed")
			}
			if changed.prompts && st.wants.prompts {
				st.send("notifications/prompts/list_changed")
			}
			continue
		}
		if told[st.sid] {
			continue
		}
		told[st.sid] = true
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			s.tellSession(st.sid, version, changed)
		})
	}
}

// tellParallel bounds the sessions told at once (each is a few store
// round trips).
const tellParallel = 16

func (st *localStream) send(method string) {
	select {
	case st.ch <- method:
	default: // the stream has one waiting: the client re-lists anyway
	}
}

// tellSession appends the list_changed notifications to a session's push
// stream, unless another of its streams (here or elsewhere) already did
// for this version.
func (s *Server) tellSession(sid, version string, changed listKinds) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*s.cfg.StoreTimeout)
	defer cancel()
	for _, k := range []struct {
		on     bool
		method string
	}{{changed.tools, "notifications/tools/list_changed"}, {changed.resources, "notifications/resources/list_changed"},
		{changed.prompts, "notifications/prompts/list_changed"}} {
		if !k.on {
			continue
		}
		if version != "" {
			first, err := s.lease.Acquire(ctx, "listchanged:"+version+":"+k.method+":"+sid, s.watch.Replica(), time.Hour)
			if err == nil && !first {
				continue
			}
		}
		if err := s.appendNotification(ctx, sid, k.method, nil); err != nil {
			s.logLimited(ctx, slog.LevelWarn, "appending list_changed to a session stream failed", "err", err, "session", shortID(sid))
		}
	}
}
