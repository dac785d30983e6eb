package gateway

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/mcp-gateway/mcp-gateway/gateway/completion"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/mcp-gateway/gateway/prompts"
	"github.com/mcp-gateway/mcp-gateway/gateway/resources"
	"github.com/mcp-gateway/mcp-gateway/gateway/tools"
	"github.com/mcp-gateway/mcp-gateway/gateway/watch"
	"github.com/mcp-gateway/mcp-gateway/internal/lograte"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/pubsub/lease"
	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/sessions/pending"
	"github.com/mcp-gateway/mcp-gateway/sessions/subscriptions"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// Config is the gateway's own configuration. Zero values take the defaults
// noted on each field; New validates it once.
type Config struct {
	// MountPath is where MCP is served. Empty means "/mcp".
	MountPath string
	// ListenAddr is the address the HTTP server is bound to. The transport
	// uses it only to decide whether Host must be a loopback name.
	ListenAddr string
	// AllowedOrigins lists the Origin values browsers may send ("*" allows
	// any). Empty means loopback origins when bound to loopback, none
	// otherwise. A request without Origin is always accepted.
	AllowedOrigins []string
	// AllowedHosts lists extra Host names (without port) accepted when bound
	// to loopback, e.g. a name a local proxy uses.
	AllowedHosts []string
	// PageSize is the number of tools per tools/list page. Zero means 100.
	PageSize int
	// MaxBodyBytes caps a POST body. Zero means 4 MiB.
	MaxBodyBytes int64
	// MaxBatch is the most messages a JSON-RPC batch (2025-03-26) may
	// hold. Zero means 50.
	MaxBatch int
	// MaxResponseBytes bounds a batch's whole answer; members beyond it
	// get an error instead of their result. Zero means 16 MiB.
	MaxResponseBytes int64
	// ReadTimeout bounds how long a POST body may take to arrive (the
	// headers are bounded by the HTTP server's ReadHeaderTimeout). Zero
	// means 30s; negative means no bound. Streams the gateway sends are
	// not affected.
	ReadTimeout time.Duration
	// SSEKeepAlive is the interval of keep-alive comments on idle SSE
	// streams. Zero means 15s; negative disables them.
	SSEKeepAlive time.Duration
	// SessionTTL is the idle lifetime of a session. Zero means 30 minutes.
	// A store passed in Deps must expire sessions after StoreTTL(SessionTTL).
	SessionTTL time.Duration
	// DisableSessionDelete makes DELETE answer 405 instead of ending sessions.
	DisableSessionDelete bool
	// ServerName and ServerVersion are reported in serverInfo.
	// Empty means "mcp-gateway" and "dev".
	ServerName, ServerVersion string
	// Instructions, when set, is returned to clients on initialize/discover.
	Instructions string
	// ListTTL is the ttlMs hint on 2026-07-28 list results. Zero means 5 minutes.
	ListTTL time.Duration
	// ToolCallLimit limits tools/call per client: per session in the session
	// era, per remote address in the stateless era. Zero means unlimited.
	// When the limiter's store is unreachable, calls are let through (fail
	// open) and the failure is logged.
	ToolCallLimit quota.Limit
	// MaxConcurrentCalls bounds the tool calls running at once on this
	// replica; a call beyond it waits up to a second, then gets a "busy,
	// retry" tool error. Zero means unlimited.
	MaxConcurrentCalls int
	// DisableLegacySSE turns off the 2024-11-05 HTTP+SSE transport
	// (served by default at LegacySSEPath and LegacyMessagesPath).
	DisableLegacySSE bool
	// LegacySSEPath is where a 2024-11-05 client opens its event stream.
	// Empty means MountPath + "/sse".
	LegacySSEPath string
	// LegacyMessagesPath is where a 2024-11-05 client posts its messages
	// (?sessionId=...). Empty means MountPath + "/messages".
	LegacyMessagesPath string
	// LegacySSEGrace is how long a 2024-11-05 session outlives its closed
	// stream, for the client to reconnect with Last-Event-ID. Zero means
	// 30s (at most SessionTTL).
	LegacySSEGrace time.Duration
	// StoreTimeout bounds every call to the session store and the bus: a
	// request that needs the store fails with 503 after it, rather than
	// hanging on a stalled Redis. Zero means 1s.
	StoreTimeout time.Duration
	// SessionCacheTTL is how long a replica trusts its cached copy of a
	// session record without asking the store (invalidations from the
	// other replicas drop it sooner). Past it the copy still serves while
	// a background refresh runs, up to 15 times this long, so a slow store
	// does not stall calls; a session ended elsewhere whose invalidation
	// was lost thus answers at most one more request per replica while
	// the store answers. Zero means 2s.
	SessionCacheTTL time.Duration
	// IdentityHeader, when set, names a header (X-Forwarded-For, say)
	// whose first value is an unauthenticated caller's identity instead of
	// the remote address. Only a proxy that strips it from untrusted
	// traffic makes this safe.
	IdentityHeader string
	// MaxSessionsPerClient caps the open sessions of one caller identity
	// (mcp.Request.Identity); initialize beyond it gets 429. Zero: no cap.
	MaxSessionsPerClient int
	// MaxSessions caps the open sessions of the whole deployment (every
	// replica sharing the store). Zero: no cap.
	MaxSessions int
	// Policy is who may see and call which tool, and how much.
	Policy tools.Policy
	// Resources and Prompts are the declared ones (YAML resources: and
	// prompts:), served beside the built-in resources.
	Resources []resources.Declared
	Prompts   []prompts.Declared
	// SubscriptionPollInterval is how often a subscribed resource that can
	// change is polled for changes (by one replica), unless it says
	// otherwise. Zero means 30s.
	SubscriptionPollInterval time.Duration
	// SubscriptionLeaseTTL is how long a replica's claim to poll a URI
	// lasts unrenewed: a dead replica's polling moves to another within
	// twice this. Zero means 15s.
	SubscriptionLeaseTTL time.Duration
	// MaxSubscriptions caps one session's resource subscriptions. Zero
	// means subscriptions.DefaultMaxPerSubscriber (1000), the cap a store
	// in Deps has when made with zero Limits.
	MaxSubscriptions int
	// WebhookSecret, when set, serves POST WebhookPath: change events
	// from the backend signed with it (HMAC-SHA256).
	WebhookSecret []byte
	// WebhookPath is where those events come. Empty means
	// /webhooks/resources (the package's WebhookPath).
	WebhookPath string
	// NoRootResourceMetadata serves the protected resource metadata only
	// at its path + MountPath, not at the bare well-known path (which one
	// of several gateways on a listener serves).
	NoRootResourceMetadata bool
	// Replica names this replica (leases, listen subscriptions, the bus
	// topic client answers are routed to). Empty means a random name.
	Replica string
	// ServerRequestTimeout bounds how long a call waits for the client's
	// answer to a server→client request (session era), and how long a
	// 2026-07-28 requestState stays valid. Zero means 60s.
	ServerRequestTimeout time.Duration
	// MaxPendingPerSession caps a session's server→client requests
	// waiting for answers (all replicas); one more is refused. Zero means
	// 100.
	MaxPendingPerSession int
	// MaxInputRounds bounds how often a backend may ask for input in one
	// call. Zero means 5.
	MaxInputRounds int
	// MaxInputBytes bounds the client's answers passed to a backend in
	// one round. Zero means 64 KiB.
	MaxInputBytes int
	// ConfirmWithoutElicitation lets calls that need the user's
	// confirmation run when the client cannot elicit (confirm_without_
	// elicitation: allow); false refuses them (deny, the default).
	ConfirmWithoutElicitation bool
	// ProgressHeartbeat is the interval of the progress notifications a
	// slow call sends while it waits for its backend, to a client that
	// asked for progress. Zero means 10s; negative disables them.
	ProgressHeartbeat time.Duration
	// KeepCallsOnDisconnect keeps a session-era call running when the
	// client closes its POST (cancel_on_disconnect: false); by default
	// the call is cancelled as by notifications/cancelled.
	KeepCallsOnDisconnect bool
	// API names the API this server serves when the process serves
	// several (the apis list): audit records carry it. Empty for one.
	API string
	// ToolsetsEnabled are the toolsets served (toolsets_enabled); empty
	// means all. Check the names first (tools.CheckToolsets): the
	// gateway serves no tools with a name its document lacks.
	ToolsetsEnabled []string
	// ToolMode is how tools are offered unless a connection asks
	// otherwise (tool_mode): all (also for ""), toolsets or search.
	ToolMode string
	// SchemaRefs is the schema dialect of tool schemas unless a
	// connection asks otherwise (schema_refs): defs (also for "") or
	// inline.
	SchemaRefs string
	// MaxDescription bounds the descriptions of the gateway's own tools
	// (max_description, as for generated ones). Zero means 1024.
	MaxDescription int
	// SessionSampleInterval is how often the open sessions are counted
	// for mcpgw_active_sessions (one ZCOUNT in Redis). Zero means 15s.
	SessionSampleInterval time.Duration
	// StateKey is the 32-byte key that seals 2026-07-28 requestState
	// (state_key_file). Empty means one generated once per deployment and
	// kept in the store.
	StateKey []byte
}

