package gateway

// Resource subscriptions: resources/subscribe and resources/unsubscribe
// (session era), and the delivery of notifications/resources/updated that
// gateway/watch decides on.

import (
	"context"
	"errors"
	"log/slog"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/watch"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/sessions/subscriptions"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// maxSubscribedURI bounds a subscribed URI: it is stored, and every
// replica polling it keeps it in memory.
const maxSubscribedURI = 4 << 10

func (s *Server) subscribeParams(r *mcp.Request, method string) (string, error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := mcp.DecodeParams(r, &p); err != nil {
		return "", err
	}
	if p.URI == nil || *p.URI == "" {
		return "", mcp.InvalidParams("Invalid params for %s: uri is required", method)
	}
	if len(*p.URI) > maxSubscribedURI {
		return "", mcp.InvalidParams("Invalid params for %s: uri is over %d bytes", method, maxSubscribedURI)
	}
	return *p.URI, nil
}

// subscribe is resources/subscribe: any resource the caller may read; one
// whose contents cannot change is accepted and never notified.
func (s *Server) subscribe(r *mcp.Request) (any, error) {
	uri, err := s.subscribeParams(r, "resources/subscribe")
	if err != nil {
		return nil, err
	}
	if err := s.checkSubscribable(r, uri); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Ctx, s.cfg.StoreTimeout)
	defer cancel()
	if err := s.watch.Subscribe(ctx, r.SessionID, uri, StoreTTL(s.cfg.SessionTTL)); err != nil {
		if errors.Is(err, subscriptions.ErrTooMany) {
			return nil, mcp.InvalidParams("Too many subscriptions: a session may hold %d; unsubscribe from some first", s.cfg.MaxSubscriptions)
		}
		return nil, storeError(err)
	}
	return struct{}{}, nil
}

// checkSubscribable answers whether r's caller may subscribe to uri: a
// resource it may read. One that the backend serves (so polled, with the
// gateway's credentials) is read once, as the caller: a made-up URI that a
// template matches is not found, and the caller's scopes, limits and
// quotas pay for what it asks the gateway to watch.
func (s *Server) checkSubscribable(r *mcp.Request, uri string) error {
	watched, _, err := s.resources.Known(r, uri)
	if err != nil || !watched {
		return err
	}
	snap, err := s.resources.Snapshot(r, uri)
	if err != nil {
		return err
	}
	// What it read is the first poll's baseline, so a change between now
	// and that poll is news too.
	ctx, cancel := context.WithTimeout(r.Ctx, s.cfg.StoreTimeout)
	defer cancel()
	s.watch.Seed(ctx, uri, watch.Snapshot{ETag: snap.ETag, LastModified: snap.LastModified, Hash: snap.Hash})
	return nil
}

// unsubscribe is resources/unsubscribe; unsubscribing from what the
// session is not subscribed to is not an error.
func (s *Server) unsubscribe(r *mcp.Request) (any, error) {
	uri, err := s.subscribeParams(r, "resources/unsubscribe")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Ctx, s.cfg.StoreTimeout)
	defer cancel()
	if err := s.watch.Unsubscribe(ctx, r.SessionID, uri); err != nil {
		return nil, storeError(err)
	}
	return struct{}{}, nil
}

// deliverUpdate puts notifications/resources/updated on a session's push
// stream, on whichever replica holds it.
func (s *Server) deliverUpdate(ctx context.Context, sid, uri string) error {
	return s.appendNotification(ctx, sid, "notifications/resources/updated", map[string]string{"uri": uri})
}

func isSessionGone(err error) bool { return errors.Is(err, sessions.ErrNotFound) }

// refreshSubscriptions keeps a live session's subscriptions as long as the
// session (called when it is touched).
func (s *Server) refreshSubscriptions(ctx context.Context, sid string) {
	if err := s.watch.Refresh(ctx, sid, StoreTTL(s.cfg.SessionTTL)); err != nil {
		s.logLimited(ctx, slog.LevelWarn, "refreshing a session's subscriptions failed", "err", err)
	}
}

// dropSubscriptions ends an ended session's subscriptions.
func (s *Server) dropSubscriptions(ctx context.Context, sid string) {
	if err := s.watch.Drop(ctx, sid); err != nil {
		s.logLimited(ctx, slog.LevelWarn, "dropping an ended session's subscriptions failed (they lapse)", "err", err)
	}
}

// pollResource is gateway/watch's poll: the resource read as nobody.
func (s *Server) pollResource(uri string, cond call.Conditional) (watch.Snapshot, error) {
	snap, err := s.resources.Poll(uri, cond)
	if err != nil {
		return watch.Snapshot{}, err
	}
	return watch.Snapshot{NotModified: snap.NotModified, ETag: snap.ETag, LastModified: snap.LastModified, Hash: snap.Hash}, nil
}
