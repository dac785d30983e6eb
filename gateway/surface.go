package gateway

// A connection's choice of what it is served (mcp.Surface): the headers
// X-MCP-Toolsets, X-MCP-Readonly, X-MCP-Tool-Mode and X-MCP-Schema-Refs,
// and the paths {mount_path}/x/{toolset}[,{toolset}…][/readonly] and
// {mount_path}/readonly. A stateless request is served what its own
// headers and path say; a session what its initialize said, for its
// whole life (a later request cannot widen it). Toolsets a session
// enables in the toolsets mode are kept in its record.

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/tools"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// The per-connection headers.
const (
	HeaderToolsets   = "X-MCP-Toolsets"
	HeaderReadOnly   = "X-MCP-Readonly"
	HeaderToolMode   = "X-MCP-Tool-Mode"
	HeaderSchemaRefs = "X-MCP-Schema-Refs"
)

// The headers' canonical forms, looked up without canonicalizing (which
// allocates) on every request.
var (
	canonToolsets   = http.CanonicalHeaderKey(HeaderToolsets)
	canonReadOnly   = http.CanonicalHeaderKey(HeaderReadOnly)
	canonToolMode   = http.CanonicalHeaderKey(HeaderToolMode)
	canonSchemaRefs = http.CanonicalHeaderKey(HeaderSchemaRefs)
)

// maxSurfaceToolsets bounds the toolsets one connection may name.
const maxSurfaceToolsets = 64

type pathSurfaceKey struct{}

// pathSurface is what a request's path chose: toolsets (nil: none named)
// and read-only.
type pathSurface struct {
	toolsets []string
	readOnly bool
}

// serveNarrowed serves the endpoint narrowed by its path: toolsets, when
// the path names some (/x/a,b), and read-only (…/readonly).
func (s *Server) serveNarrowed(w http.ResponseWriter, r *http.Request, toolsets *string, readOnly bool) {
	ps := pathSurface{readOnly: readOnly}
	if toolsets != nil {
		if ps.toolsets = splitToolsets(*toolsets); len(ps.toolsets) == 0 {
			s.fail(w, r, nil, reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Bad Request: the path names no toolset (%s/x/{toolset}[,{toolset}…])", mcp.Verbatim(s.cfg.MountPath)))
			return
		}
	}
	s.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pathSurfaceKey{}, ps)))
}