func (c Config) withDefaults() Config {
	if c.MountPath == "" {
		c.MountPath = "/mcp"
	}
	if c.PageSize <= 0 {
		c.PageSize = 100
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 4 << 20
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 50
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = 16 << 20
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 30 * time.Second
	}
	if c.SSEKeepAlive == 0 {
		c.SSEKeepAlive = 15 * time.Second
	}
	if c.SessionTTL <= 0 {
		c.SessionTTL = 30 * time.Minute
	}
	if c.ServerName == "" {
		c.ServerName = "mcp-gateway"
	}
	if c.ServerVersion == "" {
		c.ServerVersion = "dev"
	}
	if c.ListTTL <= 0 {
		c.ListTTL = 5 * time.Minute
	}
	if c.LegacySSEGrace <= 0 {
		c.LegacySSEGrace = min(30*time.Second, c.SessionTTL)
	}
	base := strings.TrimSuffix(c.MountPath, "/")
	if c.LegacySSEPath == "" {
		c.LegacySSEPath = base + "/sse"
	}
	if c.LegacyMessagesPath == "" {
		c.LegacyMessagesPath = base + "/messages"
	}
	if c.StoreTimeout <= 0 {
		c.StoreTimeout = time.Second
	}
	if c.WebhookPath == "" {
		c.WebhookPath = WebhookPath
	}
	if c.SessionCacheTTL <= 0 {
		c.SessionCacheTTL = 2 * time.Second
	}
	if c.Replica == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		c.Replica = "r" + hex.EncodeToString(b[:])
	}
	if c.ServerRequestTimeout <= 0 {
		c.ServerRequestTimeout = 60 * time.Second
	}
	if c.MaxPendingPerSession <= 0 {
		c.MaxPendingPerSession = 100
	}
	if c.MaxInputRounds <= 0 {
		c.MaxInputRounds = 5
	}
	if c.MaxInputBytes <= 0 {
		c.MaxInputBytes = 64 << 10
	}
	if c.ProgressHeartbeat == 0 {
		c.ProgressHeartbeat = 10 * time.Second
	}
	if c.MaxSubscriptions <= 0 {
		c.MaxSubscriptions = subscriptions.DefaultMaxPerSubscriber // the store's, when it comes in Deps
	}
	return c
}

