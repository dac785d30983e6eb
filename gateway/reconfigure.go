package gateway

// Changing settings while serving (the binary's SIGHUP): the limits, the
// policy, the session caps, the toolsets served, the default tool mode
// and the declared prompts and resources. Sessions and open streams stay
// as they are; each request reads the settings it needs from the one
// generation it loaded (the tools feature keeps its settings with its
// catalog), so a reload costs the hot path nothing.

import (
	"fmt"

	"github.com/mcp-gateway/mcp-gateway/gateway/prompts"
	"github.com/mcp-gateway/mcp-gateway/gateway/resources"
	"github.com/mcp-gateway/mcp-gateway/gateway/tools"
)

// runtimeSettings are the server-level settings Reconfigure replaces.
type runtimeSettings struct {
	maxSessionsPerClient, maxSessions int
	sessionConcurrency                int
	prompts                           []prompts.Declared
	resources                         []resources.Declared
}

// settings are the server-level settings served now (New stores the
// first, so a request never builds them).
func (s *Server) settings() *runtimeSettings { return s.runtime.Load() }

func settingsOf(cfg *Config) *runtimeSettings {
	return &runtimeSettings{maxSessionsPerClient: cfg.MaxSessionsPerClient, maxSessions: cfg.MaxSessions,
		sessionConcurrency: cfg.Policy.SessionConcurrency, prompts: cfg.Prompts, resources: cfg.Resources}
}

// CheckReconfigure reports what would make Reconfigure(cfg, c) fail (an
// invalid policy, tool mode, prompt or resource, or toolsets c lacks),
// changing nothing: a caller swapping several servers checks them all
// before it swaps any.
func (s *Server) CheckReconfigure(cfg Config, c Catalog) error {
	if err := cfg.Policy.Validate(); err != nil {
		return err
	}
	if cfg.ToolMode != "" && !tools.ValidToolMode(cfg.ToolMode) {
		return fmt.Errorf("tool mode %q: must be all, toolsets or search", cfg.ToolMode)
	}
	if c.Tools != nil {
		if err := tools.CheckToolsets(c.Tools, cfg.ToolsetsEnabled); err != nil {
			return err
		}
	}
	if err := prompts.Check(cfg.Prompts); err != nil {
		return err
	}
	return resources.Check(cfg.Resources)
}

// Reconfigure serves the settings of cfg that may change while serving,
// with the catalog c (built under them: its tools filtered as cfg says),
// and returns the announcement of what changed to clients with a stream
// on this replica (list_changed, once per session and c.Version): call it
// once the swap should be known. Sessions, streams and calls in flight
// are kept; a call running during the swap finishes under the settings it
// started with.
//
// What changes: ToolCallLimit, MaxConcurrentCalls, MaxSessionsPerClient,
// MaxSessions, Policy (but Authorize and Challenge, which follow the
// authentication set up at New), ToolsetsEnabled, ToolMode, Prompts and
// Resources. An empty ToolMode keeps the mode served now. Every other
// field of cfg is ignored. Session caps apply only when the server counts
// sessions (Deps.Sessions, or caps set at New). An error (what
// CheckReconfigure reports) changes nothing.
func (s *Server) Reconfigure(cfg Config, c Catalog) (announce func(), err error) {
	if err := s.CheckReconfigure(cfg, c); err != nil {
		return nil, err
	}
	s.reconfigureMu.Lock()
	defer s.reconfigureMu.Unlock()
	old := s.settings()
	before := s.views()
	// Checked above: these compile.
	if err := s.prompts.SetDeclared(cfg.Prompts); err != nil {
		return nil, err
	}
	if err := s.resources.SetDeclared(cfg.Resources); err != nil {
		_ = s.prompts.SetDeclared(old.prompts) // served until now: compiles
		return nil, err
	}
	s.runtime.Store(settingsOf(&cfg))
	s.swapCatalog(c, &tools.Config{CallLimit: cfg.ToolCallLimit, MaxConcurrent: cfg.MaxConcurrentCalls, Policy: cfg.Policy,
		ToolsetsEnabled: cfg.ToolsetsEnabled, ToolMode: cfg.ToolMode})
	return func() { s.announceListChanges(before, c.Version) }, nil
}
