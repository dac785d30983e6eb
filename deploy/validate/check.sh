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
#   - values the chart must refuse are refused (wrong types, unknown keys,
#     each of the chart's own refusals).
# helm is built from the Go module proxy at a pinned version, once per
# machine: it is kept in the user's cache directory (helm-VERSION/helm).
set -euo pipefail
cd "$(dirname "$0")/../.."

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
VALIDATE="$work/validate"
chart=helm/mcp-gateway

helm_version=v3.16.4
helm_dir="${XDG_CACHE_HOME:-$HOME/.cache}/mcp-gateway/helm-$helm_version"
mkdir -p "$helm_dir" 2>/dev/null || helm_dir="$work/helm-$helm_version"
HELM="$helm_dir/helm"
if [ ! -x "$HELM" ]; then
  echo "-- building helm $helm_version into $helm_dir"
  mkdir -p "$helm_dir"
  # Built beside and renamed: an interrupted build leaves no half binary.
  GOBIN="$helm_dir/.build.$$" go install "helm.sh/helm/v3/cmd/helm@$helm_version"
  mv "$helm_dir/.build.$$/helm" "$HELM"
  rmdir "$helm_dir/.build.$$"
fi
# helm built with go install assumes Kubernetes 1.20 (its release builds set
# the version with -ldflags); the chart's kubeVersion asks for 1.30 or later.
kube=(--kube-version 1.30.0)

echo "-- testing and building deploy/validate"
# go vet too: go test runs only a subset of its analyzers (not copylocks,
# lostcancel, unusedresult...); the full vet costs well under a second
# once the build cache is warm.
(cd deploy/validate && go vet . && go test -count=1 . && go build -o "$VALIDATE" .)