// Deps are the parts the gateway is wired from.
type Deps struct {
	// Store holds sessions; nil means a sessions.Memory with Config.SessionTTL.
	Store sessions.Store
	// Bus carries wake-up hints; nil means a pubsub.Memory.
	Bus pubsub.Bus
	// Gate enforces Config.ToolCallLimit and Config.Policy's limits and
	// quotas; nil means a quota.MemoryGate.
	Gate quota.Gate
	// Sessions counts open sessions for MaxSessionsPerClient and
	// MaxSessions; nil means a quota.MemorySessionCounter.
	Sessions quota.SessionCounter
	// Auth authenticates every request to an MCP endpoint; nil means no
	// authentication (every caller is anonymous).
	Auth Authenticator
	// ResourceMetadata, when set, is served at
	// /.well-known/oauth-protected-resource and at that path + MountPath
	// (RFC 9728).
	ResourceMetadata http.Handler
	// Subscriptions keeps resource subscriptions; nil means a
	// subscriptions.Memory (one replica).
	Subscriptions subscriptions.Store
	// Lease holds the leases that make one replica poll each URI; nil
	// means a lease.Memory (one replica).
	Lease lease.Lease
	// Pending records the server→client requests waiting for answers, the
	// spent 2026-07-28 requestStates and the shared state key; nil means
	// a pending.Memory (one replica).
	Pending pending.Store
	// Audit receives one record per tools/call; nil means none.
	Audit *audit.Writer
	// Logger receives the gateway's own log; nil means slog.Default().
	Logger *slog.Logger
	// Metrics, when set, receives the gateway's Prometheus collectors.
	Metrics prometheus.Registerer
	// TracerProvider, when set, makes a server span of every JSON-RPC
	// request (trace.go); nil means no tracing, at no cost.
	TracerProvider TracerProvider
	// Middleware wraps every JSON-RPC request's handler, in order: the first
	// listed runs first. Every request of either era passes through it,
	// batch members, initialize and subscriptions/listen (before its stream
	// opens) included, and so does a request for a method the gateway does
	// not serve (its handler answers "method not found"). Notifications
	// (notifications/initialized, notifications/cancelled) and responses are
	// not requests and do not pass it: the transport applies them to the
	// session they name. Nil means none.
	Middleware []mcp.Middleware
}

