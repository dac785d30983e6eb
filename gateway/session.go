package gateway

// The methods the server answers itself: the session handshake and its
// plumbing (initialize, ping, logging/setLevel) and stateless discovery.
// They belong to no feature: they are about the connection, not the API.

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

func (s *Server) serverInfo() mcp.Implementation {
	return mcp.Implementation{Name: s.cfg.ServerName, Title: "MCP Gateway", Version: s.cfg.ServerVersion}
}

// capabilities are the same in both eras: tools and resources whose lists
// change on a document reload, resource subscriptions (resources/subscribe,
// or resourceSubscriptions in listen), logging, prompts and completions.
func (s *Server) capabilities() map[string]any {
	return map[string]any{
		"tools":       map[string]any{"listChanged": true},
		"logging":     map[string]any{},
		"resources":   map[string]any{"subscribe": true, "listChanged": true},
		"prompts":     map[string]any{"listChanged": true},
		"completions": map[string]any{},
	}
}

// maxClientRecord bounds the client's capabilities and clientInfo as stored
// with its session.
const maxClientRecord = 64 << 10

type initializeParams struct {
	ProtocolVersion *string         `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      json.RawMessage `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    map[string]any     `json:"capabilities"`
	ServerInfo      mcp.Implementation `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
	// sessionID is the session minted: the transport sends it as
	// Mcp-Session-Id.
	sessionID string
}

// initialize negotiates the version and creates the session.
func (s *Server) initialize(r *mcp.Request) (any, error) {
	var p initializeParams
	if err := mcp.DecodeParams(r, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, mcp.InvalidParams("Invalid params for initialize: protocolVersion is required")
	}
	if len(p.Capabilities) > 0 && !isJSONObject(p.Capabilities) && !bytes.Equal(bytes.TrimSpace(p.Capabilities), []byte("null")) {
		return nil, mcp.InvalidParams("Invalid params for initialize: capabilities must be an object")
	}
	// Both are kept for the session's life: bound what a client can park here.
	if len(p.Capabilities) > maxClientRecord || len(p.ClientInfo) > maxClientRecord {
		return nil, mcp.InvalidParams("Invalid params for initialize: capabilities and clientInfo must each be under %d bytes", maxClientRecord)
	}
	// Only what the gateway reads of the client is kept with the session.
	p.Capabilities, p.ClientInfo = trimCapabilities(p.Capabilities), trimClientInfo(p.ClientInfo)
	if r.SessionID != "" {
		// The 2024-11-05 transport: the stream made the session already.
		return s.initializeLegacy(r, p)
	}
	now := time.Now()
	sess := &sessions.Session{
		ID:              newSessionID(),
		ProtocolVersion: mcp.NegotiateVersion(*p.ProtocolVersion),
		ClientInfo:      p.ClientInfo,
		Capabilities:    p.Capabilities,
		Principal:       s.boundSubject(r.Principal),
		Client:          r.Identity(),
		Surface:         storedSurface(r.Surface),
		CreatedAt:       now,
		LastSeen:        now,
	}
	if err := s.createSession(r.Ctx, sess); err != nil {
		return nil, err
	}
	return &initializeResult{
		ProtocolVersion: sess.ProtocolVersion,
		Capabilities:    s.capabilities(),
		ServerInfo:      s.serverInfo(),
		Instructions:    s.cfg.Instructions,
		sessionID:       sess.ID,
	}, nil
}

// updateSession changes a session record, refreshes this replica's cache and
// tells the other replicas to drop theirs.
// createSession stores a new session once the session caps admit it
// (and gives its place back if the store refuses it).
func (s *Server) createSession(ctx context.Context, sess *sessions.Session) error {
	if err := s.admitSession(ctx, sess.Client, sess.ID); err != nil {
		return err
	}
	if err := s.store.Create(ctx, sess); err != nil {
		s.releaseSession(context.WithoutCancel(ctx), sess.Client, sess.ID)
		return storeError(err)
	}
	s.metrics.sessions.Inc()
	return nil
}

func (s *Server) updateSession(ctx context.Context, sid string, fn func(*sessions.Session) error) (*sessions.Session, error) {
	sess, err := s.store.Update(ctx, sid, fn)
	if err != nil {
		return nil, storeError(err)
	}
	s.cache.put(sess, time.Now())
	s.announce(ctx, broadcast{Kind: kindChanged, Session: sid})
	return sess, nil
}

func (s *Server) ping(*mcp.Request) (any, error) { return struct{}{}, nil }

func (s *Server) setLogLevel(r *mcp.Request) (any, error) {
	var p struct {
		Level *string `json:"level"`
	}
	if err := mcp.DecodeParams(r, &p); err != nil {
		return nil, err
	}
	if p.Level == nil {
		return nil, mcp.InvalidParams("Invalid params for logging/setLevel: level is required")
	}
	lvl, ok := mcp.ParseLogLevel(*p.Level)
	if !ok {
		return nil, mcp.InvalidParams("Invalid params for logging/setLevel: unknown level %q (one of %s)", *p.Level, strings.Join(mcp.LevelNames, ", "))
	}
	if _, err := s.updateSession(r.Ctx, r.SessionID, func(x *sessions.Session) error { x.LogLevel = *p.Level; return nil }); err != nil {
		return nil, err
	}
	// Session-wide events go to the session's push stream, which any
	// replica may hold.
	if lvl <= mcp.LevelInfo {
		s.sessionSink(r.SessionID).Notify("notifications/message", mcp.LogMessage{Level: "info", Logger: "mcp-gateway",
			Data: map[string]string{"message": "log level set to " + *p.Level}})
	}
	return struct{}{}, nil
}

type discoverResult struct {
	SupportedVersions []string       `json:"supportedVersions"`
	Capabilities      map[string]any `json:"capabilities"`
	Instructions      string         `json:"instructions,omitempty"`
	mcp.ResultMeta
}

func (s *Server) discover(r *mcp.Request) (any, error) {
	return &discoverResult{
		SupportedVersions: mcp.SupportedVersions,
		Capabilities:      s.capabilities(),
		Instructions:      s.cfg.Instructions,
		ResultMeta:        r.StampResult(true),
	}, nil
}
