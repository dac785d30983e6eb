package gateway

// Resource subscriptions and reads through the backend: resources/subscribe
// and resources/unsubscribe (session era), the resources feature's way to
// the backend (through the tools feature's admission), and the delivery of
// notifications/resources/updated that gateway/watch decides on.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/tools"
	"github.com/mcp-gateway/mcp-gateway/gateway/watch"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/sessions/subscriptions"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
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
	if _, _, err := s.resources.Known(r, uri); err != nil {
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
	data, err := mcp.Marshal(mcp.Notification{JSONRPC: "2.0", Method: "notifications/resources/updated", Params: map[string]string{"uri": uri}})
	if err != nil {
		return err
	}
	if _, err := s.store.Append(ctx, sid, data); err != nil {
		return err
	}
	s.wakeSession(ctx, sid)
	return nil
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

// fetchResource is the resources feature's GET of a REST-backed resource:
// admitted as tools/call of its operation is, and recorded as one.
func (s *Server) fetchResource(r *mcp.Request, name string, args json.RawMessage, cond call.Conditional) (*call.Fetched, error) {
	var got *call.Fetched
	err := s.tools.Run(r, name, func(op tools.Operation) error {
		if r != nil {
			r.Backend = op.Tool.Name
		}
		f, ferr := op.Caller.Fetch(op.Ctx, op.Tool, args, cond)
		if r != nil {
			switch {
			case f != nil:
				r.BackendStatus = f.Status
			case ferr != nil:
				r.BackendStatus = ferr.Status
			}
		}
		if ferr != nil {
			return ferr
		}
		got = f
		return nil
	})
	return got, err
}

// callTool runs a tool for an operation-backed resource, admitted as
// tools/call is, and recorded as one.
func (s *Server) callTool(r *mcp.Request, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return s.runTool(r, name, func(*toolgen.Tool) (json.RawMessage, error) { return args, nil })
}

// runTool runs the tool name with the arguments args makes for it.
func (s *Server) runTool(r *mcp.Request, name string, args func(*toolgen.Tool) (json.RawMessage, error)) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	err := s.tools.Run(r, name, func(op tools.Operation) error {
		in, err := args(op.Tool)
		if err != nil {
			return err
		}
		if r != nil {
			r.Backend = op.Tool.Name
		}
		p := op.Caller.CallPooled(op.Ctx, op.Tool, in, nil)
		if r != nil {
			r.BackendStatus = p.BackendStatus()
		}
		res = p.Copy()
		p.Release()
		return nil
	})
	return res, err
}

// pollResource is gateway/watch's poll: the resource read as nobody.
func (s *Server) pollResource(uri string, cond call.Conditional) (watch.Snapshot, error) {
	snap, err := s.resources.Poll(uri, cond)
	if err != nil {
		return watch.Snapshot{}, err
	}
	return watch.Snapshot{NotModified: snap.NotModified, ETag: snap.ETag, LastModified: snap.LastModified, Hash: snap.Hash}, nil
}

// watched is gateway/watch's question: can uri's contents change?
func (s *Server) watched(uri string) (bool, time.Duration) {
	return s.resources.Watched(uri)
}

// callToolText is callTool with text arguments (a prompt's), each sent as
// the type the tool's parameter takes; arguments the tool does not take
// are left out (completion passes every argument chosen so far).
func (s *Server) callToolText(r *mcp.Request, name string, args map[string]string) (*mcp.CallToolResult, error) {
	return s.runTool(r, name, func(tool *toolgen.Tool) (json.RawMessage, error) {
		in := make(map[string]json.RawMessage, len(args))
		for k, v := range args {
			if tool.TakesArg(k) {
				in[k] = tool.ArgFromText(k, v)
			}
		}
		return json.Marshal(in)
	})
}
