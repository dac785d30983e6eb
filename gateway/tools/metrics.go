package tools

import (
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// recordBackend notes one backend round of r's call in r (BackendStatus,
// BackendTime), where the gateway's metrics read it once the call is
// answered: this package counts nothing itself, so that one place
// classifies a call's outcome. A round that sent nothing (invalid
// arguments) leaves r as it was.
func recordBackend(r *mcp.Request, res *mcp.PooledResult, need *call.InputRequired) {
	switch {
	case res != nil && res.BackendTime() > 0:
		r.BackendStatus = res.BackendStatus()
		r.BackendTime += res.BackendTime()
	case need != nil && need.Elapsed > 0:
		r.BackendStatus = need.Status
		r.BackendTime += need.Elapsed
	}
}
