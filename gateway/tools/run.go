package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// Operation is a backend operation another feature runs on a caller's
// behalf: a REST-backed resource's GET, the tool an operation-backed
// resource or prompt message embeds, the list a completion reads.
type Operation struct {
	Tool   *toolgen.Tool
	Caller *call.Caller
	// Ctx is the call's context: the operation's timeout, the caller's
	// cancellation, and the caller's token for RFC 8693 exchange.
	Ctx context.Context
}

// Run admits r's caller to the tool or resource operation named name as
// tools/call would — its scopes, the replica's running-call slots, the
// rate limits, quotas and the policy webhook — and runs do with the
// operation. A refusal is an *mcp.Error whose data carries the kind (and
// retryAfterSeconds), with Retry-After for a limit: other features answer
// with errors, not tool results. r nil is the gateway's own work (change
// polling): nobody's scopes or limits apply.
func (f *Feature) Run(r *mcp.Request, name string, do func(op Operation) error) error {
	c, err := f.catalog()
	if err != nil {
		return err
	}
	tool, ok := c.lookup(name)
	if !ok {
		return fmt.Errorf("tools: no tool or resource operation %q", name)
	}
	if r == nil {
		ctx, cancel := context.WithTimeoutCause(context.Background(), c.callerFor(tool).Timeout(tool), call.ErrTimeout)
		defer cancel()
		return do(Operation{Tool: tool, Caller: c.callerFor(tool), Ctx: ctx})
	}
	if !f.usable(r, c, tool.Name) {
		// Outside what this connection is served (its toolsets, read-only,
		// the operator's toolsets): as a tool it would not exist.
		return mcp.NewError(mcp.CodeInvalidParams, "Operation %q is not served on this connection", tool.Name).
			WithData(map[string]any{"kind": "not_served"})
	}
	tp := c.policy[tool.Name]
	if tp != nil && !granted(r.Principal, tp.scopes) {
		return f.insufficientScope(r, tool.Name, tp.scopes)
	}
	if slots := c.conf.slots; slots != nil {
		if !f.takeSlot(r, slots) {
			return mcp.NewError(mcp.CodeUnavailable, "The gateway is busy: %d backend calls are running on this replica; retry in 1s", c.conf.MaxConcurrent).
				WithStatus(http.StatusServiceUnavailable).WithHeader("Retry-After", "1").
				WithData(map[string]any{"kind": "busy", "retryAfterSeconds": 1})
		}
		defer func() { <-slots }()
	}
	if tp != nil {
		release, d := f.limit(r, c, tool, tp)
		if d != nil {
			return d.err()
		}
		if release != nil {
			defer release()
		}
	}
	ctx, cancel := callContext(r, c, tool)
	defer cancel()
	err = do(Operation{Tool: tool, Caller: c.callerFor(tool), Ctx: ctx})
	if mcp.Cancelled(ctx, call.ErrTimeout) {
		return mcp.ErrCancelled
	}
	return err
}

// Permits reports whether r's caller has the scopes the tool or resource
// operation name needs (what it may see; limits are not asked).
func (f *Feature) Permits(r *mcp.Request, name string) bool {
	c := f.current.Load()
	if c == nil || c.Tools == nil {
		return false
	}
	if !f.usable(r, c, name) {
		return false
	}
	tp := c.policy[name]
	return tp == nil || granted(r.Principal, tp.scopes)
}

// lookup finds a tool, else a resource operation that is not one.
func (c *catalog) lookup(name string) (*toolgen.Tool, bool) {
	if t, ok := c.Tools.Lookup(name); ok {
		return t, true
	}
	if op, ok := c.Tools.Resource(name); ok {
		return op.Tool, true
	}
	return nil, false
}

// err is the denial as a JSON-RPC error, for the features that answer
// with one.
func (d *denial) err() *mcp.Error {
	data, secs := d.info()
	status := http.StatusTooManyRequests
	if d.kind == "policy_denied" {
		status = http.StatusForbidden
	}
	e := mcp.NewError(mcp.CodeInvalidRequest, "%s", d.message).WithStatus(status).WithData(data)
	if status == http.StatusTooManyRequests {
		e = e.WithHeader("Retry-After", strconv.Itoa(secs))
	}
	return e
}

// Fingerprint is a short hash of the tools p sees now through surface,
// their definitions included: it differs exactly when its tools/list
// would.
func (f *Feature) Fingerprint(p *mcp.Principal, surface mcp.Surface) string {
	c := f.current.Load()
	if c == nil || c.Tools == nil {
		return ""
	}
	list := c.visible(p)
	if !c.plain || !surface.IsZero() {
		r := &mcp.Request{Principal: p, Surface: surface}
		list = f.view(c, r, f.surfaceOf(c, r)).listed
	}
	h := fnv.New64a()
	for _, t := range list {
		b, _ := json.Marshal(t) // generated JSON: cannot fail
		h.Write(b)
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// PermitsAll reports whether r's caller may use every tool and resource
// operation (what the built-ins showing the whole document need).
func (f *Feature) PermitsAll(r *mcp.Request) bool {
	c := f.current.Load()
	if c == nil || c.Tools == nil {
		return false
	}
	if c.served != nil || r.Surface.Toolsets != nil || r.Surface.ReadOnly {
		return false // the whole document shows more than is served here
	}
	if !c.authorize {
		return true
	}
	for _, tp := range c.policy {
		if !granted(r.Principal, tp.scopes) {
			return false
		}
	}
	return true
}
