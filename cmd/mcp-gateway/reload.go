package main

// Live document reload, on every replica. One replica fetches the document
// (the one holding the "reload" lease, every openapi_reload_interval; any
// replica on SIGHUP), and publishes a changed one to the document store;
// every replica loads the store's current version, reports it loaded, and
// serves it once every live replica has reported it (or activationTimeout
// after it was published), so clients never see the lists flip between
// versions as their requests reach different replicas. Clients are told
// what changed (list_changed) once every live replica serves it, so one
// that re-lists when told gets the new lists wherever it lands. A document that
// fails to load leaves the running version in place and logs why.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/pubsub/lease"
	"github.com/mcp-gateway/mcp-gateway/sessions/documents"
)

const (
	// checkEvery is how often a replica looks for a new version (the bus
	// says so sooner) and, while one waits, whether every replica has it.
	checkEvery = 2 * time.Second
	// reportTTL: a replica that stops reporting is no longer waited for.
	reportTTL = 3 * checkEvery
	// activationTimeout bounds the wait for replicas that cannot load a
	// version.
	activationTimeout = 30 * time.Second
	reloadTopic       = "documents:published"
)

// source reads the document's bytes as the loader does (openapi.Read: the
// same bounds and origin rule), a URL with a conditional GET.
type source struct {
	location string
	opts     openapi.LoadOptions
	since    openapi.Validators
}

func newSource(cfg *config) *source {
	return &source{location: cfg.OpenAPI, opts: loadOptions(cfg)}
}

// read returns the document, or nil when a conditional re-read of a URL
// found it unchanged.
func (s *source) read(ctx context.Context, conditional bool) ([]byte, error) {
	since := openapi.Validators{}
	if conditional {
		since = s.since
	}
	data, got, err := openapi.Read(ctx, s.location, s.opts, since)
	if err != nil {
		return nil, err
	}
	if data != nil {
		s.since = got
	}
	return data, nil
}

func versionOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// reloader is one replica's part of live reload.
type reloader struct {
	// cfg is the configuration the document is built with: a
	// configuration reload replaces it (under mu), with what it keeps of
	// the running one: location, interval and reload settings stay.
	cfg *config
	// mu guards cfg, active, activeData and staged: the reload loop and a
	// configuration reload (configReloader) both build catalogs.
	mu sync.Mutex
	// hup asks for a re-read (SIGHUP, after the configuration's reload).
	hup      chan struct{}
	log      *slog.Logger
	srv      *gateway.Server
	docs     documents.Store
	lease    lease.Lease
	bus      pubsub.Bus
	replica  string
	src      *source // nil: nothing to re-read (the demo)
	upstream string
	build    func(ctx context.Context, data []byte) (*gateway.Catalog, error)
	metrics  *reloadMetrics // nil: none

	active     string // the version served
	activeData []byte // its document
	fetched    string // the version this replica last fetched
	staged     *staged
	// broken is the store's version this replica could not build, with
	// the configuration it tried: it is not built (nor logged, nor
	// counted) again every check, only once the store or the
	// configuration moves on.
	broken    string
	brokenCfg *config
	// announce tells clients what the active version changed, once every
	// live replica serves it (or activationTimeout after it began).
	announce      func()
	announceSince time.Time
	reported      string // the last report, to hint the others when it changes
}

type staged struct {
	version documents.Version
	catalog *gateway.Catalog
	data    []byte
}

// run reloads until ctx ends; a signal on rl.hup re-reads the document.
// It first publishes the document it serves from the start.
func (rl *reloader) run(ctx context.Context) {
	rl.mu.Lock()
	interval, location := rl.cfg.OpenAPIReloadInterval, rl.cfg.OpenAPI // restart-only: read once
	initial, version := rl.activeData, rl.active
	rl.mu.Unlock()
	if initial != nil {
		rl.publish(ctx, version, initial, "startup")
	}
	var fetchTick <-chan time.Time
	if interval > 0 && rl.src != nil {
		t := time.NewTicker(interval)
		defer t.Stop()
		fetchTick = t.C
	}
	check := time.NewTicker(checkEvery)
	defer check.Stop()
	var published <-chan []byte
	if sub, err := rl.bus.Subscribe(ctx, reloadTopic); err == nil {
		defer sub.Close()
		published = sub.C()
	}
	for {
		rl.check(ctx)
		select {
		case <-ctx.Done():
			lctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = rl.docs.Leave(lctx, rl.replica)
			cancel()
			return
		case <-rl.hup:
			if rl.src != nil { // the demo's document is built in
				rl.log.Info("SIGHUP: re-reading the OpenAPI document", "location", location)
			}
			rl.fetch(ctx, false)
		case <-fetchTick:
			lctx, cancel := context.WithTimeout(ctx, time.Second)
			held, err := rl.lease.Acquire(lctx, "reload", rl.replica, 3*interval)
			rl.metrics.leaseHeld(err == nil && held)
			cancel()
			if err != nil {
				rl.log.Warn("taking the reload lease failed", "err", err)
			} else if held {
				rl.fetch(ctx, true)
			}
		case <-published:
		case <-check.C:
		}
	}
}

// fetch re-reads the source and publishes it when it changed since this
// replica last read it (or, forced, when it differs from the store's).
func (rl *reloader) fetch(ctx context.Context, conditional bool) {
	if rl.src == nil {
		return
	}
	data, err := rl.src.read(ctx, conditional)
	switch {
	case err != nil:
		rl.log.Warn("re-reading the OpenAPI document failed; serving the running version", "err", err, "version", short(rl.active))
		rl.metrics.reloaded(reloadReadFailed)
		return
	case data == nil:
		return // 304
	}
	id := versionOf(data)
	if id == rl.fetched && conditional {
		return
	}
	rl.publish(ctx, id, data, "reload")
}