// Catalog is one generation of the tools the gateway serves: the document,
// the tools generated from it and the caller that runs them.
type Catalog struct {
	Doc    *openapi.Document
	Tools  *toolgen.Set
	Caller *call.Caller
	// Callers run the tools of other documents than Doc, for several
	// APIs on one endpoint (toolgen.Merge); a tool not in it runs with
	// Caller.
	Callers map[*toolgen.Tool]*call.Caller
	// Version names the document's version (its content hash); a reload
	// that changes what a client sees tells it once per version.
	Version string
}

// Server serves MCP. Create it with New, mount Handler, and call Run.
type Server struct {
	cfg     Config
	store   sessions.Store
	bus     pubsub.Bus
	gate    quota.Gate
	counter quota.SessionCounter
	auth    Authenticator
	prm     http.Handler
	audit   *audit.Writer
	log     *slog.Logger
	origin  originPolicy
	// tracer is nil when tracing is off (trace.go).
	tracer tracer

	catalog atomic.Pointer[Catalog]
	// runtime are the server-level settings served (cfg's until
	// Reconfigure); reconfigureMu orders Reconfigure and ReplaceCatalog.
	runtime       atomic.Pointer[runtimeSettings]
	reconfigureMu sync.Mutex
	cache         *sessionCache
	metrics       *metrics
	// sessionCount counts the deployment's sessions for
	// mcpgw_active_sessions; nil: not counted.
	sessionCount sessionCounter

	// methods is the dispatch table: filled by New (the server's own
	// methods and each feature's), read-only once serving.
	methods    map[string]method
	middleware []mcp.Middleware
	notFound   mcp.Handler // the chain around the method-not-found answer
	tools      *tools.Feature
	resources  *resources.Feature
	prompts    *prompts.Feature
	watch      *watch.Watcher
	lease      lease.Lease
	stamper    *mcp.Stamper

	// inflight maps session id + request id to the cancel func of a running
	// session-era request, for notifications/cancelled.
	inflightMu sync.Mutex
	inflight   map[inflightKey]*inflightCall

	// listening is closed once this replica hears the others' broadcasts
	// (session changes and ends, cancellations). Until then it is not ready
	// and does not trust its session cache.
	listening     chan struct{}
	listeningOnce sync.Once

	// done is closed when the server starts shutting down; open streams end.
	done     chan struct{}
	doneOnce sync.Once
	// streams counts open SSE streams so shutdown can wait for them to end.
	streams sync.WaitGroup
	// background counts requests of the 2024-11-05 transport still running
	// after their POST was answered (bgRunning by session); once bgClosed,
	// no more start. DrainBackground (and Run, at its end) waits for them.
	background sync.WaitGroup
	bgMu       sync.Mutex
	bgClosed   bool
	bgRunning  map[string]int

	// logLimit holds back repeated failure lines (logLimited).
	logLimit lograte.Limiter
	// backgroundStore names the store calls running in the background
	// (touches, refreshes), one per key at a time.
	backgroundStore sync.Map
	// sweeper is the store's Sweeper, if it has one (s.store is wrapped).
	sweeper sessions.Sweeper
	// streams holds the clients with a stream open on this replica, for
	// list_changed notifications.
	local localStreams
	// sweepers are the other in-process stores that drop expired entries
	// only when asked (subscriptions, leases).
	sweepers []sessions.Sweeper

	// pending and waiters: the server→client requests waiting for the
	// client's answers (ask.go); stateSealer seals requestState.
	pending     pending.Store
	waitersMu   sync.Mutex
	waiters     map[waiterKey]waiter
	stateSealer atomic.Pointer[mrtr.Sealer]
	// stateKeyRead is when the shared key was last re-read (UnixNano).
	stateKeyRead atomic.Int64
}

