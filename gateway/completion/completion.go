package completion

import (
	"encoding/json"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// MaxValues is the most values one answer carries (the specification's
// limit); total still counts every match.
const MaxValues = 100

// Deps are where the candidates come from.
type Deps struct {
	// PromptValues are the completion candidates of a prompt's argument
	// for r's caller, given the arguments already chosen; ok is false for
	// an unknown prompt or argument. An error (a source that failed) is
	// the answer as is. Nil means there are no prompts.
	PromptValues func(r *mcp.Request, prompt, arg string, chosen map[string]string) (values []string, ok bool, err error)
	// ResourceValues are the completion candidates of a resource
	// template's variable for r's caller; ok is false for an unknown template or
	// variable. Nil means there are no resource templates.
	ResourceValues func(r *mcp.Request, uriTemplate, variable string) (values []string, ok bool)
}

// Feature serves completion/complete.
type Feature struct {
	deps Deps
}

// New returns the feature.
func New(deps Deps) *Feature { return &Feature{deps: deps} }

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

type params struct {
	Ref *struct {
		Type string  `json:"type"`
		Name *string `json:"name"` // ref/prompt
		URI  *string `json:"uri"`  // ref/resource: the URI template
	} `json:"ref"`
	Argument *struct {
		Name  *string `json:"name"`
		Value *string `json:"value"`
	} `json:"argument"`
	// Context carries the arguments already chosen (2025-06-18 on): a
	// prompt argument whose candidates come from a tool passes them to it.
	Context *struct {
		Arguments json.RawMessage `json:"arguments"`
	} `json:"context"`
}

func (f *Feature) complete(r *mcp.Request) (any, error) {
	var p params
	if err := mcp.DecodeParams(r, &p); err != nil {
		return nil, err
	}
	if p.Ref == nil {
		return nil, mcp.InvalidParams("Invalid params for completion/complete: ref is required")
	}
	if p.Argument == nil || p.Argument.Name == nil || p.Argument.Value == nil {
		return nil, mcp.InvalidParams("Invalid params for completion/complete: argument.name and argument.value are required")
	}
	var chosen map[string]string
	if p.Context != nil && len(p.Context.Arguments) > 0 {
		if json.Unmarshal(p.Context.Arguments, &chosen) != nil {
			return nil, mcp.InvalidParams("Invalid params for completion/complete: context.arguments must be an object of strings")
		}
	}
	arg := *p.Argument.Name
	var values []string
	switch p.Ref.Type {
	case "ref/prompt":
		if p.Ref.Name == nil {
			return nil, mcp.InvalidParams("Invalid params for completion/complete: ref.name is required for ref/prompt")
		}
		ok := false
		if f.deps.PromptValues != nil {
			var err error
			if values, ok, err = f.deps.PromptValues(r, *p.Ref.Name, arg, chosen); err != nil {
				return nil, err
			}
		}
		if !ok {
			return nil, mcp.InvalidParams("Invalid params for completion/complete: no prompt %q with argument %q", *p.Ref.Name, arg)
		}
	case "ref/resource":
		if p.Ref.URI == nil {
			return nil, mcp.InvalidParams("Invalid params for completion/complete: ref.uri is required for ref/resource")
		}
		ok := false
		if f.deps.ResourceValues != nil {
			values, ok = f.deps.ResourceValues(r, *p.Ref.URI, arg)
		}
		if !ok {
			return nil, mcp.InvalidParams("Invalid params for completion/complete: no resource template %q with variable %q", *p.Ref.URI, arg)
		}
	default:
		return nil, mcp.InvalidParams(`Invalid params for completion/complete: ref.type must be "ref/prompt" or "ref/resource"`)
	}
	res := &result{ResultMeta: r.StampResult(false)}
	res.Completion.Values = []string{}
	for _, v := range values {
		if !hasPrefixFold(v, *p.Argument.Value) {
			continue
		}
		res.Completion.Total++
		if len(res.Completion.Values) < MaxValues {
			res.Completion.Values = append(res.Completion.Values, v)
		}
	}
	res.Completion.HasMore = res.Completion.Total > len(res.Completion.Values)
	return res, nil
}

// hasPrefixFold reports whether s begins with prefix under Unicode case
// folding, rune by rune (a folded rune may differ in length: K and the
// Kelvin sign).
func hasPrefixFold(s, prefix string) bool {
	for _, pr := range prefix {
		if s == "" {
			return false
		}
		sr, n := utf8.DecodeRuneInString(s)
		if !foldEqual(sr, pr) {
			return false
		}
		s = s[n:]
	}
	return true
}

func foldEqual(a, b rune) bool {
	if a == b {
		return true
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}
