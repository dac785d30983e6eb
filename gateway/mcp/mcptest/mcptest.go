// Package mcptest helps test feature packages without the transport: a
// method table to register on and a request maker. It imports only
// gateway/mcp of the gateway, like the features it tests.
package mcptest

import (
	"context"
	"encoding/json"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// Table is a method table as the server keeps one (an mcp.Router).
type Table map[string]Entry

// Entry is one registered method.
type Entry struct {
	Eras    mcp.Era
	Handler mcp.Handler
}

var _ mcp.Router = Table{}

// Handle registers h; a second registration of a name panics, as the
// server's does.
func (t Table) Handle(name string, eras mcp.Era, h mcp.Handler) {
	if _, dup := t[name]; dup {
		panic("mcptest: method " + name + " registered twice")
	}
	t[name] = Entry{Eras: eras, Handler: h}
}

// Call runs method's handler with r (whose Method it sets).
func (t Table) Call(method string, r *mcp.Request) (any, error) {
	r.Method = method
	return t[method].Handler(r)
}

// Request is a request of era with params (empty: none), its context
// Background and its log level off.
func Request(era mcp.Era, params string) *mcp.Request {
	r := &mcp.Request{Ctx: context.Background(), Era: era, LogLevel: mcp.LevelOff, Stamp: &mcp.Stamper{}}
	if era == mcp.EraSession {
		r.SessionID = "test-session"
	}
	if params != "" {
		r.Params = json.RawMessage(params)
	}
	return r
}