type inflightKey struct{ session, id string }

// inflightCall is one running request; its identity tells a request apart
// from a later one that reused its id. A request has a cancellable context
// only while it does backend work (see mcp.Request.CallContext), so a
// cancellation can arrive before there is anything to cancel: it is kept
// and applied when the context is attached.
type inflightCall struct {
	mu        sync.Mutex
	cancel    context.CancelFunc
	cancelled bool
}

func (c *inflightCall) cancelCall() {
	c.mu.Lock()
	c.cancelled = true
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// Attach implements mcp.CancelSlot.
func (c *inflightCall) Attach(cancel context.CancelFunc) {
	c.mu.Lock()
	c.cancel = cancel
	cancelled := c.cancelled
	c.mu.Unlock()
	if cancelled {
		cancel()
	}
}

// New validates cfg and returns a server that serves no tools until
// SetCatalog is called.
func New(cfg Config, deps Deps) (*Server, error) {
	cfg = cfg.withDefaults()
	if !strings.HasPrefix(cfg.MountPath, "/") {
		return nil, fmt.Errorf("mount path %q must start with /", cfg.MountPath)
	}
	if !cfg.DisableLegacySSE {
		paths := []string{cfg.MountPath, cfg.LegacySSEPath, cfg.LegacyMessagesPath}
		for i, p := range paths {
			if !strings.HasPrefix(p, "/") {
				return nil, fmt.Errorf("legacy SSE path %q must start with /", p)
			}
			if slices.Contains(paths[:i], p) {
				return nil, fmt.Errorf("the MCP endpoint, the legacy SSE path and the legacy messages path must differ (%q twice)", p)
			}
		}
	}
	origin, err := newOriginPolicy(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:        cfg,
		store:      deps.Store,
		bus:        deps.Bus,
		gate:       deps.Gate,
		counter:    deps.Sessions,
		auth:       deps.Auth,
		prm:        deps.ResourceMetadata,
		audit:      deps.Audit,
		log:        deps.Logger,
		origin:     origin,
		inflight:   map[inflightKey]*inflightCall{},
		bgRunning:  map[string]int{},
		done:       make(chan struct{}),
		listening:  make(chan struct{}),
		cache:      newSessionCache(cfg.SessionCacheTTL),
		methods:    map[string]method{},
		middleware: deps.Middleware,
		pending:    deps.Pending,
		waiters:    map[waiterKey]waiter{},
	}
	s.runtime.Store(settingsOf(&cfg))
	s.tracer = newTracer(deps.TracerProvider, cfg.ServerVersion)
	s.metrics = newMetrics(deps.Metrics, s.waitingRequests)
	if s.pending == nil {
		s.pending = pending.NewMemory()
	}
	if sw, ok := s.pending.(sessions.Sweeper); ok {
		s.sweepers = append(s.sweepers, sw)
	}
	s.pending = timeoutPending{Store: s.pending, d: cfg.StoreTimeout}
	if s.store == nil {
		s.store = sessions.NewMemory(sessions.Limits{TTL: StoreTTL(cfg.SessionTTL)})
	}
	s.sweeper, _ = s.store.(sessions.Sweeper)
	s.store = timeoutStore{Store: s.store, d: cfg.StoreTimeout}
	if s.bus == nil {
		s.bus = pubsub.NewMemory()
	}
	if s.gate == nil {
		s.gate = quota.NewMemoryGate()
	}
	s.gate = timeoutGate{Gate: s.gate, d: cfg.StoreTimeout}
	if s.counter == nil && (cfg.MaxSessionsPerClient > 0 || cfg.MaxSessions > 0) {
		s.counter = quota.NewMemorySessionCounter()
	}
	// The session counter sees every replica's sessions; without one, a
	// memory store (one replica) counts its own.
	s.sessionCount, _ = s.counter.(sessionCounter)
	if s.sessionCount == nil {
		s.sessionCount, _ = s.sweeper.(sessionCounter)
	}
	if s.counter != nil {
		s.counter = timeoutCounter{SessionCounter: s.counter, d: cfg.StoreTimeout}
	}
	// First in the chain: it sees what every other middleware decided.
	s.middleware = append([]mcp.Middleware{s.callMiddleware}, s.middleware...)
	if s.log == nil {
		s.log = slog.Default()
	}
	s.stamper = &mcp.Stamper{ListTTL: cfg.ListTTL, ServerMeta: map[string]any{"io.modelcontextprotocol/serverInfo": s.serverInfo()}}
	s.cache.endedFor = 2 * max(cfg.SessionCacheTTL, cfg.StoreTimeout)
	s.registerOwn()
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	if cfg.ToolMode != "" && !tools.ValidToolMode(cfg.ToolMode) {
		return nil, fmt.Errorf("tool mode %q: must be all, toolsets or search", cfg.ToolMode)
	}
	if cfg.SchemaRefs != "" && !tools.ValidSchemaRefs(cfg.SchemaRefs) {
		return nil, fmt.Errorf("schema refs %q: must be defs or inline", cfg.SchemaRefs)
	}
	s.tools = tools.New(tools.Config{PageSize: cfg.PageSize, CallLimit: cfg.ToolCallLimit, MaxConcurrent: cfg.MaxConcurrentCalls, Policy: cfg.Policy,
		MaxInputRounds: cfg.MaxInputRounds, MaxInputBytes: cfg.MaxInputBytes, InputTimeout: cfg.ServerRequestTimeout, MaxPending: cfg.MaxPendingPerSession,
		ConfirmWithoutElicitation: cfg.ConfirmWithoutElicitation, ProgressHeartbeat: cfg.ProgressHeartbeat,
		ToolsetsEnabled: cfg.ToolsetsEnabled, ToolMode: cfg.ToolMode, SchemaRefs: cfg.SchemaRefs, MaxDescription: cfg.MaxDescription},
		tools.Deps{Gate: s.gate, Logger: s.log, Input: inputAsker{s}, Sessions: sessionToolsets{s}})
	s.tools.Register(router{s})
	if s.resources, err = resources.New(resources.Config{PageSize: cfg.PageSize, Declared: cfg.Resources},
		resources.Deps{Fetch: s.fetchResource, CallTool: s.callTool, Permits: s.permits}); err != nil {
		return nil, err
	}
	s.resources.Register(router{s})
	subs, lse := deps.Subscriptions, deps.Lease
	if subs == nil {
		subs = subscriptions.NewMemory(subscriptions.Limits{MaxPerSubscriber: cfg.MaxSubscriptions})
	}
	if lse == nil {
		lse = lease.NewMemory()
	}
	for _, st := range []any{subs, lse} {
		if sw, ok := st.(sessions.Sweeper); ok {
			s.sweepers = append(s.sweepers, sw)
		}
	}
	s.watch = watch.New(watch.Config{Replica: cfg.Replica, PollInterval: cfg.SubscriptionPollInterval, LeaseTTL: cfg.SubscriptionLeaseTTL, StoreTimeout: cfg.StoreTimeout},
		watch.Deps{Subs: subs, Lease: lse, Bus: s.bus, Poll: s.pollResource, Watched: s.resources.Watched, Deliver: s.deliverUpdate,
			IsGone: isSessionGone, Logger: s.log, Metrics: deps.Metrics})
	s.lease = lse
	s.handle("resources/subscribe", mcp.EraSession, s.subscribe)
	s.handle("resources/unsubscribe", mcp.EraSession, s.unsubscribe)
	pr, err := prompts.New(prompts.Config{PageSize: cfg.PageSize, Declared: cfg.Prompts}, prompts.Deps{ReadResource: s.resources.Read, CallTool: s.callToolText, Permits: s.tools.Permits})
	if err != nil {
		return nil, err
	}
	pr.Register(router{s})
	s.prompts = pr
	completion.New(completion.Deps{PromptValues: pr.ArgumentValues, ResourceValues: s.resources.VariableValues}).Register(router{s})
	s.notFound = mcp.Chain(methodNotFound, s.middleware...)
	return s, nil
}

// touchEvery is how stale a session's last touch may get before a request
// refreshes it: touches cost a store write, so they are debounced.
func touchEvery(ttl time.Duration) time.Duration { return ttl / 16 }

// StoreTTL is the expiry a session store must apply for an idle lifetime
// of ttl: touches are debounced by up to ttl/16, so the store keeps a
// session that much longer and no active session expires early.
func StoreTTL(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		ttl = 30 * time.Minute
	}
	return ttl + touchEvery(ttl)
}

