// Command validate checks the Kubernetes manifests of mcp-gateway without a
// cluster: the Helm chart's rendered output (on standard input or in files)
// and the kustomize directories under deploy/kubernetes (built in process
// with sigs.k8s.io/kustomize/api/krusty, as `kubectl kustomize` would).
//
// Every document is decoded strictly into its k8s.io/api type: an unknown
// or duplicated field is an error, and so is a kind the validator does not
// know (besides the CRDs it lists, typed by local structs). Then the
// documents of one set are checked against each other: selectors select,
// named ports and volumes exist, the drain fits the grace period, and the
// gateway's secret files lie on mounted volumes.
//
// It is a module of its own (deploy/validate/go.mod) so that the Kubernetes
// libraries it imports never enter the gateway's go.mod; it imports no
// package of the gateway either. .ci/run builds and runs it.
package main
