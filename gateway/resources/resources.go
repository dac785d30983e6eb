// Package resources is the MCP resources feature: resources/list,
// resources/templates/list and resources/read. The gateway exposes no
// resources yet: lists are empty and every read is "not found" in the shape
// each era uses.
//
// It registers its methods on the server's method table and sees requests
// only as gateway/mcp values. It must not import package gateway, the
// transport, or another feature package.
package resources

import "github.com/mcp-gateway/mcp-gateway/gateway/mcp"

// Feature serves the resources methods.
type Feature struct{}

// New returns the feature.
func New() *Feature { return &Feature{} }

// Register adds the feature's methods to the server's table.
func (f *Feature) Register(r mcp.Router) {
	r.Handle("resources/list", mcp.EraBoth, f.list)
	r.Handle("resources/templates/list", mcp.EraBoth, f.listTemplates)
	r.Handle("resources/read", mcp.EraBoth, f.read)
}

type listResult struct {
	Resources  []any  `json:"resources"`
	NextCursor string `json:"nextCursor,omitempty"`
	mcp.ResultMeta
}

type listTemplatesResult struct {
	ResourceTemplates []any  `json:"resourceTemplates"`
	NextCursor        string `json:"nextCursor,omitempty"`
	mcp.ResultMeta
}

func (f *Feature) list(r *mcp.Request) (any, error) {
	if err := checkListParams(r); err != nil {
		return nil, err
	}
	return &listResult{Resources: []any{}, ResultMeta: r.StampResult(true)}, nil
}

func (f *Feature) listTemplates(r *mcp.Request) (any, error) {
	if err := checkListParams(r); err != nil {
		return nil, err
	}
	return &listTemplatesResult{ResourceTemplates: []any{}, ResultMeta: r.StampResult(true)}, nil
}

// checkListParams rejects any cursor: with empty lists none was ever issued.
func checkListParams(r *mcp.Request) error {
	var p mcp.ListParams
	if err := mcp.DecodeParams(r, &p); err != nil {
		return err
	}
	if p.Cursor != nil {
		return mcp.ErrBadCursor()
	}
	return nil
}

func (f *Feature) read(r *mcp.Request) (any, error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := mcp.DecodeParams(r, &p); err != nil {
		return nil, err
	}
	if p.URI == nil {
		return nil, mcp.InvalidParams("Invalid params for resources/read: uri is required")
	}
	code := mcp.CodeResourceNotFound // session era
	if r.Era == mcp.EraStateless {
		code = mcp.CodeInvalidParams // 2026-07-28 retired -32002
	}
	return nil, mcp.NewError(code, "Resource not found: %s", *p.URI).WithData(map[string]string{"uri": mcp.Truncate(*p.URI)})
}
