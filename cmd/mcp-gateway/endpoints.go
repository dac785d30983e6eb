package main

// One endpoint per API: its document, catalog, gateway server, shared
// state (its own Redis key prefix) and reloader. With the apis list there
// are several on one listener; without it, one.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/mcp-gateway/mcp-gateway/internal/demo"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/pubsub/lease"
	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/sessions/documents"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// endpointShared is what every endpoint of the process shares.
type endpointShared struct {
	reg           *prometheus.Registry
	redis         sharedRedis // nil: memory state
	audit         *audit.Writer
	replica       string
	webhookSecret []byte
	stateKey      []byte
	// several: the apis list (endpoints are named, and their metrics
	// and Redis keys say which).
	several bool
	// gate and counter are the limits and session caps all endpoints
	// share: rate_per_client, quotas, max_sessions and the like are the
	// deployment's, however many APIs it serves.
	gate    quota.Gate
	counter quota.SessionCounter
	// tracing is nil when tracing is off.
	tracing *tracing
	// status is what /readyz says until the endpoints serve.
	status *startStatus
}

// endpoint is one API served.
type endpoint struct {
	name     string
	cfg      *config
	srv      *gateway.Server
	rl       *reloader
	catalog  *gateway.Catalog
	location string
	closers  []func()
	// backend is the call path's transport; nil means call's default.
	backend http.RoundTripper
	// What a configuration reload rebuilds the endpoint from: its APIs
	// (as loaded at start) and the parts shared.
	group []*apiEntry
	apis  []*loadedAPI
	sh    endpointShared
	log   *slog.Logger
}

func (ep *endpoint) close() {
	for _, c := range slices.Backward(ep.closers) {
		c()
	}
}

// loadedAPI is one API's document and catalog.
type loadedAPI struct {
	catalog  *gateway.Catalog
	docData  []byte
	location string
	upstream string
	src      *source
}

// loadAPI reads one API's document and builds its catalog; a code other
// than exitOK says why it could not (already printed), errStopped that
// the process was told to stop while it waited.
func loadAPI(ctx context.Context, entry *apiEntry, ep *endpoint, status *startStatus, log *slog.Logger, stderr io.Writer) (*loadedAPI, int, error) {
	cfg := entry.cfg
	la := &loadedAPI{location: cfg.OpenAPI, upstream: cfg.Upstream}
	var err error
	if cfg.Demo {
		base, stopDemo, err := demo.Start(ctx, "127.0.0.1:0")
		if err != nil {
			log.Error("starting the demo backend failed", "err", err)
			return nil, exitFailure, nil
		}
		ep.closers = append(ep.closers, func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = stopDemo(sctx)
		})
		la.docData, la.location, la.upstream = demo.OpenAPI(), "demo/openapi.yaml", base
		log.Info("demo backend started", "url", base)
	}
	// Read the document's bytes here (LoadData resolves its $refs as Load
	// would): their hash is the version live reload compares.
	if !cfg.Demo {
		la.src = newSource(cfg)
		if la.docData, err = readWithWait(ctx, la.src, cfg.OpenAPIWait, status, log); err != nil {
			if errors.Is(err, errStopped) {
				return nil, exitOK, err
			}
			return nil, startupFailed(stderr, cfg, fmt.Errorf("%sloading OpenAPI document: %w", apiPrefix(entry), err)), nil
		}
	}
	if la.catalog, err = buildCatalog(ctx, cfg, la.docData, la.location, la.upstream, ep.backend, log); err != nil {
		return nil, startupFailed(stderr, cfg, fmt.Errorf("%s%w", apiPrefix(entry), err)), nil
	}
	if la.docData != nil {
		la.catalog.Version = versionOf(la.docData)
	}
	return la, exitOK, nil
}

