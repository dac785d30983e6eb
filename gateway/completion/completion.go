// Package completion is the MCP completion feature: completion/complete.
// The gateway has no prompts or resource templates yet, so there is
// nothing to complete: every answer is an empty list.
//
// It registers its method on the server's method table and sees requests
// only as gateway/mcp values. It must not import package gateway, the
// transport, or another feature package.
package completion

import "github.com/mcp-gateway/mcp-gateway/gateway/mcp"

// Feature serves completion/complete.
type Feature struct{}

// New returns the feature.
func New() *Feature { return &Feature{} }

// Register adds the feature's method to the server's table.
func (f *Feature) Register(r mcp.Router) {
	r.Handle("completion/complete", mcp.EraBoth, f.complete)
}

type result struct {
	Completion struct {
		Values  []string `json:"values"`
		Total   int      `json:"total"`
		HasMore bool     `json:"hasMore"`
	} `json:"completion"`
	mcp.ResultMeta
}

func (f *Feature) complete(r *mcp.Request) (any, error) {
	var p struct {
		Ref *struct {
			Type string `json:"type"`
		} `json:"ref"`
		Argument *struct {
			Name  *string `json:"name"`
			Value *string `json:"value"`
		} `json:"argument"`
	}
	if err := mcp.DecodeParams(r, &p); err != nil {
		return nil, err
	}
	if p.Ref == nil || (p.Ref.Type != "ref/prompt" && p.Ref.Type != "ref/resource") {
		return nil, mcp.InvalidParams(`Invalid params for completion/complete: ref.type must be "ref/prompt" or "ref/resource"`)
	}
	if p.Argument == nil || p.Argument.Name == nil || p.Argument.Value == nil {
		return nil, mcp.InvalidParams("Invalid params for completion/complete: argument.name and argument.value are required")
	}
	res := &result{ResultMeta: r.StampResult(false)}
	res.Completion.Values = []string{}
	return res, nil
}