// SetCatalog atomically replaces the document and tools the gateway serves.
// Clients holding a stream on this replica whose visible tools or resources
// changed are told (notifications/tools/list_changed,
// notifications/resources/list_changed), once per session and version.
func (s *Server) SetCatalog(c Catalog) { s.ReplaceCatalog(c)() }

// ReplaceCatalog is SetCatalog in two steps: it serves c at once and
// returns the announcement of what changed, to make once every replica
// serves c (a client told re-lists, and may reach any replica).
func (s *Server) ReplaceCatalog(c Catalog) (announce func()) {
	s.reconfigureMu.Lock()
	defer s.reconfigureMu.Unlock()
	before := s.views()
	s.swapCatalog(c, nil)
	return func() { s.announceListChanges(before, c.Version) }
}

// swapCatalog serves c; toolsCfg, when set, are the tools feature's new
// settings (Reconfigure), swapped with its catalog.
func (s *Server) swapCatalog(c Catalog, toolsCfg *tools.Config) {
	// The features first: Ready looks at s.catalog.
	tc := tools.Catalog{Tools: c.Tools, Caller: c.Caller, Callers: c.Callers}
	if toolsCfg != nil {
		s.tools.Reconfigure(*toolsCfg, &tc)
	} else {
		s.tools.SetCatalog(tc)
	}
	rc := resources.Catalog{Doc: c.Doc, ServerName: s.cfg.ServerName, ServerVersion: s.cfg.ServerVersion,
		Revisions: mcp.SupportedVersions, Prompts: s.prompts.Len(), Set: c.Tools}
	if c.Tools != nil {
		rc.Tools = c.Tools.Len()
	}
	s.resources.SetCatalog(rc)
	s.metrics.setTools(c.Tools)
	s.metrics.setDocument(c.Version)
	s.catalog.Store(&c)
}

