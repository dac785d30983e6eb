package mcp

import "time"

// ResultMeta carries the fields the stateless era adds to every result.
// Result types embed it; it stays empty in the session era.
type ResultMeta struct {
	ResultType string         `json:"resultType,omitempty"`
	TTLMs      *int64         `json:"ttlMs,omitempty"`
	CacheScope string         `json:"cacheScope,omitempty"`
	Meta       map[string]any `json:"_meta,omitempty"`
}

func (m *ResultMeta) empty() bool {
	return m.ResultType == "" && m.Meta == nil && m.TTLMs == nil && m.CacheScope == ""
}

// Stamper makes the stateless-era result fields; the server makes one.
type Stamper struct {
	// ListTTL is the ttlMs hint on cacheable results.
	ListTTL time.Duration
	// ServerMeta is every stateless result's _meta; nothing modifies it.
	ServerMeta map[string]any
}

// StampResult returns the stateless-era result fields for r; cacheable results
// (lists, discovery) also carry cache hints.
func (r *Request) StampResult(cacheable bool) ResultMeta {
	if r.Era != EraStateless || r.Stamp == nil {
		return ResultMeta{}
	}
	m := ResultMeta{ResultType: "complete", Meta: r.Stamp.ServerMeta}
	if cacheable {
		ttl := r.Stamp.ListTTL.Milliseconds()
		m.TTLMs = &ttl
		// Results do not vary by credentials: the gateway serves one tool
		// set to every caller.
		m.CacheScope = "public"
	}
	return m
}

// Implementation is serverInfo / clientInfo.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// ListParams are the params of every paginated list method.
type ListParams struct {
	Cursor *string `json:"cursor"`
}