// startEndpoint builds the server of one mount path: one API, or several
// that share it (their tools merged, each run by its own caller); a code
// other than exitOK says why it could not (already printed); errStopped
// that the process was told to stop while it waited for a document.
func startEndpoint(ctx context.Context, group []*apiEntry, first bool, sh endpointShared, log *slog.Logger, stderr io.Writer) (*endpoint, int, error) {
	entry := group[0]
	cfg := entry.cfg
	names := entryNames(group)
	ep := &endpoint{name: strings.Join(names, "+"), cfg: cfg, backend: sh.tracing.backendTransport()}
	if ep.name != "" {
		log = log.With("api", ep.name)
	}
	var loaded []*loadedAPI
	for _, e := range group {
		elog := log
		if len(group) > 1 {
			elog = log.With("document", e.Name)
			e = &apiEntry{Name: e.Name, cfg: withoutToolsetsEnabled(e.cfg)}
		}
		la, code, err := loadAPI(ctx, e, ep, sh.status, elog, stderr)
		if code != exitOK || err != nil {
			return ep, code, err
		}
		loaded = append(loaded, la)
	}
	la := loaded[0]
	ep.catalog, ep.location = la.catalog, la.location
	ep.group, ep.apis, ep.sh, ep.log = group, loaded, sh, log
	if len(loaded) > 1 {
		merged, err := mergeCatalogs(names, loaded)
		if err != nil {
			return ep, startupFailed(stderr, cfg, &configError{key: "apis", source: cfg.fileName(),
				reason: fmt.Sprintf("%s share mount_path %s: %v", strings.Join(names, ", "), cfg.MountPath, err)}), nil
		}
		if err := gateway.CheckToolsets(merged.Tools, cfg.ToolsetsEnabled); err != nil {
			return ep, startupFailed(stderr, cfg, &configError{key: "toolsets_enabled", source: cfg.fileName(), reason: err.Error()}), nil
		}
		ep.catalog = merged
		locs := make([]string, len(loaded))
		for i, l := range loaded {
			locs[i] = l.location
		}
		ep.location = strings.Join(locs, ", ")
		log.Info("several APIs share one endpoint; live reload of their documents is off (restart to load new versions)", "mount_path", cfg.MountPath)
	}
	var err error

	limits := sessions.Limits{TTL: gateway.StoreTTL(cfg.SessionTTL), MaxEvents: cfg.StreamMaxEvents, MaxEventAge: cfg.StreamMaxAge, MaxBytes: cfg.StreamMaxBytes}
	var metrics prometheus.Registerer = sh.reg
	if sh.several {
		metrics = prometheus.WrapRegistererWith(prometheus.Labels{"api": ep.name}, sh.reg)
	}
	deps := gateway.Deps{Logger: log, Store: sessions.NewMemory(limits), Metrics: metrics,
		Bus: pubsub.NewMemory(), Lease: lease.NewMemory(), Audit: sh.audit, TracerProvider: sh.tracing.tracerProvider()}
	deps.Gate, deps.Sessions = sh.gate, sh.counter
	var docs documents.Store = documents.NewMemory()
	if sh.redis != nil {
		prefix := cfg.RedisPrefix
		if sh.several {
			// Sessions are per endpoint: each API its own keys.
			prefix += entry.Name + ":"
		}
		st := sharedStateOn(sh.redis, prefix, limits)
		deps.Store, deps.Bus = st.store, st.bus
		deps.Subscriptions, deps.Lease, docs = st.subs, st.lease, st.docs
		deps.Pending = st.pending
	}

	verifier, err := newVerifier(ctx, cfg, log)
	if err != nil {
		return ep, startupFailed(stderr, cfg, err), nil
	}
	if verifier != nil {
		ep.closers = append(ep.closers, verifier.Close)
		deps.Auth = verifier
		docs := make([]*openapi.Document, len(loaded))
		for i, l := range loaded {
			docs[i] = l.catalog.Doc
		}
		deps.ResourceMetadata = resourceMetadata(cfg, docs...)
		log.Info("authentication on", "issuer", cfg.AuthIssuer, "resource", resourceURL(cfg), "metadata", metadataURL(cfg))
	}
	gcfg := groupGatewayConfig(group, sh)
	if sh.several {
		gcfg.API = ep.name
		gcfg.ServerName = "mcp-gateway/" + ep.name
		gcfg.WebhookPath = gateway.WebhookPath + "/" + entry.Name
		// The bare well-known metadata path is the first API's.
		gcfg.NoRootResourceMetadata = !first
	}
	srv, err := gateway.New(gcfg, deps)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-gateway: %s%v\n", apiPrefix(entry), err)
		return ep, exitConfig, nil
	}
	srv.SetCatalog(*ep.catalog)
	ep.srv = srv
	if len(group) == 1 {
		ep.rl = &reloader{cfg: cfg, hup: make(chan struct{}, 1), activeData: la.docData, log: log, srv: srv, docs: docs, lease: deps.Lease, bus: deps.Bus, replica: sh.replica, src: la.src, active: ep.catalog.Version,
			metrics: newReloadMetrics(metrics),
			build: func(ctx context.Context, data []byte) (*gateway.Catalog, error) {
				return buildCatalog(ctx, ep.rl.cfg, data, la.location, la.upstream, ep.backend, log) // under rl.mu
			}}
	}
	return ep, exitOK, nil
}

