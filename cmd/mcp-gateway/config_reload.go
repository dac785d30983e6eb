package main

// Configuration reload on SIGHUP. The configuration is loaded again as at
// start (the file, then the environment and the command line of the start,
// which still win); an invalid one leaves the running configuration in
// place and logs why. Of a valid one, the settings a running gateway can
// change (runtimeKeys) are applied to every endpoint: its catalog is
// rebuilt from the document it serves under the new filters and swapped
// in with the new limits, prompts and resources (gateway.Reconfigure), so
// sessions and streams stay and clients are told what changed
// (list_changed). The others keep their running values and are named in a
// warning: they need a restart. The document is re-read after, under the
// configuration then served (the running one, if the file was refused).
// Each replica reloads its own file on its own SIGHUP.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/gateway"
)

// runtimeKeys are the settings a reload applies while serving. Every
// other setting needs a restart.
var runtimeKeys = []string{
	// Limits, quotas and the policy.
	"tool_call_rate", "tool_call_burst", "max_concurrent_calls", "rate_per_tool", "burst_per_tool", "rate_per_client",
	"burst_per_client", "session_concurrency", "max_sessions_per_client", "max_sessions", "quota_webhook_url",
	"quota_webhook_timeout", "tool_limits", "quotas", "scope_rules",
	// What is served: the catalog is rebuilt from the running document.
	"include", "exclude", "read_only", "resource_operations", "confirm", "toolsets", "toolsets_enabled", "tool_mode",
	"tool_prefix", "output_schema", "max_schema_bytes", "operations", "backend_timeout", "backend_max_response_bytes",
	"backend_error_body", "max_request_url_bytes",
	// Declared content, and the log.
	"prompts", "resources", "log_level",
}

// mergeReload is what a reload serves: the running configuration with the
// run-time settings of next; restart names the other settings next
// changes (at before each key: "" at the top level, "apis[a]." in an
// entry).
func mergeReload(running, next *config, at string) (merged *config, changed, restart []string) {
	m := *running
	dst, src, cur := reflect.ValueOf(&m).Elem(), reflect.ValueOf(next).Elem(), reflect.ValueOf(running).Elem()
	for _, f := range configFields() {
		nv := src.FieldByIndex(f.index)
		if reflect.DeepEqual(cur.FieldByIndex(f.index).Interface(), nv.Interface()) {
			continue
		}
		if !slices.Contains(runtimeKeys, f.key) {
			restart = appendOnce(restart, at+f.key)
			continue
		}
		dst.FieldByIndex(f.index).Set(nv)
		changed = appendOnce(changed, at+f.key)
	}
	return &m, changed, restart
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// reloadPlan is a reload of the whole configuration: the merged top level
// and, by endpoint, its APIs' merged configurations.
type reloadPlan struct {
	cfg              *config
	groups           [][]*apiEntry // as the endpoints are, in their order
	changed, restart []string
}

// planReload merges next into the running configuration. The apis list
// keeps its shape (names, order, mount paths): entries are matched by
// name, and a changed list is named for a restart.
func planReload(running *config, eps []*endpoint, next *config) *reloadPlan {
	p := &reloadPlan{}
	p.cfg, p.changed, p.restart = mergeReload(running, next, "")
	if !slices.Equal(entryNames(running.APIs), entryNames(next.APIs)) {
		p.restart = appendOnce(p.restart, "apis")
	}
	p.cfg.APIs = nil
	for _, ep := range eps {
		var group []*apiEntry
		for _, e := range ep.group {
			merged := e.cfg
			if e.Name == "" {
				merged = p.cfg
			} else if i := slices.IndexFunc(next.APIs, func(n *apiEntry) bool { return n.Name == e.Name }); i >= 0 {
				var changed, restart []string
				merged, changed, restart = mergeReload(e.cfg, next.APIs[i].cfg, "apis["+e.Name+"].")
				p.changed = append(p.changed, changed...)
				for _, k := range restart {
					// One the entry inherits is named once, at the top level.
					if !slices.Contains(p.restart, strings.TrimPrefix(k, "apis["+e.Name+"].")) {
						p.restart = appendOnce(p.restart, k)
					}
				}
			}
			group = append(group, &apiEntry{Name: e.Name, cfg: merged})
			if e.Name != "" {
				p.cfg.APIs = append(p.cfg.APIs, group[len(group)-1])
			}
		}
		p.groups = append(p.groups, group)
	}
	// An entry's change also shows at the top level it inherits from:
	// name what the entries name. But log_level, process-wide, is named
	// once, at the top level (so that a change of it alone stays one).
	p.changed = slices.DeleteFunc(p.changed, func(k string) bool {
		if strings.HasPrefix(k, "apis[") {
			return strings.HasSuffix(k, "].log_level")
		}
		return len(running.APIs) > 0 && k != "log_level"
	})
	return p
}

// configReloader applies SIGHUP's reloads.
type configReloader struct {
	args   []string
	getenv func(string) string
	log    *slog.Logger
	level  *slog.LevelVar
	cur    *config
	eps    []*endpoint
}

// run reloads on each signal until ctx ends; each endpoint's document is
// re-read after, under the configuration now served.
func (cr *configReloader) run(ctx context.Context, hup <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		cr.reload(ctx)
		for _, ep := range cr.eps {
			if ep.rl != nil {
				select {
				case ep.rl.hup <- struct{}{}:
				default: // one is pending
				}
			}
		}
	}
}

