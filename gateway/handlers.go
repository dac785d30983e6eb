package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// resultMeta carries the fields the stateless era adds to every result.
// It is embedded in result types and left empty in the session era.
type resultMeta struct {
	ResultType string         `json:"resultType,omitempty"`
	TTLMs      *int64         `json:"ttlMs,omitempty"`
	CacheScope string         `json:"cacheScope,omitempty"`
	Meta       map[string]any `json:"_meta,omitempty"`
}

// stamp returns the stateless-era result fields for r; cacheable results
// also carry cache hints.
func (s *Server) stamp(r *request, cacheable bool) resultMeta {
	if r.era != eraStateless {
		return resultMeta{}
	}
	m := resultMeta{ResultType: "complete", Meta: s.serverInfoMeta()}
	if cacheable {
		ttl := s.cfg.ListTTL.Milliseconds()
		m.TTLMs = &ttl
		// Results do not vary by credentials: the gateway serves one tool
		// set to every caller.
		m.CacheScope = "public"
	}
	return m
}

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

func (s *Server) serverInfo() implementation {
	return implementation{Name: s.cfg.ServerName, Title: "MCP Gateway", Version: s.cfg.ServerVersion}
}

// serverInfoMeta is shared by every stateless result; nothing modifies it.
func (s *Server) serverInfoMeta() map[string]any {
	s.infoMetaOnce.Do(func() {
		s.infoMeta = map[string]any{"io.modelcontextprotocol/serverInfo": s.serverInfo()}
	})
	return s.infoMeta
}