// mergeCatalogs serves several APIs' tools on one endpoint: the tools
// merged (toolgen.Merge), each run by its own API's caller. The merged
// catalog has no one document (gateway://openapi and the schema
// templates are each API's own endpoint's, not a shared one's).
func mergeCatalogs(names []string, loaded []*loadedAPI) (*gateway.Catalog, error) {
	sets := make([]*toolgen.Set, len(loaded))
	for i, l := range loaded {
		sets[i] = l.catalog.Tools
	}
	merged, err := toolgen.Merge(names, sets...)
	if err != nil {
		return nil, err
	}
	c := &gateway.Catalog{Tools: merged, Caller: loaded[0].catalog.Caller, Callers: map[*toolgen.Tool]*call.Caller{}}
	h := sha256.New()
	for i, l := range loaded {
		h.Write([]byte(l.catalog.Version))
		if i == 0 {
			continue
		}
		for _, t := range l.catalog.Tools.Tools() {
			c.Callers[t] = l.catalog.Caller
		}
		for _, op := range l.catalog.Tools.Resources() {
			c.Callers[op.Tool] = l.catalog.Caller
		}
	}
	c.Version = hex.EncodeToString(h.Sum(nil))[:16]
	return c, nil
}

// withoutToolsetsEnabled is cfg for one of several APIs sharing an
// endpoint: toolsets_enabled names the shared endpoint's toolsets, so it
// is checked once against their merged tools, not against each API's.
func withoutToolsetsEnabled(cfg *config) *config {
	c := *cfg
	c.ToolsetsEnabled = nil
	return &c
}

// groupGatewayConfig is the gateway's configuration of the endpoint
// serving group.
func groupGatewayConfig(group []*apiEntry, sh endpointShared) gateway.Config {
	gcfg := gatewayConfig(group[0].cfg, sh)
	if len(group) > 1 {
		// Declared resources and prompts name their tools, whose names
		// the documents' prefixes keep apart.
		gcfg.Resources, gcfg.Prompts = nil, nil
		for _, e := range group {
			gcfg.Resources = append(gcfg.Resources, e.cfg.Resources...)
			gcfg.Prompts = append(gcfg.Prompts, e.cfg.Prompts...)
		}
	}
	return gcfg
}

func apiPrefix(e *apiEntry) string {
	if e.Name == "" {
		return ""
	}
	return "apis " + e.Name + ": "
}

// gatewayConfig is the gateway's configuration for one API.
func gatewayConfig(cfg *config, sh endpointShared) gateway.Config {
	return gateway.Config{
		MountPath:            cfg.MountPath,
		ListenAddr:           cfg.Listen,
		AllowedOrigins:       cfg.AllowedOrigins,
		AllowedHosts:         cfg.AllowedHosts,
		PageSize:             cfg.PageSize,
		MaxBodyBytes:         cfg.MaxBodyBytes,
		ReadTimeout:          cfg.ReadTimeout,
		MaxBatch:             cfg.MaxBatch,
		MaxResponseBytes:     cfg.MaxResponseBytes,
		SSEKeepAlive:         offIsNegative(cfg.SSEKeepAlive),
		SessionTTL:           cfg.SessionTTL,
		DisableSessionDelete: !cfg.SessionDelete,
		DisableLegacySSE:     !cfg.LegacySSE,
		LegacySSEPath:        cfg.LegacySSEPath,
		LegacyMessagesPath:   cfg.LegacyMessagesPath,
		LegacySSEGrace:       cfg.LegacySSEGrace,
		ServerVersion:        version,
		ToolCallLimit:        toolCallLimit(cfg),
		MaxConcurrentCalls:   maxConcurrentCalls(cfg),
		StoreTimeout:         cfg.RedisTimeout,
		IdentityHeader:       cfg.IdentityHeader,
		MaxSessionsPerClient: cfg.MaxSessionsPerClient,
		MaxSessions:          cfg.MaxSessions,
		Policy:               policyOf(cfg, sh.tracing),
		Resources:            cfg.Resources,
		Prompts:              cfg.Prompts,

		SubscriptionPollInterval: cfg.SubscriptionPollInterval,
		SubscriptionLeaseTTL:     cfg.SubscriptionLeaseTTL,
		WebhookSecret:            sh.webhookSecret,
		Replica:                  sh.replica,
		ListTTL:                  listTTL(cfg),

		ServerRequestTimeout:      cfg.ServerRequestTimeout,
		MaxPendingPerSession:      cfg.MaxPendingPerSession,
		MaxInputRounds:            cfg.MaxInputRounds,
		MaxInputBytes:             int(cfg.MaxInputBytes),
		ConfirmWithoutElicitation: cfg.ConfirmWithoutElicitation == "allow",
		ProgressHeartbeat:         offIsNegative(cfg.ProgressHeartbeat),
		KeepCallsOnDisconnect:     !cfg.CancelOnDisconnect,
		StateKey:                  sh.stateKey,

		ToolsetsEnabled: cfg.ToolsetsEnabled,
		ToolMode:        cfg.ToolMode,
		SchemaRefs:      cfg.SchemaRefs,
		MaxDescription:  cfg.MaxDescription,
	}
}

