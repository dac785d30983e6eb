// Package completion is the MCP completion feature: completion/complete
// for the arguments of prompts and the variables of resource templates.
// The candidates come from the features that declare them, through func
// fields (Deps); this package filters them by the client's prefix.
//
// It registers its method on the server's method table and sees requests
// only as gateway/mcp values. It must not import package gateway, the
// transport, or another feature package.
package completion
