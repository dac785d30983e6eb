package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/internal/demo"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // the gateway could not start or serve
	exitConfig  = 2 // the configuration is invalid
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 && args[0] == "tools" {
		return runTools(ctx, args[1:], stdout, stderr, getenv)
	}
	if len(args) > 0 && args[0] == "demo-cluster" {
		return runDemoCluster(ctx, args[1:], stdout, stderr)
	}
	cfg, _, err := loadConfig("mcp-gateway", args, getenv, stderr)
	if code, done := configExit(err, stdout, stderr); done {
		return code
	}
	log, level := newLeveledLogger(stderr, cfg)
	warnExposure(cfg, log)
	// SIGHUP from now on reloads (once serving): never its default, the
	// end of the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var redisC sharedRedis
	if cfg.RedisURL != "" {
		routeRedisLog(log)
		c, err := redisClient(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "mcp-gateway: %s\n", newRedactor(cfg).scrub(err.Error()))
			return exitConfig
		}
		defer c.Close()
		instrumentRedis(c, reg)
		if err := pingRedis(ctx, c); err != nil {
			log.Warn("starting unready; the gateway serves once Redis answers", "err", err)
		}
		redisC = c
		log.Info("shared state in redis", "mode", cfg.RedisMode, "prefix", cfg.RedisPrefix)
	}
	auditLog, err := openAudit(cfg, reg, log)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-gateway: %v\n", err)
		return exitConfig
	}
	if auditLog != nil {
		defer auditLog.Close()
	}
	replica := replicaName()
	tracer, err := newTracing(ctx, cfg, getenv, replica, call.NewTransport(), log)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-gateway: %v\n", err)
		return exitConfig
	}
	defer func() {
		// The spans of the last requests are flushed once the servers
		// have stopped.
		fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tracer.shutdown(fctx, log)
	}()
	tracer.traceRedis(redisC)
	var webhookSecret []byte
	if cfg.WebhookSecretFile != "" {
		secret, err := readSecretFile(cfg.WebhookSecretFile)
		if err != nil {
			fmt.Fprintf(stderr, "mcp-gateway: %v\n", &configError{key: "webhook_secret_file", source: "file", reason: err.Error()})
			return exitConfig
		}
		webhookSecret = []byte(secret)
	}
	stateKey, err := readStateKey(cfg.StateKeyFile)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-gateway: %v\n", &configError{key: "state_key_file", source: "file", reason: err.Error()})
		return exitConfig
	}
	shared := endpointShared{reg: reg, redis: redisC, audit: auditLog, replica: replica, webhookSecret: webhookSecret, stateKey: stateKey,
		several: len(cfg.APIs) > 0, gate: quota.NewMemoryGate(), tracing: tracer}
	// Sessions are counted even without caps: a reload may set them.
	shared.counter = quota.NewMemorySessionCounter()
	if redisC != nil {
		shared.gate, shared.counter = sharedLimits(redisC, cfg.RedisPrefix)
	}
	groups, err := cfg.endpointGroups()
	if err != nil {
		fmt.Fprintf(stderr, "mcp-gateway: %v\n", err)
		return exitConfig
	}
	// Listen before the endpoints are built: probes reach a gateway that
	// waits for its backend's document (openapi_wait), and learn why it
	// is not ready; the endpoints' handlers replace the starting ones.
	shared.status = &startStatus{}
	shared.status.set("loading the OpenAPI document")
	mainH, adminH := &swapHandler{}, &swapHandler{}
	mainH.set(startingHandler(shared.status, true, cfg.AdminListen == "", reg))
	adminH.set(startingHandler(shared.status, false, true, reg))
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-gateway: cannot listen on %s: %v\n", cfg.Listen, err)
		return exitFailure
	}
	var adminSrv *http.Server
	adminDone := make(chan error, 1) // never written without an admin listener
	if cfg.AdminListen != "" {
		// Metrics and probes on their own listener, out of MCP clients'
		// reach; the MCP listener serves only MCP.
		adminLn, err := net.Listen("tcp", cfg.AdminListen)
		if err != nil {
			ln.Close()
			fmt.Fprintf(stderr, "mcp-gateway: cannot listen on %s (admin_listen): %v\n", cfg.AdminListen, err)
			return exitFailure
		}
		adminSrv = &http.Server{Handler: adminH, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: cfg.IdleTimeout,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		go func() { adminDone <- adminSrv.Serve(adminLn) }()
		defer adminSrv.Close()
		log.Info("admin endpoints on their own listener", "url", "http://"+adminLn.Addr().String(), "paths", "/metrics /healthz /readyz")
	}
	httpSrv := &http.Server{
		Handler:           mainH,
		ReadHeaderTimeout: min(10*time.Second, cfg.ReadTimeout),
		IdleTimeout:       cfg.IdleTimeout,
		// No WriteTimeout: SSE streams are long-lived by design.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	serveDone := make(chan error, 1)
	go func() { serveDone <- httpSrv.Serve(ln) }()
	defer httpSrv.Close() // a start that fails; after Shutdown it does nothing

	var eps []*endpoint
	for i, group := range groups {
		ep, code, err := startEndpoint(ctx, group, i == 0, shared, log, stderr)
		if ep != nil {
			defer ep.close()
		}
		if errors.Is(err, errStopped) {
			log.Info(err.Error())
			return exitOK
		}
		if code != exitOK {
			return code
		}
		eps = append(eps, ep)
	}
	handler, mcpOnly, err := combinedHandlers(eps, reg)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-gateway: %v\n", err)
		return exitConfig
	}
	if adminSrv != nil {
		handler = mcpOnly
	}
	shared.status.set("not yet subscribed to the other replicas' broadcasts")
	runCtx, stopRun := context.WithCancel(context.Background())
	var running sync.WaitGroup
	for _, ep := range eps {
		running.Go(func() { _ = ep.srv.Run(runCtx) })
		if ep.rl != nil {
			running.Go(func() { ep.rl.run(runCtx) })
		}
	}
	defer func() { stopRun(); running.Wait() }()
	// Serve once the replica hears the others, so that it never serves a
	// session another replica has just ended. With Redis down that can
	// take forever: serve anyway after a while, unready until it listens.
	wait := time.After(5 * time.Second)
	for _, ep := range eps {
		select {
		case <-ep.srv.Listening():
			continue
		case <-wait:
			log.Warn("serving before hearing the other replicas; /readyz fails until then")
		case <-ctx.Done():
		}
		break
	}
	mainH.set(handler)
	if adminSrv != nil {
		adminH.set(adminHandler(eps, reg))
	}

	for _, ep := range eps {
		url := "http://" + ln.Addr().String() + ep.cfg.MountPath
		n := len(servedTools(ep.catalog.Tools, ep.cfg)) // toolsets_enabled's
		fmt.Fprintf(stdout, "mcp-gateway %s serving %d tools at %s\n", version, n, url)
		log.Info("listening", "url", url, "tools", n, "document", ep.location, "api", ep.name)
		if p := ep.srv.LegacySSEPath(); p != "" {
			log.Info("serving the 2024-11-05 HTTP+SSE transport", "url", "http://"+ln.Addr().String()+p, "api", ep.name)
		}
	}
	// After the lines above, which read the endpoints a reload changes.
	cr := &configReloader{args: args, getenv: getenv, log: log, level: level, cur: cfg, eps: eps}
	running.Go(func() { cr.run(runCtx, hup) })

	code := exitOK
	select {
	case <-ctx.Done():
		log.Info("shutting down", "grace", cfg.ShutdownGrace)
	case err := <-serveDone:
		log.Error("http server stopped", "err", err)
		code = exitFailure
	case err := <-adminDone:
		// Without probes and metrics the replica is not operable: stop.
		log.Error("admin http server stopped", "err", err)
		code = exitFailure
	}
	// End push streams first (they never finish on their own), then let
	// in-flight calls finish within the grace period while the replica
	// still hears the others (a cancellation may arrive meanwhile); stop
	// the background work last.
	for _, ep := range eps {
		ep.srv.Shutdown()
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	if err := httpSrv.Shutdown(sctx); err != nil {
		log.Warn("grace period over; closing remaining connections", "err", err)
		_ = httpSrv.Close()
	}
	// 2024-11-05 requests answered 202 may still run: let them finish
	// (their answers go to the store) while the replica still hears the
	// others.
	for _, ep := range eps {
		if err := ep.srv.DrainBackground(sctx); err != nil {
			log.Warn("grace period over with 2024-11-05 requests still running", "api", ep.name)
		}
	}
	stopRun()
	stopped := make(chan struct{})
	go func() { running.Wait(); close(stopped) }()
	select {
	case <-stopped:
	case <-sctx.Done():
		log.Warn("background work did not stop within the grace period")
	}
	return code
}

// startupFailed prints why the gateway cannot start, scrubbed of
// credentials, and returns the exit status: 2 for a configuration error.
func startupFailed(stderr io.Writer, cfg *config, err error) int {
	fmt.Fprintf(stderr, "mcp-gateway: %s\n", newRedactor(cfg).scrub(err.Error()))
	var ce *configError
	if errors.As(err, &ce) {
		return exitConfig
	}
	return exitFailure
}

// callMemoryBudget is the memory max_concurrent_calls: auto plans for:
// each running call may hold its backend's answer about three times over
// (the body, the encoded response, the write buffer).
const callMemoryBudget = 1 << 30

// maxConcurrentCalls resolves max_concurrent_calls (auto: from the budget).
func maxConcurrentCalls(cfg *config) int {
	if cfg.MaxConcurrent >= 0 {
		return cfg.MaxConcurrent
	}
	return int(max(4, callMemoryBudget/(3*max(cfg.BackendMaxResponse, 1))))
}

// toolCallLimit: a rate of 0 means unlimited.
func toolCallLimit(cfg *config) quota.Limit {
	if cfg.ToolCallRate == 0 {
		return quota.Limit{}
	}
	return quota.Limit{Rate: cfg.ToolCallRate, Burst: cfg.ToolCallBurst}
}

// pages says how many tools/list pages n tools take.
func pages(n, size int) string {
	p := max(1, (n+size-1)/size)
	if p == 1 {
		return "one page"
	}
	return fmt.Sprintf("%d pages", p)
}

// offIsNegative maps a documented "0 turns it off" (sse_keepalive,
// progress_heartbeat) onto gateway.Config, where zero means the default and
// negative off.
func offIsNegative(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// configExit turns a loadConfig error into the exit status: help and
// version are 0, an invalid configuration is one line and 2.
func configExit(err error, stdout, stderr io.Writer) (int, bool) {
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		return exitOK, true
	case errors.Is(err, errVersion):
		fmt.Fprintf(stdout, "mcp-gateway %s\n", version)
		return exitOK, true
	}
	var ce *configError
	if errors.As(err, &ce) {
		fmt.Fprintf(stderr, "mcp-gateway: %s\n", redactor{}.scrub(err.Error()))
	} else {
		// flag parse errors were already printed with usage by the flag set.
		fmt.Fprintf(stderr, "mcp-gateway: invalid configuration: %v\n", err)
	}
	return exitConfig, true
}

func newLogger(w io.Writer, cfg *config) *slog.Logger {
	log, _ := newLeveledLogger(w, cfg)
	return log
}

// newLeveledLogger is newLogger with its level, which a configuration
// reload sets in place.
func newLeveledLogger(w io.Writer, cfg *config) (*slog.Logger, *slog.LevelVar) {
	lvl := &slog.LevelVar{}
	lvl.Set(logLevel(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(redactingHandler{next: h, r: newRedactor(cfg)}), lvl
}

// logLevel is log_level's level (validated: debug, info, warn, error).
func logLevel(s string) slog.Level {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(s))
	return lvl
}

// loadOptions are how the document and its $refs are read.
func loadOptions(cfg *config) openapi.LoadOptions {
	return openapi.LoadOptions{Timeout: cfg.OpenAPITimeout, MaxBytes: cfg.OpenAPIMaxBytes, DeferValidation: true, RefAllow: cfg.OpenAPIRefAllow}
}

// buildCatalog loads the document, generates the tools and prepares the
// caller; each failure names what failed.
func buildCatalog(ctx context.Context, cfg *config, data []byte, location, upstream string, backend http.RoundTripper, log *slog.Logger) (*gateway.Catalog, error) {
	doc, set, err := loadToolSet(ctx, cfg, data, location, log)
	if err != nil {
		return nil, err
	}
	if err := gateway.CheckToolsets(set, cfg.ToolsetsEnabled); err != nil {
		return nil, &configError{key: "toolsets_enabled", source: "combined", reason: err.Error()}
	}
	timeouts, err := checkOperations(cfg, func(name string) bool { _, ok := set.Lookup(name); return ok })
	if err != nil {
		return nil, err
	}
	if err := checkContentOperations(cfg, func(name string) (string, bool) {
		if t, ok := set.Lookup(name); ok {
			m, _ := t.Route()
			return m, true
		}
		if op, ok := set.Resource(name); ok {
			m, _ := op.Tool.Route()
			return m, true
		}
		return "", false
	}); err != nil {
		return nil, err
	}
	if upstream == "" {
		// A document fetched by URL may not send the gateway's backend
		// credentials to another host than its own.
		if err := doc.CheckServerOrigin(); err != nil {
			return nil, &configError{key: "upstream", source: "document " + location, reason: err.Error()}
		}
	}
	token := cfg.BackendBearerToken
	if cfg.BackendBearerFile != "" {
		b, err := os.ReadFile(cfg.BackendBearerFile)
		if err != nil {
			return nil, fmt.Errorf("backend_bearer_token_file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	var clientSecret string
	if cfg.BackendOAuthSecretFile != "" {
		if clientSecret, err = readSecretFile(cfg.BackendOAuthSecretFile); err != nil {
			return nil, &configError{key: "backend_oauth_client_secret_file", source: "file", reason: err.Error()}
		}
	}
	caller, err := call.NewCaller(doc, call.Config{
		BaseURL:            upstream,
		Timeout:            cfg.BackendTimeout,
		ToolTimeouts:       timeouts,
		MaxResponseBytes:   cfg.BackendMaxResponse,
		Headers:            cfg.BackendHeaders,
		APIKeys:            cfg.BackendAPIKeys,
		BearerToken:        token,
		BearerAlways:       cfg.BackendBearerAlways,
		ErrorBody:          cfg.BackendErrorBody,
		MaxRequestURLBytes: int(min(cfg.MaxRequestURL, math.MaxInt32)),
		Transport:          backend,
		// backend is nil unless tracing is on (tracing.backendTransport),
		// and the traced transport records the path templates.
		PathTemplates: backend != nil,

		OAuthTokenURL:         cfg.BackendOAuthTokenURL,
		OAuthClientID:         cfg.BackendOAuthClientID,
		OAuthClientSecret:     clientSecret,
		OAuthScopes:           cfg.BackendOAuthScopes,
		TokenExchangeURL:      cfg.BackendTokenExchangeURL,
		TokenExchangeAudience: cfg.BackendTokenExchangeAudience,
	})
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	for _, m := range caller.MissingCredentials(set.Tools()) {
		log.Warn(missingCredentialMessage(m), "scheme", m.Scheme, "tools", len(m.Tools), "names", listSome(m.Tools, 10))
	}
	return &gateway.Catalog{Doc: doc, Tools: set, Caller: caller}, nil
}

// loadToolSet loads the document and generates its tools, logging the
// document's warnings and generation's.
func loadToolSet(ctx context.Context, cfg *config, data []byte, location string, log *slog.Logger) (*openapi.Document, *toolgen.Set, error) {
	// kin-openapi's validation only warns, and only reads the document: it
	// runs beside generation, which reads it too, rather than before it.
	lopts := loadOptions(cfg)
	start := time.Now()
	var doc *openapi.Document
	var err error
	if data != nil {
		doc, err = openapi.LoadData(ctx, data, location, lopts)
	} else {
		doc, err = openapi.Load(ctx, location, lopts)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("loading OpenAPI document: %w", err)
	}
	validated := make(chan []openapi.Warning, 1)
	go func() { validated <- openapi.Validate(ctx, doc) }()
	maxSchema := int(min(cfg.MaxSchemaBytes, math.MaxInt32))
	if maxSchema == 0 {
		maxSchema = -1 // documented: 0 means no bound
	}
	set, err := toolgen.Generate(doc, toolgen.Options{Include: cfg.Include, Exclude: cfg.Exclude, ResourceOperations: cfg.ResourceOperations, ConfirmOperations: cfg.Confirm, MaxDescription: cfg.MaxDescription,
		OutputSchema: cfg.OutputSchema, MaxSchemaBytes: maxSchema, ReadOnly: cfg.ReadOnly, NamePrefix: cfg.ToolPrefix, Toolsets: cfg.Toolsets})
	doc.Warnings = append(<-validated, doc.Warnings...) // validation's findings first, then the load's own
	if err != nil {
		return nil, nil, fmt.Errorf("generating tools: %w", err)
	}
	warnings := append(slices.Clip(doc.Warnings), set.Warnings()...)
	for _, w := range warnings {
		log.Warn("openapi: "+w.Message, "at", w.Location)
	}
	log.Info("openapi document loaded", "location", location, "version", doc.SourceVersion,
		"tools", set.Len(), "warnings", len(warnings), "elapsed", time.Since(start).Round(time.Millisecond))
	return doc, set, nil
}

// runTools prints what tools/list would return, without serving.
func runTools(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	format, apiName := "table", ""
	var rest []string
	// The subcommand's own flags, --format and --api; the rest are the
	// gateway's.
	own := map[string]*string{"format": &format, "api": &apiName}
	needs := map[string]string{"format": "json or table", "api": "the name of an apis entry"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		dst, ok := own[name]
		if !ok || !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				fmt.Fprintf(stderr, "mcp-gateway tools: invalid configuration: --%s needs %s\n", name, needs[name])
				return exitConfig
			}
			i++
			value = args[i]
		}
		*dst = value
	}
	if format != "json" && format != "table" {
		fmt.Fprintf(stderr, "mcp-gateway tools: invalid configuration: --format must be json or table, got %q\n", format)
		return exitConfig
	}
	cfg, _, err := loadConfig(toolsCommand, rest, getenv, stderr)
	if code, done := configExit(err, stdout, stderr); done {
		return code
	}
	switch {
	case apiName != "":
		entry, err := cfg.api(apiName)
		if err != nil {
			fmt.Fprintf(stderr, "mcp-gateway tools: %v\n", err)
			return exitConfig
		}
		cfg = entry.cfg
	case len(cfg.APIs) == 1:
		cfg = cfg.APIs[0].cfg
	case len(cfg.APIs) > 1:
		names := entryNames(cfg.APIs)
		fmt.Fprintf(stderr, "mcp-gateway tools: invalid configuration: the configuration serves %d APIs (%s); print one with --api NAME\n", len(names), strings.Join(names, ", "))
		return exitConfig
	}
	log := newLogger(stderr, cfg)
	var data []byte
	location := cfg.OpenAPI
	if cfg.Demo {
		data, location = demo.OpenAPI(), "demo/openapi.yaml"
	}
	_, set, err := loadToolSet(ctx, cfg, data, location, log)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-gateway tools: %s\n", newRedactor(cfg).scrub(err.Error()))
		return exitFailure
	}
	if _, err := checkOperations(cfg, func(name string) bool { _, ok := set.Lookup(name); return ok }); err != nil {
		fmt.Fprintf(stderr, "mcp-gateway tools: %v\n", err)
		return exitConfig
	}
	if err := gateway.CheckToolsets(set, cfg.ToolsetsEnabled); err != nil {
		fmt.Fprintf(stderr, "mcp-gateway tools: %v\n", &configError{key: "toolsets_enabled", source: "combined", reason: err.Error()})
		return exitConfig
	}
	list := servedTools(set, cfg)
	if err := toolgen.PrintTools(stdout, list, format); err != nil {
		fmt.Fprintf(stderr, "mcp-gateway tools: %v\n", err)
		return exitFailure
	}
	if format == "json" {
		fmt.Fprintf(stderr, "mcp-gateway tools: this is all %d tools in one list; the server answers tools/list in %s (page_size %d, nextCursor between pages)\n",
			len(list), pages(len(list), cfg.PageSize), cfg.PageSize)
	}
	return exitOK
}

// missingCredentialMessage says which scheme lacks a credential and which
// setting would provide it.
func missingCredentialMessage(m call.MissingCredential) string {
	var what, fix string
	switch strings.ToLower(m.Type) {
	case "apikey":
		what = fmt.Sprintf("apiKey in %s %s", m.In, m.Name)
		fix = fmt.Sprintf("set backend_api_keys %s=VALUE", m.Scheme)
	case "http":
		what = "http " + m.HTTPScheme
		fix = "set backend_headers Authorization=..."
		if strings.EqualFold(m.HTTPScheme, "bearer") {
			fix = "set backend_bearer_token or backend_bearer_token_file"
		}
	case "oauth2", "openidconnect":
		what = m.Type
		fix = "set backend_bearer_token or backend_bearer_token_file to a token the backend accepts"
	case "":
		what = "not declared in components.securitySchemes"
		fix = "fix the document"
	default:
		what = m.Type
		fix = "the gateway has no setting for it"
	}
	return fmt.Sprintf("backend credentials: security scheme %q (%s) has no configured credential; %s, or these tools get the backend's 401", m.Scheme, what, fix)
}

// listSome joins the first n names and says how many more there are.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s (+%d more)", strings.Join(names[:n], ", "), len(names)-n)
}

// servedTools are the tools tools/list serves in the all mode to a client
// that narrows nothing: those of the served toolsets, in the schema
// dialect configured.
func servedTools(set *toolgen.Set, cfg *config) []*toolgen.Tool {
	all := set.Tools()
	if cfg.SchemaRefs == "inline" {
		all = set.InlineTools()
	}
	return gateway.ServedTools(set, cfg.ToolsetsEnabled, all)
}