func (s *Server) currentCatalog() *Catalog { return s.catalog.Load() }

// Ready reports whether the gateway can serve: tools are loaded and the
// session store answers.
func (s *Server) Ready(ctx context.Context) error {
	if s.currentCatalog() == nil {
		return errors.New("openapi document not loaded")
	}
	if !s.isListening() {
		return errors.New("not yet subscribed to the other replicas' broadcasts")
	}
	if err := s.store.Ping(ctx); err != nil {
		s.log.Warn("not ready: session store unreachable", "err", err)
		return errors.New("session store unavailable")
	}
	return nil
}

// Run does the gateway's background work until ctx ends: it runs the bus
// (when the bus has a loop of its own), applies other replicas' broadcasts,
// sweeps expired sessions and stale cache entries. Then it ends every open
// stream and waits for them and for its loops.
func (s *Server) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	if runner, ok := s.bus.(pubsub.Runner); ok {
		wg.Go(func() {
			if err := runner.Run(ctx); err != nil {
				s.log.Error("message bus stopped", "err", err)
			}
		})
	}
	wg.Go(func() { s.listenReplicas(ctx) })
	wg.Go(func() { s.listenAnswers(ctx) })
	wg.Go(func() { s.watch.Run(ctx) })
	wg.Go(func() { s.sampleSessions(ctx, cmp.Or(s.cfg.SessionSampleInterval, sampleSessionsEvery)) })
	defer wg.Wait()

	sweeper := s.sweeper
	interval := min(s.cfg.SessionTTL/4, s.cfg.SessionCacheTTL, time.Minute)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.Shutdown()
			s.streams.Wait()
			_ = s.DrainBackground(context.Background())
			return nil
		case now := <-t.C:
			s.cache.sweep(now)
			if sweeper != nil {
				if n := sweeper.Sweep(); n > 0 {
					s.log.Debug("expired idle sessions", "count", n)
				}
			}
			for _, sw := range s.sweepers {
				sw.Sweep()
			}
		}
	}
}