// combinedHandlers are the listener's handlers: everything (MCP and
// admin), and MCP only (with an admin listener). One endpoint serves as
// it always has; several share one mux, each on its routes, and a path
// two would serve is a configuration error.
func combinedHandlers(eps []*endpoint, reg *prometheus.Registry) (all, mcpOnly http.Handler, err error) {
	admin := map[string]http.Handler{"/metrics": promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	if len(eps) == 1 {
		return eps[0].srv.Handler(admin), eps[0].srv.MCPHandler(), nil
	}
	owner := map[string]string{}
	mcpMux := http.NewServeMux()
	allMux := http.NewServeMux()
	conflict := func(a, b, route string) error {
		return &configError{key: "apis", source: eps[0].cfg.fileName(),
			reason: fmt.Sprintf("apis %s and %s both serve %s: give them mount paths apart (neither under the other's)", a, b, route)}
	}
	for _, ep := range eps {
		if ep.cfg.MountPath == "/" {
			return nil, nil, &configError{key: "apis", source: ep.cfg.fileName(), reason: fmt.Sprintf("api %s: mount_path / would take every path of the other APIs", ep.name)}
		}
	}
	for i, ep := range eps {
		// A prefix route (…/x/) serves every path under it.
		for _, other := range eps[i+1:] {
			for _, r1 := range ep.srv.Routes() {
				for _, r2 := range other.srv.Routes() {
					if strings.HasSuffix(r1, "/") && strings.HasPrefix(r2, r1) || strings.HasSuffix(r2, "/") && strings.HasPrefix(r1, r2) {
						return nil, nil, conflict(ep.name, other.name, r2)
					}
				}
			}
		}
	}
	for _, ep := range eps {
		h := ep.srv.MCPHandler()
		for _, route := range ep.srv.Routes() {
			if prev, taken := owner[route]; taken {
				return nil, nil, conflict(prev, ep.name, route)
			}
			owner[route] = ep.name
			mcpMux.Handle(route, h)
			allMux.Handle(route, h)
		}
	}
	// Admin routes, and the JSON 404 for the rest, as one gateway answers.
	adminH := adminHandler(eps, reg)
	allMux.Handle("/", adminH)
	mcpMux.Handle("/", eps[0].srv.MCPHandler())
	return allMux, mcpMux, nil
}

// adminHandler serves /healthz, /readyz (every endpoint ready) and
// /metrics.
func adminHandler(eps []*endpoint, reg *prometheus.Registry) http.Handler {
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if len(eps) == 1 {
		return eps[0].srv.AdminHandler(map[string]http.Handler{"/metrics": metrics})
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		for _, ep := range eps {
			if err := ep.srv.Ready(ctx); err != nil {
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "api": ep.name, "reason": err.Error()})
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	// /healthz, and the JSON 404 for the rest, as one gateway answers.
	mux.Handle("/", eps[0].srv.AdminHandler(nil))
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