// capabilities are the same in both eras: tools, logging, and empty
// resources/prompts/completions (an OpenAPI backend has none yet).
func (s *Server) capabilities() map[string]any {
	return map[string]any{
		"tools":       map[string]any{},
		"logging":     map[string]any{},
		"resources":   map[string]any{},
		"prompts":     map[string]any{},
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
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      implementation `json:"serverInfo"`
	Instructions    string         `json:"instructions,omitempty"`
}

// initialize negotiates the version and creates the session.
func (s *Server) initialize(ctx context.Context, params json.RawMessage) (*initializeResult, *sessions.Session, error) {
	var p initializeParams
	if err := decodeParams(&request{params: params, method: "initialize"}, &p); err != nil {
		return nil, nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, nil, errInvalidParams("Invalid params for initialize: protocolVersion is required")
	}
	if len(p.Capabilities) > 0 && !isJSONObject(p.Capabilities) && !bytes.Equal(bytes.TrimSpace(p.Capabilities), []byte("null")) {
		return nil, nil, errInvalidParams("Invalid params for initialize: capabilities must be an object")
	}
	// Both are kept for the session's life: bound what a client can park here.
	if len(p.Capabilities) > maxClientRecord || len(p.ClientInfo) > maxClientRecord {
		return nil, nil, errInvalidParams("Invalid params for initialize: capabilities and clientInfo must each be under %d bytes", maxClientRecord)
	}
	now := time.Now()
	sess := &sessions.Session{
		ID:              newSessionID(),
		ProtocolVersion: negotiateVersion(*p.ProtocolVersion),
		ClientInfo:      p.ClientInfo,
		Capabilities:    p.Capabilities,
		CreatedAt:       now,
		LastSeen:        now,
	}
	if err := s.store.Create(ctx, sess); err != nil {
		return nil, nil, s.storeError(err)
	}
	s.metrics.sessions.Inc()
	return &initializeResult{
		ProtocolVersion: sess.ProtocolVersion,
		Capabilities:    s.capabilities(),
		ServerInfo:      s.serverInfo(),
		Instructions:    s.cfg.Instructions,
	}, sess, nil
}

// updateSession changes a session record, refreshes this replica's cache and
// tells the other replicas to drop theirs.
func (s *Server) updateSession(ctx context.Context, sid string, fn func(*sessions.Session) error) (*sessions.Session, error) {
	sess, err := s.store.Update(ctx, sid, fn)
	if err != nil {
		s.log.Warn("updating session failed", "err", err, "session", sid)
		return nil, err
	}
	s.cache.put(sess, time.Now())
	s.announce(ctx, broadcast{Kind: "changed", Session: sid})
	return sess, nil
}

// storeError turns a store failure into the error the client sees.
func (s *Server) storeError(err error) error {
	s.log.Error("session store failed", "err", err)
	return (&rpcError{Code: codeUnavailable, Message: "Service Unavailable: the session store is unavailable"}).withStatus(http.StatusServiceUnavailable)
}

func (s *Server) ping(*request) (any, error) { return struct{}{}, nil }

func (s *Server) setLogLevel(r *request) (any, error) {
	var p struct {
		Level *string `json:"level"`
	}
	if err := decodeParams(r, &p); err != nil {
		return nil, err
	}
	if p.Level == nil {
		return nil, errInvalidParams("Invalid params for logging/setLevel: level is required")
	}
	if _, ok := parseLogLevel(*p.Level); !ok {
		return nil, errInvalidParams("Invalid params for logging/setLevel: unknown level %q (one of %s)", *p.Level, strings.Join(levelNames, ", "))
	}
	if _, err := s.updateSession(r.ctx, r.session.ID, func(x *sessions.Session) error { x.LogLevel = *p.Level; return nil }); err != nil {
		return nil, s.storeError(err)
	}
	// Session-wide events go to the session's push stream, which any
	// replica may hold.
	if lvl, _ := parseLogLevel(*p.Level); lvl <= levelInfo {
		s.sessionSink(r.session.ID).notify("notifications/message", logMessage{Level: "info", Logger: "mcp-gateway",
			Data: map[string]string{"message": "log level set to " + *p.Level}})
	}
	return struct{}{}, nil
}

type discoverResult struct {
	SupportedVersions []string       `json:"supportedVersions"`
	Capabilities      map[string]any `json:"capabilities"`
	Instructions      string         `json:"instructions,omitempty"`
	resultMeta
}

func (s *Server) discover(r *request) (any, error) {
	return &discoverResult{
		SupportedVersions: supportedVersions,
		Capabilities:      s.capabilities(),
		Instructions:      s.cfg.Instructions,
		resultMeta:        s.stamp(r, true),
	}, nil
}

// catalogFor returns the loaded catalog or the error to answer with.
func (s *Server) catalogFor() (*catalogState, error) {
	c := s.currentCatalog()
	if c == nil || c.Tools == nil {
		return nil, (&rpcError{Code: codeUnavailable, Message: "Service Unavailable: the OpenAPI document is not loaded yet"}).withStatus(http.StatusServiceUnavailable)
	}
	return c, nil
}

type listToolsResult struct {
	Tools      []*toolgen.Tool `json:"tools"`
	NextCursor string          `json:"nextCursor,omitempty"`
	resultMeta
}

func (s *Server) listTools(r *request) (any, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(r, &p); err != nil {
		return nil, err
	}
	c, err := s.catalogFor()
	if err != nil {
		return nil, err
	}
	all := c.Tools.Tools()
	start := 0
	if p.Cursor != nil {
		start, err = decodeCursor(*p.Cursor, c.tag, len(all))
		if err != nil {
			return nil, err
		}
	}
	end := min(start+s.cfg.PageSize, len(all))
	res := &listToolsResult{Tools: all[start:end], resultMeta: s.stamp(r, true)}
	if end < len(all) {
		res.NextCursor = encodeCursor(c.tag, end)
	}
	return res, nil
}

// Cursors are opaque to clients: the tool set's tag and an offset. A cursor
// from another tool set (the document was reloaded) is rejected rather than
// silently skipping or repeating tools.
func encodeCursor(tag string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(tag + ":" + strconv.Itoa(offset)))
}

func decodeCursor(cursor, tag string, n int) (int, error) {
	bad := errInvalidParams("Invalid params: unknown or expired cursor; list again from the start")
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, bad
	}
	t, off, ok := strings.Cut(string(raw), ":")
	if !ok || t != tag {
		return 0, bad
	}
	i, err := strconv.Atoi(off)
	if err != nil || i < 0 || i > n {
		return 0, bad
	}
	return i, nil
}

