package tools

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/internal/lograte"
	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// Config is the feature's configuration. Zero values take the defaults
// noted on each field.
type Config struct {
	// PageSize is the number of tools per tools/list page. Zero means 100.
	PageSize int
	// CallLimit limits tools/call per client: per session in the session
	// era, per remote address in the stateless era. Zero means unlimited.
	// When the limiter's store is unreachable, calls are let through (fail
	// open) and the failure is logged.
	CallLimit quota.Limit
	// MaxConcurrent bounds the tool calls running at once on this replica
	// (each holds its backend's answer in memory). A call beyond it waits
	// up to BusyWait for a slot, then gets a "busy, retry" tool error
	// with _meta.retryAfterSeconds. Zero means unlimited.
	MaxConcurrent int
	// BusyWait is how long a call waits for a slot. Zero means 1s.
	BusyWait time.Duration
	// Policy is who may see and call what, and how much.
	Policy Policy
	// MaxInputRounds bounds how often a backend may ask for input in one
	// call. Zero means 5.
	MaxInputRounds int
	// MaxInputBytes bounds the answers passed to a backend in one round.
	// Zero: no bound.
	MaxInputBytes int
	// InputTimeout bounds the wait for the client's answers (session era).
	// Zero means 60s.
	InputTimeout time.Duration
	// MaxPending is the session's cap on waiting requests, for messages.
	MaxPending int
	// ConfirmWithoutElicitation runs calls that need confirmation for a
	// client that cannot elicit; false refuses them.
	ConfirmWithoutElicitation bool
	// ProgressHeartbeat is the interval of "still waiting" progress while
	// a backend round runs; zero or negative: none.
	ProgressHeartbeat time.Duration
	// ToolsetsEnabled are the toolsets served (toolsets_enabled); empty
	// means all. With a name the document lacks no tool is served, and
	// the error is logged (the binary refuses to start with one:
	// CheckToolsets).
	ToolsetsEnabled []string
	// ToolMode is how tools are offered unless a connection asks
	// otherwise: mcp.ToolModeAll (also for ""), ToolModeToolsets or
	// ToolModeSearch.
	ToolMode string
	// SchemaRefs is the schema dialect unless a connection asks
	// otherwise: mcp.SchemaRefsDefs (also for "") or SchemaRefsInline.
	SchemaRefs string
	// MaxDescription bounds the descriptions of the gateway's own tools
	// (max_description). Zero means 1024.
	MaxDescription int
}

// Deps are the parts the feature uses.
type Deps struct {
	// Gate enforces Config.CallLimit and the Policy's limits and quotas;
	// nil means a quota.MemoryGate.
	Gate quota.Gate
	// Logger receives the feature's own log; nil means slog.Default().
	Logger *slog.Logger
	// Input reaches the client for input in the middle of a call; nil
	// means calls that need input end with an isError result.
	Input Input
	// Sessions keeps the toolsets sessions enabled (the toolsets mode);
	// nil: enable_toolset answers as in the stateless era.
	Sessions SessionToolsets
}

// Catalog is one generation of tools: the generated set and the caller that
// runs them.
type Catalog struct {
	Tools  *toolgen.Set
	Caller *call.Caller
	// Callers run the tools of the other documents of a merged catalog
	// (several APIs on one endpoint), by tool; a tool not in it runs
	// with Caller.
	Callers map[*toolgen.Tool]*call.Caller
}

// callerFor is the caller that runs t.
func (c *Catalog) callerFor(t *toolgen.Tool) *call.Caller {
	if cl, ok := c.Callers[t]; ok {
		return cl
	}
	return c.Caller
}

type catalog struct {
	Catalog
	surfaceState
	// conf are the settings this generation serves with (Reconfigure).
	conf *settings
	tag  string // short fingerprint of the tool set, bound into cursors
	// policy is each tool's compiled rules, by name.
	policy    map[string]*toolPolicy
	authorize bool
	views     sync.Map     // scope set → the tools it sees
	viewCount atomic.Int32 // entries in views
}

// Feature serves tools/list and tools/call.
type Feature struct {
	cfg      Config
	gate     quota.Gate
	log      *slog.Logger
	current  atomic.Pointer[catalog]
	input    Input
	sessions SessionToolsets
	meta     *metaTools      // the tools of the toolsets and search modes
	logLimit lograte.Limiter // the limiter's failures, once a second
	// conf are the settings the next catalog serves with; mu orders
	// SetCatalog and Reconfigure, the writers of conf and current.
	conf atomic.Pointer[settings]
	mu   sync.Mutex
}