// reload loads the configuration and applies it; it reports whether it
// did (false: it was invalid, nothing changed).
func (cr *configReloader) reload(ctx context.Context) bool {
	file := cr.cur.ConfigFile
	next, _, err := loadConfig("mcp-gateway", cr.args, cr.getenv, io.Discard)
	if err != nil {
		cr.log.Error("SIGHUP: the configuration is invalid; serving the running configuration", "file", file, "err", newRedactor(cr.cur).scrub(err.Error()))
		return false
	}
	plan := planReload(cr.cur, cr.eps, next)
	if len(plan.restart) > 0 {
		cr.log.Warn("SIGHUP: restart to apply: "+strings.Join(plan.restart, ", "), "file", file)
	}
	if len(plan.changed) == 0 {
		cr.log.Info("SIGHUP: configuration reloaded; no setting that changes at run time changed", "file", file)
		cr.cur = plan.cfg
		return true
	}
	if slices.Equal(plan.changed, []string{"log_level"}) {
		// Nothing served changes: no catalog to rebuild.
		cr.setLevel(plan)
		return true
	}
	announce, ok := cr.apply(ctx, plan, file)
	if !ok {
		return false
	}
	cr.setLevel(plan)
	for _, a := range announce {
		a()
	}
	return true
}

// apply swaps plan's catalogs and settings into every endpoint, or, when
// one does not take them, into none (false: logged why). It returns the
// announcements to make.
func (cr *configReloader) apply(ctx context.Context, plan *reloadPlan, file string) ([]func(), bool) {
	tag := configTag(file)
	// Build and check every endpoint's catalog and settings first: any
	// failure keeps the running configuration entirely. The reloaders
	// wait meanwhile (rl.mu), so the documents built from stay the ones
	// served, until the swaps are done (not the announcements: a client
	// told re-lists at once).
	for _, ep := range cr.eps {
		if ep.rl != nil {
			ep.rl.mu.Lock()
			defer ep.rl.mu.Unlock()
		}
	}
	type swap struct {
		gcfg gateway.Config
		cat  *gateway.Catalog
	}
	swaps := make([]swap, len(cr.eps))
	for i, ep := range cr.eps {
		cat, err := ep.rebuild(ctx, plan.groups[i], tag)
		why := "the configuration does not fit the document"
		if err == nil {
			swaps[i] = swap{gcfg: groupGatewayConfig(plan.groups[i], ep.sh), cat: cat}
			err, why = ep.srv.CheckReconfigure(swaps[i].gcfg, *cat), "the gateway refuses the configuration"
		}
		if err != nil {
			cr.log.Error("SIGHUP: "+why+"; serving the running configuration", "file", file,
				"api", ep.name, "err", newRedactor(cr.cur).scrub(err.Error()))
			return nil, false
		}
	}
	var announce []func()
	for i, ep := range cr.eps {
		a, err := ep.srv.Reconfigure(swaps[i].gcfg, *swaps[i].cat)
		if err != nil {
			// Checked above (CheckReconfigure): not reached.
			cr.log.Error("SIGHUP: applying the configuration failed; this API serves its running configuration", "api", ep.name, "err", err)
			continue
		}
		announce = append(announce, a)
		ep.group, ep.cfg, ep.catalog = plan.groups[i], plan.groups[i][0].cfg, swaps[i].cat
		if ep.rl != nil {
			// A version staged under the old configuration is staged again.
			ep.rl.cfg, ep.rl.staged = ep.cfg, nil
		}
	}
	return announce, true
}

// setLevel makes plan the running configuration, at its log level.
func (cr *configReloader) setLevel(plan *reloadPlan) {
	cr.level.Set(logLevel(plan.cfg.LogLevel))
	cr.log.Debug("SIGHUP: logging at " + plan.cfg.LogLevel)
	cr.cur = plan.cfg
	cr.log.Info("SIGHUP: configuration reloaded", "file", plan.cfg.ConfigFile, "changed", strings.Join(plan.changed, ", "))
}

// configTag names a configuration among reloads (the file's content), so
// that a session hears one list_changed per reload however many replicas
// hold its streams.
func configTag(file string) string {
	b, _ := os.ReadFile(file)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// rebuild builds the endpoint's catalog under the group's configurations,
// from the documents it serves (called under rl.mu).
func (ep *endpoint) rebuild(ctx context.Context, group []*apiEntry, tag string) (*gateway.Catalog, error) {
	var cats []*loadedAPI
	for i, la := range ep.apis {
		cfg := group[i].cfg
		data, version := la.docData, la.catalog.Version
		if ep.rl != nil {
			data, version = ep.rl.activeData, ep.rl.active
		}
		if len(group) > 1 {
			cfg = withoutToolsetsEnabled(cfg)
		}
		cat, err := buildCatalog(ctx, cfg, data, la.location, la.upstream, ep.backend, ep.log)
		if err != nil {
			return nil, fmt.Errorf("%s%w", apiPrefix(group[i]), err)
		}
		cat.Version = version
		cats = append(cats, &loadedAPI{catalog: cat})
	}
	cat := cats[0].catalog
	if len(cats) > 1 {
		merged, err := mergeCatalogs(entryNames(group), cats)
		if err != nil {
			return nil, err
		}
		if err := gateway.CheckToolsets(merged.Tools, group[0].cfg.ToolsetsEnabled); err != nil {
			return nil, &configError{key: "toolsets_enabled", source: group[0].cfg.fileName(), reason: err.Error()}
		}
		cat = merged
	}
	cat.Version += "+config:" + tag
	return cat, nil
}
