// Package redistest starts throwaway Redis servers for tests: a standalone
// server per test (Standalone), one speaking TLS only with certificates made
// for the test (TLS, NewCerts), a three-master Redis Cluster (Cluster), a
// Cluster whose masters have replicas and may be killed (ClusterWithReplicas),
// and a Sentinel set of a master, a replica and three sentinels whose master
// may be killed (Sentinel), plus per-test key prefixes (Prefix) whose keys
// are removed by SCAN+DEL when the test ends (Cleanup). Tests never FLUSHALL
// a server they share.
//
// # Processes never outlive the test binary
//
// Every redis-server is stopped by the owner's cleanup: t.Cleanup for a
// Standalone, a TLS server, a Sentinel set or a per-test Cluster, Main (called from TestMain) for the
// cluster shared by a whole test binary. As a backstop on Linux, each
// redis-server is started with the parent-death signal set to SIGKILL, so
// the kernel kills it when the test binary dies any other way (a panic, a
// -timeout, os.Exit, kill -9). The signal fires when the thread that forked
// the child exits, not the process, so children are forked from one goroutine
// that stays locked to its OS thread for the life of the process.
//
// Skips: when redis-server (or, for Cluster, redis-cli) is not on PATH, the
// test is skipped with a message saying so.
//
// The package is for tests only; it imports go-redis and testing.
package redistest