// toolSetTag fingerprints a tool set by its names, in order.
func toolSetTag(set *toolgen.Set) string {
	h := fnv.New64a()
	if set != nil {
		for _, t := range set.Tools() {
			h.Write([]byte(t.Name))
			h.Write([]byte{0})
		}
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

type callToolResult struct {
	*toolgen.Result
	resultMeta
}

func (s *Server) callTool(r *request) (any, error) {
	name, args := r.meta.Name, r.meta.Arguments
	if !r.meta.ok {
		var p struct {
			Name      *string         `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := decodeParams(r, &p); err != nil {
			return nil, err
		}
		name, args = p.Name, p.Arguments
	}
	if name == nil || *name == "" {
		return nil, errInvalidParams("Invalid params for tools/call: name is required")
	}
	if a := bytes.TrimSpace(args); len(a) > 0 && a[0] != '{' && !bytes.Equal(a, []byte("null")) {
		return nil, errInvalidParams("Invalid params for tools/call: arguments must be an object")
	}
	c, err := s.catalogFor()
	if err != nil {
		return nil, err
	}
	tool, ok := c.Tools.Lookup(*name)
	if !ok {
		return nil, errInvalidParams("Unknown tool: %q", *name)
	}
	if res := s.checkQuota(r); res != nil {
		return &callToolResult{Result: res, resultMeta: s.stamp(r, false)}, nil
	}
	debug := r.enabled(levelDebug)
	if debug {
		method, path := tool.Route()
		r.log(levelDebug, map[string]any{"message": "calling backend", "tool": tool.Name, "request": method + " " + path})
	}
	start := time.Now()
	// Observing the exchange costs a little; do it only for a client that
	// wants progress or debug messages.
	var observe toolgen.Observer
	if debug || validProgressToken(r.progressToken) {
		observe = func(pr toolgen.Progress) {
			switch pr.Stage {
			case toolgen.StageSent:
				r.progress(int(pr.Stage), toolgen.StageCount, "request sent to the backend")
			case toolgen.StageAnswered:
				msg := fmt.Sprintf("backend answered %d %s", pr.Status, http.StatusText(pr.Status))
				r.progress(int(pr.Stage), toolgen.StageCount, msg)
				if debug {
					r.log(levelDebug, map[string]any{"message": msg, "tool": tool.Name, "status": pr.Status,
						"elapsedMs": time.Since(start).Milliseconds()})
				}
			case toolgen.StageMapped:
				r.progress(int(pr.Stage), toolgen.StageCount, "response read")
			}
		}
	}
	ctx, cancel := r.callContext(c.Caller.Timeout(tool))
	defer cancel()
	res := c.Caller.CallObserved(ctx, tool, args, observe)
	if cancelled(ctx) {
		s.metrics.toolCalls.WithLabelValues("cancelled").Inc()
		return nil, errCancelled
	}
	if res == nil {
		return nil, fmt.Errorf("caller returned no result for %s", tool.Name)
	}
	if res.IsError {
		s.metrics.toolCalls.WithLabelValues("tool_error").Inc()
		if r.enabled(levelWarning) {
			r.log(levelWarning, map[string]any{"message": "tool call failed", "tool": tool.Name, "elapsedMs": time.Since(start).Milliseconds(), "error": firstText(res)})
		}
	} else {
		s.metrics.toolCalls.WithLabelValues("ok").Inc()
		if debug {
			r.log(levelDebug, map[string]any{"message": "tool call finished", "tool": tool.Name, "elapsedMs": time.Since(start).Milliseconds()})
		}
	}
	return &callToolResult{Result: res, resultMeta: s.stamp(r, false)}, nil
}

// checkQuota applies the tool-call limit; a denial is a tool result the
// model can act on (wait and retry), not a protocol error.
func (s *Server) checkQuota(r *request) *toolgen.Result {
	if s.cfg.ToolCallLimit.Unlimited() {
		return nil
	}
	d, err := s.limiter.Allow(r.ctx, r.quotaKey(), s.cfg.ToolCallLimit)
	if err != nil {
		s.log.Warn("rate limiter unavailable; letting the call through", "err", err)
		return nil
	}
	if d.Allowed {
		return nil
	}
	wait := max(d.RetryAfter.Round(100*time.Millisecond), 100*time.Millisecond)
	r.log(levelWarning, map[string]any{"message": "rate limit exceeded", "retryAfterMs": wait.Milliseconds()})
	return toolgen.ErrorResult(fmt.Sprintf("rate limit exceeded: at most %g tool calls per second (burst %d); retry in %s",
		s.cfg.ToolCallLimit.Rate, s.cfg.ToolCallLimit.Burst, wait))
}

func firstText(res *toolgen.Result) string {
	for _, c := range res.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

type listResourcesResult struct {
	Resources  []any  `json:"resources"`
	NextCursor string `json:"nextCursor,omitempty"`
	resultMeta
}

type listTemplatesResult struct {
	ResourceTemplates []any  `json:"resourceTemplates"`
	NextCursor        string `json:"nextCursor,omitempty"`
	resultMeta
}

type listPromptsResult struct {
	Prompts    []any  `json:"prompts"`
	NextCursor string `json:"nextCursor,omitempty"`
	resultMeta
}

// The gateway exposes no resources or prompts yet: lists are empty and
// lookups are "not found" in the shape each era uses.
func (s *Server) listResources(r *request) (any, error) {
	if err := checkListParams(r); err != nil {
		return nil, err
	}
	return &listResourcesResult{Resources: []any{}, resultMeta: s.stamp(r, true)}, nil
}

func (s *Server) listResourceTemplates(r *request) (any, error) {
	if err := checkListParams(r); err != nil {
		return nil, err
	}
	return &listTemplatesResult{ResourceTemplates: []any{}, resultMeta: s.stamp(r, true)}, nil
}

func (s *Server) listPrompts(r *request) (any, error) {
	if err := checkListParams(r); err != nil {
		return nil, err
	}
	return &listPromptsResult{Prompts: []any{}, resultMeta: s.stamp(r, true)}, nil
}

// checkListParams rejects any cursor: with empty lists none was ever issued.
func checkListParams(r *request) error {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(r, &p); err != nil {
		return err
	}
	if p.Cursor != nil {
		return errInvalidParams("Invalid params: unknown or expired cursor; list again from the start")
	}
	return nil
}

func (s *Server) readResource(r *request) (any, error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := decodeParams(r, &p); err != nil {
		return nil, err
	}
	if p.URI == nil {
		return nil, errInvalidParams("Invalid params for resources/read: uri is required")
	}
	code := -32002 // session era: Resource not found
	if r.era == eraStateless {
		code = codeInvalidParams // 2026-07-28 retired -32002
	}
	return nil, newError(code, "Resource not found: %s", *p.URI).withData(map[string]string{"uri": *p.URI})
}

func (s *Server) getPrompt(r *request) (any, error) {
	var p struct {
		Name *string `json:"name"`
	}
	if err := decodeParams(r, &p); err != nil {
		return nil, err
	}
	if p.Name == nil {
		return nil, errInvalidParams("Invalid params for prompts/get: name is required")
	}
	return nil, errInvalidParams("Unknown prompt: %q", *p.Name)
}

type completeResult struct {
	Completion struct {
		Values  []string `json:"values"`
		Total   int      `json:"total"`
		HasMore bool     `json:"hasMore"`
	} `json:"completion"`
	resultMeta
}

func (s *Server) complete(r *request) (any, error) {
	var p struct {
		Ref *struct {
			Type string `json:"type"`
		} `json:"ref"`
		Argument *struct {
			Name  *string `json:"name"`
			Value *string `json:"value"`
		} `json:"argument"`
	}
	if err := decodeParams(r, &p); err != nil {
		return nil, err
	}
	if p.Ref == nil || (p.Ref.Type != "ref/prompt" && p.Ref.Type != "ref/resource") {
		return nil, errInvalidParams(`Invalid params for completion/complete: ref.type must be "ref/prompt" or "ref/resource"`)
	}
	if p.Argument == nil || p.Argument.Name == nil || p.Argument.Value == nil {
		return nil, errInvalidParams("Invalid params for completion/complete: argument.name and argument.value are required")
	}
	// Nothing to complete: the gateway has no prompts or resource templates.
	res := &completeResult{resultMeta: s.stamp(r, false)}
	res.Completion.Values = []string{}
	return res, nil
}