// settings are the Config a catalog serves with: Reconfigure replaces
// them and the catalog together, so a call reads both from the one
// catalog it loaded and the hot path costs no more loads than before.
type settings struct {
	Config
	// slots are the running-call slots (MaxConcurrent); nil: unlimited.
	// A call gives its slot back to the channel it took it from, so
	// calls running across a change of the bound count against the old.
	slots chan struct{}
}

// New returns the feature with no tools until SetCatalog is called.
func New(cfg Config, deps Deps) *Feature {
	if cfg.PageSize <= 0 {
		cfg.PageSize = 100
	}
	if cfg.BusyWait <= 0 {
		cfg.BusyWait = time.Second
	}
	if cfg.MaxInputRounds <= 0 {
		cfg.MaxInputRounds = 5
	}
	if cfg.InputTimeout <= 0 {
		cfg.InputTimeout = 60 * time.Second
	}
	if cfg.ToolMode == "" {
		cfg.ToolMode = mcp.ToolModeAll
	}
	if cfg.SchemaRefs == "" {
		cfg.SchemaRefs = mcp.SchemaRefsDefs
	}
	if cfg.MaxDescription <= 0 {
		cfg.MaxDescription = 1024
	}
	f := &Feature{
		cfg:      cfg,
		gate:     deps.Gate,
		input:    deps.Input,
		sessions: deps.Sessions,
		log:      deps.Logger,
	}
	f.meta = newMetaTools(cfg.MaxDescription)
	if f.gate == nil {
		f.gate = quota.NewMemoryGate()
	}
	conf := &settings{Config: cfg}
	if cfg.MaxConcurrent > 0 {
		conf.slots = make(chan struct{}, cfg.MaxConcurrent)
	}
	f.conf.Store(conf)
	if f.log == nil {
		f.log = slog.Default()
	}
	return f
}

// Register adds the feature's methods to the server's table.
func (f *Feature) Register(r mcp.Router) {
	r.Handle("tools/list", mcp.EraBoth, f.list)
	r.Handle("tools/call", mcp.EraBoth, f.call)
}

// SetCatalog atomically replaces the tools served.
func (f *Feature) SetCatalog(c Catalog) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setCatalog(c)
}

// Reconfigure serves the settings of cfg that may change while serving —
// CallLimit, MaxConcurrent, Policy (but its Authorize and Challenge,
// which follow the authentication set up at start), ToolsetsEnabled and
// ToolMode — with c (nil: the tools served now), in one atomic swap. The
// other fields of cfg are ignored. Check ToolsetsEnabled against c's
// tools first (CheckToolsets).
func (f *Feature) Reconfigure(cfg Config, c *Catalog) {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.conf.Load()
	n := &settings{Config: old.Config, slots: old.slots}
	n.CallLimit, n.ToolsetsEnabled = cfg.CallLimit, cfg.ToolsetsEnabled
	if cfg.ToolMode != "" {
		n.ToolMode = cfg.ToolMode
	}
	n.Policy = cfg.Policy
	n.Policy.Authorize, n.Policy.Challenge = old.Policy.Authorize, old.Policy.Challenge
	if cfg.MaxConcurrent != old.MaxConcurrent {
		n.MaxConcurrent, n.slots = cfg.MaxConcurrent, nil
		if cfg.MaxConcurrent > 0 {
			n.slots = make(chan struct{}, cfg.MaxConcurrent)
		}
	}
	f.conf.Store(n)
	if c == nil {
		cur := f.current.Load()
		if cur == nil {
			return
		}
		c = &cur.Catalog
	}
	f.setCatalog(*c)
}

func (f *Feature) setCatalog(c Catalog) {
	conf := f.conf.Load()
	cat := &catalog{Catalog: c, tag: toolSetTag(c.Tools), conf: conf,
		policy: compilePolicy(&conf.Policy, c.Tools), authorize: conf.Policy.Authorize}
	if err := cat.initSurfaces(&conf.Config); err != nil {
		// Checked before a catalog is built (CheckToolsets): only a
		// caller that skipped it gets here. Serve no toolset rather than
		// more than the operator chose.
		f.log.Error("toolsets_enabled names toolsets the document lacks; serving no tools", "err", err)
		cat.toolsets, cat.served = map[string]*toolgen.Toolset{}, map[string]bool{}
	}
	if conf.SchemaRefs == mcp.SchemaRefsInline && c.Tools != nil {
		// Inlining a large API takes a while (GitHub's: most of a
		// second): here, not on the first client's tools/list.
		c.Tools.InlineTools()
	}
	f.current.Store(cat)
}