func splitToolsets(v string) []string {
	var out []string
	for _, part := range strings.Split(v, ",") {
		if p := strings.ToLower(strings.TrimSpace(part)); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// requestSurface reads the surface an HTTP request asks for and checks it
// against what the gateway serves: an unknown toolset, mode or dialect,
// or a malformed header, is a 400 naming it.
func (s *Server) requestSurface(r *http.Request) (mcp.Surface, error) {
	var sf mcp.Surface
	bad := func(format string, args ...any) error {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, "Bad Request: "+format, args...)
	}
	ps, byPath := r.Context().Value(pathSurfaceKey{}).(pathSurface)
	if len(ps.toolsets) > maxSurfaceToolsets || len(r.Header.Values(HeaderToolsets)) > maxSurfaceToolsets {
		return sf, bad("at most %d toolsets may be named", maxSurfaceToolsets)
	}
	if !byPath && len(r.Header[canonToolsets]) == 0 && len(r.Header[canonReadOnly]) == 0 &&
		len(r.Header[canonToolMode]) == 0 && len(r.Header[canonSchemaRefs]) == 0 {
		return sf, nil // the common case: the operator's choice
	}
	sf.Toolsets, sf.ReadOnly = ps.toolsets, ps.readOnly
	if err := s.tools.CheckSurface(mcp.Surface{Toolsets: ps.toolsets}); err != nil {
		return sf, bad("the path: %s", mcp.Verbatim(err.Error()))
	}
	if named := splitToolsets(strings.Join(r.Header.Values(HeaderToolsets), ",")); len(named) > 0 {
		if err := s.tools.CheckSurface(mcp.Surface{Toolsets: named}); err != nil {
			return sf, bad("%s: %s", HeaderToolsets, mcp.Verbatim(err.Error()))
		}
		if sf.Toolsets == nil {
			sf.Toolsets = named
		} else {
			// Path and header both narrow: what both name.
			sf.Toolsets = slices.DeleteFunc(sf.Toolsets, func(n string) bool { return !slices.Contains(named, n) })
			if len(sf.Toolsets) == 0 {
				return sf, bad("the path and %s name no toolset in common", HeaderToolsets)
			}
		}
	}
	if len(sf.Toolsets) > maxSurfaceToolsets {
		return sf, bad("at most %d toolsets may be named", maxSurfaceToolsets)
	}
	if v := strings.TrimSpace(r.Header.Get(HeaderReadOnly)); v != "" {
		ro, err := strconv.ParseBool(v)
		if err != nil {
			return sf, bad("%s must be true or false", HeaderReadOnly)
		}
		// Only narrows: false leaves a read-only path read-only.
		sf.ReadOnly = sf.ReadOnly || ro
	}
	sf.ToolMode = strings.ToLower(strings.TrimSpace(r.Header.Get(HeaderToolMode)))
	sf.SchemaRefs = strings.ToLower(strings.TrimSpace(r.Header.Get(HeaderSchemaRefs)))
	if err := s.tools.CheckSurface(mcp.Surface{ToolMode: sf.ToolMode}); err != nil {
		return sf, bad("%s: %s", HeaderToolMode, mcp.Verbatim(err.Error()))
	}
	if err := s.tools.CheckSurface(mcp.Surface{SchemaRefs: sf.SchemaRefs}); err != nil {
		return sf, bad("%s: %s", HeaderSchemaRefs, mcp.Verbatim(err.Error()))
	}
	return sf, nil
}

// storedSurface is a surface as a session record keeps it.
func storedSurface(sf mcp.Surface) *sessions.Surface {
	if sf.IsZero() {
		return nil
	}
	return &sessions.Surface{Toolsets: sf.Toolsets, ReadOnly: sf.ReadOnly, ToolMode: sf.ToolMode, SchemaRefs: sf.SchemaRefs}
}

// sessionSurface is the surface a session's record says.
func sessionSurface(sess *sessions.Session) mcp.Surface {
	var sf mcp.Surface
	if st := sess.Surface; st != nil {
		sf = mcp.Surface{Toolsets: st.Toolsets, ReadOnly: st.ReadOnly, ToolMode: st.ToolMode, SchemaRefs: st.SchemaRefs}
	}
	sf.Enabled = sess.Toolsets
	return sf
}

// sessionToolsets keeps the toolsets sessions enabled in their records
// (tools.SessionToolsets).
type sessionToolsets struct{ s *Server }

// maxEnabledToolsets bounds a session's enabled toolsets (the record's size).
const maxEnabledToolsets = 256

func (st sessionToolsets) Enable(r *mcp.Request, names []string) ([]string, error) {
	s := st.s
	var now []string
	sess, err := s.updateSession(r.Ctx, r.SessionID, func(x *sessions.Session) error {
		for _, n := range names {
			if !slices.Contains(x.Toolsets, n) {
				if len(x.Toolsets) >= maxEnabledToolsets {
					return errTooManyToolsets
				}
				x.Toolsets = append(x.Toolsets, n)
			}
		}
		return nil
	})
	if errors.Is(err, errTooManyToolsets) {
		return nil, mcp.InvalidParams("this session has %d toolsets enabled, the most it may", maxEnabledToolsets)
	}
	if err != nil {
		return nil, err
	}
	now = slices.Clone(sess.Toolsets)
	// On the session's push stream, which any replica may hold.
	if err := s.appendNotification(r.Ctx, r.SessionID, "notifications/tools/list_changed", nil); err != nil {
		s.logLimited(r.Ctx, slog.LevelWarn, "appending list_changed to a session stream failed", "err", err, "session", shortID(r.SessionID))
	}
	return now, nil
}

// errTooManyToolsets refuses an enable beyond maxEnabledToolsets.
var errTooManyToolsets = errors.New("too many toolsets enabled")

func (st sessionToolsets) Enabled(r *mcp.Request) ([]string, error) {
	sess, err := st.s.store.Get(r.Ctx, r.SessionID)
	if err != nil {
		return nil, storeError(err)
	}
	st.s.cache.put(sess, time.Now())
	return sess.Toolsets, nil
}

// CheckToolsets reports toolsets_enabled names the set lacks, naming
// them and the toolsets it has.
func CheckToolsets(set *toolgen.Set, names []string) error { return tools.CheckToolsets(set, names) }

// ServedTools are the tools of list (the set's Tools or InlineTools) in
// the toolsets enabled names; all of list when it is empty.
func ServedTools(set *toolgen.Set, enabled []string, list []*toolgen.Tool) []*toolgen.Tool {
	return tools.ServedTools(set, enabled, list)
}
