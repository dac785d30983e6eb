#!/usr/bin/env bash
# Validates the Helm chart and the kustomize manifests without a cluster
# (.ci/run runs it; so can you, from anywhere in the checkout):
#   - helm lint, and helm template with the default values and each
#     helm/mcp-gateway/examples/*.values.yaml;
#   - deploy/validate decodes every rendered document and every kustomize
#     build of deploy/kubernetes strictly into the k8s.io/api types (unknown
#     or duplicate fields and unknown kinds fail) and cross-checks them
#     (selectors, ports, volumes, probes, drain, secret files);
#   - the gateway's own configuration loader reads each rendered gateway
#     container's arguments, environment and config file;
#   - values the chart must refuse are refused (wrong types, unknown keys).
# helm is built from the Go module proxy at a pinned version, once.
set -euo pipefail
cd "$(dirname "$0")/../.."

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
HELM="$work/helm"
VALIDATE="$work/validate"
chart=helm/mcp-gateway

echo "-- building helm v3.16.4; testing and building deploy/validate"
GOBIN="$work" go install helm.sh/helm/v3/cmd/helm@v3.16.4
(cd deploy/validate && go vet . && go test -count=1 . && go build -o "$VALIDATE" .)

echo "-- helm lint"
"$HELM" lint --strict "$chart" >/dev/null
for f in "$chart"/examples/*.values.yaml; do
  "$HELM" lint --strict "$chart" -f "$f" >/dev/null
done

echo "-- helm template"
mkdir -p "$work/rendered"
"$HELM" template ci "$chart" >"$work/rendered/default.yaml"
for f in "$chart"/examples/*.values.yaml; do
  "$HELM" template ci "$chart" -f "$f" >"$work/rendered/$(basename "$f" .values.yaml).yaml"
done
# Every secret reference at once, on the default values.
"$HELM" template ci "$chart" --set replicaCount=3 --set redis.url=rediss://redis:6380/0 \
  --set redis.existingSecret=redis --set redis.tls.existingSecret=redis-tls \
  --set redis.tls.certKey=tls.crt --set redis.tls.keyKey=tls.key \
  --set secrets.backendBearerToken.existingSecret=backend \
  --set secrets.backendOAuthClientSecret.existingSecret=backend-oauth \
  --set secrets.backendApiKeys.existingSecret=backend-keys \
  --set secrets.backendHeaders.existingSecret=backend-headers \
  --set secrets.authHS256Secret.existingSecret=hs256 \
  --set secrets.webhookSecret.existingSecret=webhook \
  --set secrets.stateKey.existingSecret=state-key \
  --set tracing.otlpEndpoint=http://otel:4318 \
  --set config.public_url=https://mcp.example.com --set config.auth_issuer=https://login.example.com \
  --set config.backend_oauth_token_url=https://login.example.com/token \
  --set config.backend_oauth_client_id=mcp-gateway >"$work/rendered/all-secrets.yaml"
# The other branches: SIGHUP reloads, an HPA on CPU and memory, the Redis URL
# from a Secret, a percentage PDB, probes on the MCP port (no admin_listen).
"$HELM" template ci "$chart" --set configReload=sighup --set autoscaling.enabled=true \
  --set autoscaling.targetMemoryUtilizationPercentage=80 --set redis.existingUrlSecret=redis-url \
  --set podDisruptionBudget.minAvailable=50% --set config.admin_listen=null \
  --set topologySpread.enabled=false --set fullnameOverride=gw >"$work/rendered/variants.yaml"

echo "-- strict decoding and cross-checks (rendered chart, kustomize builds)"
"$VALIDATE" -gateway-out "$work/gateways" "$work"/rendered/*.yaml \
  deploy/kubernetes/base deploy/kubernetes/backend deploy/kubernetes/overlays/*

echo "-- the gateway loads every rendered configuration"
MCPGW_RENDERED_DIR="$work/gateways" go test -race -count=1 ./cmd/mcp-gateway -run '^TestRenderedGatewayConfigsLoad$'

echo "-- refusals"
# refused WHAT REASON COMMAND...: COMMAND must fail, saying REASON.
refused() {
  local what="$1" reason="$2" out
  shift 2
  if out="$("$@" 2>&1)"; then
    echo "FAIL: $what was accepted: $*" >&2
    exit 1
  fi
  if ! grep -qF -- "$reason" <<<"$out"; then
    echo "FAIL: $what was refused for another reason than \"$reason\": $*" >&2
    echo "$out" >&2
    exit 1
  fi
}
refused "a wrong type" "replicaCount: Invalid type" "$HELM" lint "$chart" --set replicaCount=three
refused "a wrong nested type" "drain.shutdownGraceSeconds: Invalid type" \
  "$HELM" lint "$chart" --set-string drain.shutdownGraceSeconds=15
refused "an unknown value" "Additional property replicas" "$HELM" lint "$chart" --set replicas=3
refused "a misspelt config key" "Additional property opnapi" "$HELM" lint "$chart" --set config.opnapi=x
refused "replicaCount > 1 without Redis" "needs redis.url" "$HELM" template ci "$chart" --set replicaCount=3
refused "a grace period shorter than the drain" "must exceed drain.preStopSleepSeconds" \
  "$HELM" template ci "$chart" --set terminationGracePeriodSeconds=20
refused "a loopback listen address" "non-loopback" "$HELM" template ci "$chart" --set config.listen=127.0.0.1:8080
# The validator itself refuses an unknown field and an unknown kind.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\nbinaryDat: {}\n' >"$work/unknown-field.yaml"
printf 'apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: x}\n' >"$work/unknown-kind.yaml"
refused "an unknown field" 'unknown field "binaryDat"' "$VALIDATE" "$work/unknown-field.yaml"
refused "an unknown kind" 'unknown kind "Deploymnet"' "$VALIDATE" "$work/unknown-kind.yaml"

echo "-- chart and manifests valid"