// catalog returns the loaded catalog or the error to answer with.
func (f *Feature) catalog() (*catalog, error) {
	c := f.current.Load()
	if c == nil || c.Tools == nil {
		return nil, mcp.NewError(mcp.CodeUnavailable, "Service Unavailable: the OpenAPI document is not loaded yet").WithStatus(http.StatusServiceUnavailable)
	}
	return c, nil
}

type listResult struct {
	Tools      []*toolgen.Tool `json:"tools"`
	NextCursor string          `json:"nextCursor,omitempty"`
	mcp.ResultMeta
}

func (f *Feature) list(r *mcp.Request) (any, error) {
	var p mcp.ListParams
	if err := mcp.DecodeParams(r, &p); err != nil {
		return nil, err
	}
	c, err := f.catalog()
	if err != nil {
		return nil, err
	}
	all, err := f.listed(r, c)
	if err != nil {
		return nil, err
	}
	start := 0
	if p.Cursor != nil {
		if start, err = mcp.DecodeCursor(*p.Cursor, c.tag, len(all)); err != nil {
			return nil, err
		}
	}
	end := min(start+c.conf.PageSize, len(all))
	res := &listResult{Tools: all[start:end], ResultMeta: r.StampResult(true)}
	if (c.authorize || !r.Surface.IsZero()) && res.CacheScope != "" {
		// What a caller sees depends on its scopes.
		res.CacheScope = "private"
	}
	if end < len(all) {
		res.NextCursor = mcp.EncodeCursor(c.tag, end)
	}
	return res, nil
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

// call runs one tools/call. Its result is a *mcp.PooledResult: the
// transport releases it once the response is written.
func (f *Feature) call(r *mcp.Request) (any, error) {
	name, args, err := r.NamedCall()
	if err != nil {
		return nil, err
	}
	if name == nil || *name == "" {
		return nil, mcp.InvalidParams("Invalid params for tools/call: name is required")
	}
	if a := bytes.TrimSpace(args); len(a) > 0 && a[0] != '{' && !bytes.Equal(a, []byte("null")) {
		return nil, mcp.InvalidParams("Invalid params for tools/call: arguments must be an object")
	}
	c, err := f.catalog()
	if err != nil {
		return nil, err
	}
	var tool *toolgen.Tool
	if c.plain && r.Surface.IsZero() {
		// What the operator serves, as it is: no view to consult.
		var ok bool
		if tool, ok = c.Tools.Lookup(*name); !ok {
			return nil, mcp.InvalidParams("Unknown tool: %q", *name)
		}
	} else {
		s := f.surfaceOf(c, r)
		if isMeta(s.ToolMode, *name) {
			if *name != toolgen.ToolCallOperation {
				return f.metaCall(r, c, s, *name, args)
			}
			op, opArgs, err := unwrapCallOperation(args)
			if err != nil {
				return f.metaResult(r, mcp.ErrorResult(err.Error())), nil
			}
			// From here on it is a call of the operation: its scopes,
			// limits, quotas and audit record are the operation's.
			name, args = &op, opArgs
			r.Meta.Name, r.Meta.Arguments = name, args
		}
		if tool, err = f.surfaceTool(r, c, s, *name); err != nil {
			return nil, err
		}
	}
	tp := c.policy[tool.Name]
	if tp != nil && !granted(r.Principal, tp.scopes) {
		return nil, f.insufficientScope(r, tool.Name, tp.scopes)
	}
	var slot *slotHold
	if slots := c.conf.slots; slots != nil {
		if !f.takeSlot(r, slots) {
			return f.busy(r, c.conf), nil
		}
		slot = &slotHold{f: f, slots: slots, held: true}
		defer slot.release()
	}
	// After the slot: a call turned away busy spends no rate-limit token.
	if tp != nil {
		release, d := f.limit(r, c, tool, tp)
		if d != nil {
			return mcp.Pooled(d.result(r)).SetDenied(d.reason()), nil
		}
		if release != nil {
			defer release()
		}
	}
	debug := r.Enabled(mcp.LevelDebug)
	if debug {
		method, path := tool.Route()
		r.Log(mcp.LevelDebug, map[string]any{"message": "calling backend", "tool": tool.Name, "request": method + " " + path})
	}
	start := time.Now()
	// Observing the exchange costs a little; do it only for a client that
	// wants progress or log messages.
	var observe call.Observer
	if debug || r.WantsProgress() || r.Enabled(mcp.LevelEmergency) {
		observe = newReporter(r, tool.Name, start, debug).observe
	}
	// The outcome is counted where the audit record classifies it (the
	// gateway's call middleware): one classification for both.
	out, err := f.run(r, c, tool, args, observe, slot)
	if err != nil {
		return nil, err
	}
	res, ok := out.(*mcp.PooledResult)
	if !ok {
		return out, nil // input_required
	}
	switch {
	case res.Denied() != "":
		// A refusal (busy, declined): its result says why.
	case res.IsError():
		if r.Enabled(mcp.LevelWarning) {
			r.Log(mcp.LevelWarning, map[string]any{"message": "tool call failed", "tool": tool.Name,
				"elapsedMs": time.Since(start).Milliseconds(), "error": res.Copy().FirstText()})
		}
	case debug:
		r.Log(mcp.LevelDebug, map[string]any{"message": "tool call finished", "tool": tool.Name, "elapsedMs": time.Since(start).Milliseconds()})
	}
	res.SetMeta(r.StampResult(false))
	return res, nil
}

// callContext is the context a call of tool on r's behalf runs in: the
// operation's timeout, r's cancellation, and r's token for RFC 8693
// exchange (which sends it only to the exchange endpoint, never to the
// backend).
func callContext(r *mcp.Request, c *catalog, tool *toolgen.Tool) (context.Context, context.CancelFunc) {
	ctx, cancel := r.CallContext(c.callerFor(tool).Timeout(tool), call.ErrTimeout)
	if r.Principal != nil && r.Principal.Token != "" {
		ctx = call.WithSubjectToken(ctx, r.Principal.Subject, r.Principal.Token)
	}
	return ctx, cancel
}

// limit admits r's call of tool past the rate limits, quotas and
// concurrency slots, then the policy webhook; release (when not nil) gives
// its slot back once the call is done. A denial is logged to the client.
func (f *Feature) limit(r *mcp.Request, c *catalog, tool *toolgen.Tool, tp *toolPolicy) (release func(), d *denial) {
	release, d = f.admit(r, c.conf, tool, tp, c.callerFor(tool).Timeout(tool))
	if d == nil && c.conf.Policy.Webhook != nil {
		// After the limits: a call they refuse costs the hook nothing.
		if d = f.ask(r, c.conf.Policy.Webhook, tool.Name); d != nil && release != nil {
			release()
			release = nil
		}
	}
	if d != nil {
		r.Log(mcp.LevelWarning, map[string]any{"message": d.message, "kind": d.kind})
	}
	return release, d
}

// busy is the "retry later" result of a call that found no free slot.
func (f *Feature) busy(r *mcp.Request, conf *settings) *mcp.PooledResult {
	res := mcp.ErrorResult(fmt.Sprintf("the gateway is busy: %d tool calls are running on this replica; retry in 1s", conf.MaxConcurrent))
	res.ResultMeta = retryAfter(r, 1)
	return mcp.Pooled(res).SetDenied("busy")
}

// slotHold is a call's running-call slot, given back while the call waits
// for a human (an elicitation may take a minute) and taken again for its
// next backend round. A nil slotHold holds nothing.
type slotHold struct {
	f     *Feature
	slots chan struct{}
	held  bool
}

func (h *slotHold) release() {
	if h != nil && h.held {
		h.held = false
		<-h.slots
	}
}

// retake reports false when no slot came free in time.
func (h *slotHold) retake(r *mcp.Request) bool {
	if h == nil || h.held {
		return true
	}
	h.held = h.f.takeSlot(r, h.slots)
	return h.held
}

// takeSlot takes a running-call slot: at once when one is free (the
// common case costs no timer), else waiting up to BusyWait. It reports
// false when none came free, or the request ended meanwhile.
func (f *Feature) takeSlot(r *mcp.Request, slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(f.cfg.BusyWait)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-r.Ctx.Done():
		return false
	}
}

// retryAfter is the result fields of a "retry later" tool error: the
// era's own, and _meta.retryAfterSeconds.
func retryAfter(r *mcp.Request, seconds int) mcp.ResultMeta {
	m := r.StampResult(false)
	meta := make(map[string]any, len(m.Meta)+1)
	maps.Copy(meta, m.Meta) // the stamper's map is shared
	meta["retryAfterSeconds"] = seconds
	m.Meta = meta
	return m
}
