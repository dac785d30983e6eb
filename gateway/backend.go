package gateway

// The other features' way to the backend: a REST-backed resource's GET and
// the tools operation-backed resources and prompts embed, each admitted as
// tools/call of its operation is (tools.Run) and recorded in the request
// for the audit log.

import (
	"encoding/json"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/resources"
	"github.com/mcp-gateway/mcp-gateway/gateway/tools"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// fetchResource is the resources feature's GET of a REST-backed resource:
// admitted as tools/call of its operation is, and recorded as one.
func (s *Server) fetchResource(r *mcp.Request, name string, args json.RawMessage, cond call.Conditional) (*call.Fetched, error) {
	var got *call.Fetched
	err := s.tools.Run(r, name, func(op tools.Operation) error {
		if r != nil {
			r.Backend = op.Tool.Name
		}
		start := time.Now()
		f, ferr := op.Caller.Fetch(op.Ctx, op.Tool, args, cond)
		if r != nil {
			r.BackendTime = time.Since(start)
			switch {
			case f != nil:
				r.BackendStatus = f.Status
			case ferr != nil:
				r.BackendStatus = ferr.Status
			}
		}
		if ferr != nil {
			return ferr
		}
		got = f
		return nil
	})
	return got, err
}

// callTool runs a tool for an operation-backed resource, admitted as
// tools/call is, and recorded as one.
func (s *Server) callTool(r *mcp.Request, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return s.runTool(r, name, func(*toolgen.Tool) (json.RawMessage, error) { return args, nil })
}

// runTool runs the tool name with the arguments args makes for it.
func (s *Server) runTool(r *mcp.Request, name string, args func(*toolgen.Tool) (json.RawMessage, error)) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	err := s.tools.Run(r, name, func(op tools.Operation) error {
		in, err := args(op.Tool)
		if err != nil {
			return err
		}
		if r != nil {
			r.Backend = op.Tool.Name
		}
		p := op.Caller.CallPooled(op.Ctx, op.Tool, in, nil)
		if r != nil {
			r.BackendStatus, r.BackendTime = p.BackendStatus(), p.BackendTime()
		}
		res = p.Copy()
		p.Release()
		return nil
	})
	return res, err
}

// callToolText is callTool with text arguments (a prompt's), each sent as
// the type the tool's parameter takes; arguments the tool does not take
// are left out (completion passes every argument chosen so far).
func (s *Server) callToolText(r *mcp.Request, name string, args map[string]string) (*mcp.CallToolResult, error) {
	return s.runTool(r, name, func(tool *toolgen.Tool) (json.RawMessage, error) {
		in := make(map[string]json.RawMessage, len(args))
		for k, v := range args {
			if tool.TakesArg(k) {
				in[k] = tool.ArgFromText(k, v)
			}
		}
		return json.Marshal(in)
	})
}

// permits is whether r's caller may use the operation name, or, for
// resources.AllOperations, every one.
func (s *Server) permits(r *mcp.Request, name string) bool {
	if name == resources.AllOperations {
		return s.tools.PermitsAll(r)
	}
	return s.tools.Permits(r, name)
}
