// Command mcp-gateway serves MCP in front of a REST backend described by an
// OpenAPI document. See README.md for usage.
//
// It is the only package that reads flags, environment and files
// (config.go) and the one that wires the parts together (run.go); nothing
// imports it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
