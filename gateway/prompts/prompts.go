// Package prompts is the MCP prompts feature: prompts/list and prompts/get.
// The gateway declares no prompts yet: the list is empty and every get is
// an unknown prompt.
//
// It registers its methods on the server's method table and sees requests
// only as gateway/mcp values. It must not import package gateway, the
// transport, or another feature package.
package prompts

import "github.com/mcp-gateway/mcp-gateway/gateway/mcp"

// Feature serves the prompts methods.
type Feature struct{}

// New returns the feature.
func New() *Feature { return &Feature{} }

// Register adds the feature's methods to the server's table.
func (f *Feature) Register(r mcp.Router) {
	r.Handle("prompts/list", mcp.EraBoth, f.list)
	r.Handle("prompts/get", mcp.EraBoth, f.get)
}

type listResult struct {
	Prompts    []any  `json:"prompts"`
	NextCursor string `json:"nextCursor,omitempty"`
	mcp.ResultMeta
}

func (f *Feature) list(r *mcp.Request) (any, error) {
	var p mcp.ListParams
	if err := mcp.DecodeParams(r, &p); err != nil {
		return nil, err
	}
	if p.Cursor != nil {
		// With an empty list no cursor was ever issued.
		return nil, mcp.ErrBadCursor()
	}
	return &listResult{Prompts: []any{}, ResultMeta: r.StampResult(true)}, nil
}

func (f *Feature) get(r *mcp.Request) (any, error) {
	var p struct {
		Name *string `json:"name"`
	}
	if err := mcp.DecodeParams(r, &p); err != nil {
		return nil, err
	}
	if p.Name == nil {
		return nil, mcp.InvalidParams("Invalid params for prompts/get: name is required")
	}
	return nil, mcp.InvalidParams("Unknown prompt: %q", *p.Name)
}