echo "-- helm lint"
# lint prints its [ERROR] lines on stdout: shown when it fails.
lint() {
  local out
  if ! out="$("$HELM" lint --strict "${kube[@]}" "$chart" "$@" 2>&1)"; then
    echo "FAIL: helm lint $*" >&2
    echo "$out" >&2
    exit 1
  fi
}
lint
for f in "$chart"/examples/*.values.yaml; do
  lint -f "$f"
done

echo "-- helm template"
mkdir -p "$work/rendered"
"$HELM" template ci "$chart" "${kube[@]}" >"$work/rendered/default.yaml"
for f in "$chart"/examples/*.values.yaml; do
  "$HELM" template ci "$chart" "${kube[@]}" -f "$f" >"$work/rendered/$(basename "$f" .values.yaml).yaml"
done
# Every secret reference at once, on the default values.
"$HELM" template ci "$chart" "${kube[@]}" --set replicaCount=3 --set redis.url=rediss://redis:6380/0 \
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
"$HELM" template ci "$chart" "${kube[@]}" --set configReload=sighup --set autoscaling.enabled=true \
  --set autoscaling.targetMemoryUtilizationPercentage=80 --set redis.existingUrlSecret=redis-url \
  --set podDisruptionBudget.minAvailable=50% --set config.admin_listen=null \
  --set topologySpread.enabled=false --set fullnameOverride=gw >"$work/rendered/variants.yaml"

echo "-- strict decoding and cross-checks (rendered chart, kustomize builds)"
"$VALIDATE" -gateway-out "$work/gateways" "$work"/rendered/*.yaml \
  deploy/kubernetes/base deploy/kubernetes/backend deploy/kubernetes/overlays/*

echo "-- the gateway loads every rendered configuration"
# -v and the PASS line: a renamed test would otherwise pass as "no tests to run".
if ! out="$(MCPGW_RENDERED_DIR="$work/gateways" go test -race -count=1 -v ./cmd/mcp-gateway -run '^TestRenderedGatewayConfigsLoad$' 2>&1)" ||
  ! grep -q -- '^--- PASS: TestRenderedGatewayConfigsLoad ' <<<"$out"; then
  echo "$out" >&2
  echo "FAIL: TestRenderedGatewayConfigsLoad did not run and pass" >&2
  exit 1
fi

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
refused "a wrong type" "replicaCount: Invalid type" "$HELM" lint "${kube[@]}" "$chart" --set replicaCount=three
refused "a wrong nested type" "drain.shutdownGraceSeconds: Invalid type" \
  "$HELM" lint "${kube[@]}" "$chart" --set-string drain.shutdownGraceSeconds=15
refused "an unknown value" "Additional property replicas" "$HELM" lint "${kube[@]}" "$chart" --set replicas=3
refused "a misspelt config key" "Additional property opnapi" "$HELM" lint "${kube[@]}" "$chart" --set config.opnapi=x
# Each refusal of the chart (mcp-gateway.checks in templates/_helpers.tpl).
template=("$HELM" template ci "$chart" "${kube[@]}")
redis=(--set redis.url=redis://redis:6379/0)
refused "an old Kubernetes" "incompatible with Kubernetes v1.29" "$HELM" template ci "$chart" --kube-version 1.29.0
refused "replicaCount > 1 without Redis" "replicaCount > 1 needs redis.url" "${template[@]}" --set replicaCount=3
refused "autoscaling without Redis" "autoscaling.enabled needs redis.url" "${template[@]}" --set autoscaling.enabled=true
refused "a Redis URL twice" "set redis.url or redis.existingUrlSecret, not both" \
  "${template[@]}" "${redis[@]}" --set redis.existingUrlSecret=redis-url
refused "config.redis_url beside redis.url" "not config.redis_url too" \
  "${template[@]}" "${redis[@]}" --set config.redis_url=redis://other:6379/0
refused "a Redis password twice" "redis.existingSecret sets redis_password_file" \
  "${template[@]}" "${redis[@]}" --set redis.existingSecret=redis --set config.redis_password=x
refused "TLS files with redis://" "needs a rediss:// redis.url" \
  "${template[@]}" "${redis[@]}" --set redis.tls.existingSecret=redis-tls
refused "a client certificate without its key" "redis.tls.certKey and redis.tls.keyKey go together" \
  "${template[@]}" --set redis.tls.existingSecret=redis-tls --set redis.tls.certKey=tls.crt
refused "config.shutdown_grace" "set drain.shutdownGraceSeconds, not config.shutdown_grace" \
  "${template[@]}" --set config.shutdown_grace=20s
refused "a grace period shorter than the drain" "must exceed drain.preStopSleepSeconds + drain.shutdownGraceSeconds (25)" \
  "${template[@]}" --set terminationGracePeriodSeconds=25
refused "a grace period without the trace flush" "+ 5 s of trace flushing (tracing is on) (30)" \
  "${template[@]}" --set tracing.otlpEndpoint=http://otel:4318 --set terminationGracePeriodSeconds=30
refused "a grace period without the trace flush (env)" "+ 5 s of trace flushing (tracing is on) (30)" \
  "${template[@]}" --set env[0].name=OTEL_EXPORTER_OTLP_TRACES_ENDPOINT --set env[0].value=http://otel:4318 \
  --set terminationGracePeriodSeconds=30
refused "a loopback listen address" "non-loopback" "${template[@]}" --set config.listen=127.0.0.1:8080
refused "a ServiceMonitor without the admin port" "serviceMonitor.enabled needs config.admin_listen and service.metricsPort" \
  "${template[@]}" --set serviceMonitor.enabled=true
refused "a secret reference and its config key" "secrets.webhookSecret sets webhook_secret_file: remove config.webhook_secret_file" \
  "${template[@]}" --set secrets.webhookSecret.existingSecret=webhook --set config.webhook_secret_file=/run/webhook
refused "a PDB with maxUnavailable 0" "podDisruptionBudget.maxUnavailable must be above 0" \
  "${template[@]}" --set podDisruptionBudget.maxUnavailable=0
refused "a PDB with maxUnavailable 0%" "podDisruptionBudget.maxUnavailable must be above 0" \
  "${template[@]}" --set podDisruptionBudget.maxUnavailable=0%
refused "a PDB with minAvailable = replicaCount" "podDisruptionBudget.minAvailable (3) must be below the 3 pods (replicaCount)" \
  "${template[@]}" "${redis[@]}" --set replicaCount=3 --set podDisruptionBudget.minAvailable=3
refused "a PDB with minAvailable 100%" "podDisruptionBudget.minAvailable (100%) must be below" \
  "${template[@]}" --set podDisruptionBudget.minAvailable=100%
refused "a PDB with minAvailable = minReplicas" "podDisruptionBudget.minAvailable (2) must be below the 2 pods (autoscaling.minReplicas)" \
  "${template[@]}" "${redis[@]}" --set autoscaling.enabled=true --set podDisruptionBudget.minAvailable=2
refused "an HPA without a CPU request" "autoscaling.enabled needs resources.requests.cpu" \
  "${template[@]}" "${redis[@]}" --set autoscaling.enabled=true --set resources.requests.cpu=null
refused "an HPA on memory without a memory request" "autoscaling.targetMemoryUtilizationPercentage needs resources.requests.memory" \
  "${template[@]}" "${redis[@]}" --set autoscaling.enabled=true --set autoscaling.targetMemoryUtilizationPercentage=80 \
  --set resources.requests.memory=null
refused "an HPA with an extra container without requests" "autoscaling.enabled needs extraContainers api: resources.requests.cpu" \
  "${template[@]}" "${redis[@]}" --set autoscaling.enabled=true --set extraContainers[0].name=api \
  --set extraContainers[0].image=api:1
# The validator itself refuses an unknown field and an unknown kind.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\nbinaryDat: {}\n' >"$work/unknown-field.yaml"
printf 'apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: x}\n' >"$work/unknown-kind.yaml"
refused "an unknown field" 'unknown field "binaryDat"' "$VALIDATE" "$work/unknown-field.yaml"
refused "an unknown kind" 'unknown kind "Deploymnet"' "$VALIDATE" "$work/unknown-kind.yaml"

echo "-- chart and manifests valid"