// Listening is closed once the server hears the other replicas; Run makes
// that happen. Serve only after it (with a bound, for when Redis is down).
func (s *Server) Listening() <-chan struct{} { return s.listening }

func (s *Server) isListening() bool {
	select {
	case <-s.listening:
		return true
	default:
		return false
	}
}

// Shutdown tells every open stream to end. In-flight calls are not cut; the
// HTTP server's own shutdown waits for them.
func (s *Server) Shutdown() { s.doneOnce.Do(func() { close(s.done) }) }

// originPolicy decides which Origin and Host values the transport accepts.
type originPolicy struct {
	anyOrigin  bool
	origins    map[string]bool // normalized scheme://host[:port]
	loopbackOK bool            // loopback origins allowed by default
	checkHost  bool            // bound to loopback: Host must be a loopback name
	extraHosts map[string]bool
}

func newOriginPolicy(cfg Config) (originPolicy, error) {
	p := originPolicy{origins: map[string]bool{}, extraHosts: map[string]bool{}}
	loopback := IsLoopbackListen(cfg.ListenAddr)
	p.checkHost = loopback
	for _, o := range cfg.AllowedOrigins {
		if o == "*" {
			p.anyOrigin = true
			continue
		}
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return p, fmt.Errorf("allowed origin %q must look like scheme://host[:port]", o)
		}
		p.origins[strings.ToLower(u.Scheme+"://"+u.Host)] = true
	}
	if len(cfg.AllowedOrigins) == 0 {
		p.loopbackOK = loopback
	}
	for _, h := range cfg.AllowedHosts {
		p.extraHosts[strings.ToLower(h)] = true
	}
	return p, nil
}

// allowOrigin: an absent Origin is accepted (non-browser clients send none).
func (p originPolicy) allowOrigin(origin string) bool {
	if origin == "" || p.anyOrigin {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if p.origins[strings.ToLower(u.Scheme+"://"+u.Host)] {
		return true
	}
	return p.loopbackOK && isLoopbackHost(u.Hostname())
}

// allowHost guards against DNS rebinding when bound to loopback: a page on
// evil.example that resolves to 127.0.0.1 still sends Host: evil.example.
func (p originPolicy) allowHost(host string) bool {
	if !p.checkHost {
		return true
	}
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.ToLower(strings.Trim(h, "[]"))
	return isLoopbackHost(h) || p.extraHosts[h]
}

func isLoopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackListen reports whether a listen address (host:port) binds
// loopback only: the Host check applies, and nobody off the machine can
// reach it.
func IsLoopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return host != "" && isLoopbackHost(host)
}