// publish checks that data (version id) loads, then makes it the store's
// current version (this replica stages it at once).
func (rl *reloader) publish(ctx context.Context, id string, data []byte, why string) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.fetched = id
	var cat *gateway.Catalog
	if id != rl.active {
		var err error
		if cat, err = rl.build(ctx, data); err != nil {
			rl.log.Warn("the re-read OpenAPI document does not load; serving the running version", "err", err, "version", short(rl.active))
			rl.metrics.reloaded(reloadInvalid)
			return
		}
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, changed, err := rl.docs.Publish(sctx, id, data)
	if err != nil {
		rl.log.Warn("publishing the OpenAPI document failed", "err", err)
		rl.metrics.reloaded(reloadPublishFailed)
		return
	}
	if !changed {
		return
	}
	rl.log.Info("published a new OpenAPI document version", "version", short(id), "why", why)
	if cat != nil {
		rl.staged = &staged{version: v, catalog: cat, data: data}
	}
	_ = rl.bus.Publish(sctx, reloadTopic, []byte(id))
}

// check follows the store: it stages its current version, reports what
// this replica has, and activates a staged version once every live
// replica has it (or the wait timed out).
func (rl *reloader) check(ctx context.Context) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cur, ok, err := rl.docs.Current(sctx)
	if err != nil {
		if ctx.Err() == nil {
			rl.log.Warn("reading the current document version failed", "err", err)
		}
		return
	}
	if ok && cur.ID != rl.active && (rl.staged == nil || rl.staged.version.ID != cur.ID) && (cur.ID != rl.broken || rl.cfg != rl.brokenCfg) {
		if data, err := rl.docs.Document(sctx, cur.ID); err != nil {
			// The store, not the document: tried again next check.
			if ctx.Err() == nil {
				rl.log.Warn("reading the published OpenAPI document failed; serving the running version", "err", err, "version", short(cur.ID))
				rl.metrics.reloaded(reloadStoreError)
			}
		} else if cat, err := rl.build(ctx, data); err != nil {
			rl.broken, rl.brokenCfg = cur.ID, rl.cfg
			rl.log.Warn("loading the published OpenAPI document failed; serving the running version", "err", err, "version", short(cur.ID))
			rl.metrics.reloaded(reloadInvalid)
		} else {
			rl.staged = &staged{version: cur, catalog: cat, data: data}
			rl.log.Info("loaded a new OpenAPI document version; waiting for the other replicas", "version", short(cur.ID))
		}
	}
	rl.report(sctx)
	replicas, err := rl.docs.Replicas(sctx)
	if err != nil {
		return
	}
	if rl.announce != nil {
		// Phase two: every replica serves the version; tell the clients.
		if n := countNot(replicas, rl.active, 1); n == 0 || time.Since(rl.announceSince) >= activationTimeout {
			rl.announce()
			rl.announce = nil
		}
	}
	if rl.staged == nil || (ok && cur.ID != rl.staged.version.ID) {
		return
	}
	// Phase one: every replica has the version loaded; serve it.
	waiting := countNot(replicas, rl.staged.version.ID, 0)
	if waiting > 0 && time.Since(rl.staged.version.PublishedAt) < activationTimeout {
		return
	}
	if waiting > 0 {
		rl.log.Warn("serving the new OpenAPI document version before every replica loaded it", "version", short(rl.staged.version.ID), "waiting_for", waiting)
	}
	// The publication, not only the content: a document that comes back
	// (A, B, A) is news again.
	rl.staged.catalog.Version = rl.staged.version.ID + "@" + strconv.FormatInt(rl.staged.version.PublishedAt.UnixMicro(), 10)
	if rl.announce != nil {
		rl.announce() // the version before was never announced: do it now
	}
	rl.announce, rl.announceSince = rl.srv.ReplaceCatalog(*rl.staged.catalog), time.Now()
	rl.active, rl.activeData = rl.staged.version.ID, rl.staged.data
	rl.log.Info("serving the new OpenAPI document version", "version", short(rl.active), "tools", rl.staged.catalog.Tools.Len())
	rl.metrics.reloaded(reloadApplied)
	rl.staged = nil
	rl.report(sctx)
}

// report tells the other replicas which version this one has loaded and
// which it serves ("loaded served"); a change wakes them over the bus, so
// the phases follow each other in milliseconds.
func (rl *reloader) report(ctx context.Context) {
	loaded := rl.active
	if rl.staged != nil {
		loaded = rl.staged.version.ID
	}
	if loaded == "" {
		return
	}
	value := loaded + " " + rl.active
	if err := rl.docs.Report(ctx, rl.replica, value, reportTTL); err != nil {
		rl.log.Warn("reporting the loaded document version failed", "err", err)
		return
	}
	if value != rl.reported {
		rl.reported = value
		_ = rl.bus.Publish(ctx, reloadTopic, []byte("reported"))
	}
}

// countNot counts the replicas whose report's field (0: loaded, 1:
// served) is not version.
func countNot(replicas map[string]string, version string, field int) int {
	n := 0
	for _, v := range replicas {
		if f := strings.Fields(v); len(f) <= field || f[field] != version {
			n++
		}
	}
	return n
}

func short(version string) string {
	v := strings.TrimPrefix(version, "sha256:")
	if len(v) > 12 {
		v = v[:12]
	}
	return v
}
