// Command bench measures mcp-gateway against the alternatives a user
// weighs it against, in one run on one machine (issue 5):
//
//   - direct: the REST call straight to a small JSON backend;
//   - proxy: the same call through a plain httputil.ReverseProxy with the
//     gateway's backend transport settings;
//   - gateway (memory), gateway (stateless 2026-07-28), the same two with a
//     bearer token on a gateway with authentication on (its issuer runs in
//     this process, issuer.go), gateway (redis), and three gateway replicas
//     sharing one Redis behind a round-robin proxy: the equivalent
//     tools/call;
//   - sdk: a minimal MCP server written with the official Go SDK whose one
//     tool makes the same REST call (bench/sdkserver).
//
// Every server runs as its own process on loopback so that its CPU time can
// be read from /proc. Targets are measured interleaved, round after round,
// and medians are reported with their ratio to the proxy. The same run also
// loads GitHub's REST description, lists its tools, measures idle session
// memory and runs the in-process hot-path benchmarks of this package
// (hotpath_test.go) for allocations per call.
//
//	go run ./bench -out bench/results/$(hostname)-$(date +%F).md
//
// The helper servers (backend, proxy, round-robin proxy, plain JSON decode)
// are this same binary re-executed with -role. Nothing here is a test: the
// figures are reported, never asserted.
//
// bench imports the gateway only in its benchmarks (to drive the handler in
// process); the command itself talks to the built binaries over HTTP.
package main
