{{- define "mcp-gateway.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "mcp-gateway.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "mcp-gateway.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "mcp-gateway.labels" -}}
{{ include "mcp-gateway.selector" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "mcp-gateway.selector" -}}
app.kubernetes.io/name: {{ include "mcp-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "mcp-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "mcp-gateway.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- /*
The secrets the gateway reads from files: value name under .Values.secrets,
the setting's YAML key (config may not set it too), the environment
variable, and whether it is a file (mounted) or a value (secretKeyRef:
settings without a *_file form).
*/ -}}
{{- define "mcp-gateway.secretSettings" -}}
backendBearerToken: {key: backend_bearer_token_file, env: MCPGW_BACKEND_BEARER_TOKEN_FILE, file: true, dir: backend-bearer-token}
backendOAuthClientSecret: {key: backend_oauth_client_secret_file, env: MCPGW_BACKEND_OAUTH_CLIENT_SECRET_FILE, file: true, dir: backend-oauth-client-secret}
backendApiKeys: {key: backend_api_keys, env: MCPGW_BACKEND_API_KEYS, file: false}
backendHeaders: {key: backend_headers, env: MCPGW_BACKEND_HEADERS, file: false}
authHS256Secret: {key: auth_hs256_secret_file, env: MCPGW_AUTH_HS256_SECRET_FILE, file: true, dir: auth-hs256-secret}
webhookSecret: {key: webhook_secret_file, env: MCPGW_WEBHOOK_SECRET_FILE, file: true, dir: webhook-secret}
stateKey: {key: state_key_file, env: MCPGW_STATE_KEY_FILE, file: true, dir: state-key}
{{- end -}}

{{- /* The address's port: the part after the last colon. */ -}}
{{- define "mcp-gateway.port" -}}
{{- splitList ":" . | last -}}
{{- end -}}

{{- /* Refusals that no single template owns. */ -}}
{{- define "mcp-gateway.checks" -}}
{{- $v := .Values -}}
{{- $redis := or $v.redis.url $v.redis.existingUrlSecret $v.config.redis_url -}}
{{- if and (gt (int $v.replicaCount) 1) (not $redis) (not $v.autoscaling.enabled) -}}
{{- fail "replicaCount > 1 needs redis.url: replicas share sessions through Redis" -}}
{{- end -}}
{{- if and $v.autoscaling.enabled (not $redis) -}}
{{- fail "autoscaling.enabled needs redis.url: replicas share sessions through Redis" -}}
{{- end -}}
{{- if and $v.redis.url $v.redis.existingUrlSecret -}}
{{- fail "set redis.url or redis.existingUrlSecret, not both" -}}
{{- end -}}
{{- if and $v.config.redis_url (or $v.redis.url $v.redis.existingUrlSecret) -}}
{{- fail "set redis.url (or redis.existingUrlSecret), not config.redis_url too" -}}
{{- end -}}
{{- if and $v.redis.existingSecret (or $v.config.redis_password $v.config.redis_password_file) -}}
{{- fail "redis.existingSecret sets redis_password_file: remove config.redis_password and config.redis_password_file" -}}
{{- end -}}
{{- if and $v.redis.tls.existingSecret $v.redis.url (not (hasPrefix "rediss://" $v.redis.url)) -}}
{{- fail "redis.tls.existingSecret needs a rediss:// redis.url: the gateway refuses TLS files with a plain redis:// URL" -}}
{{- end -}}
{{- if ne (empty $v.redis.tls.certKey) (empty $v.redis.tls.keyKey) -}}
{{- fail "redis.tls.certKey and redis.tls.keyKey go together (a client certificate and its key)" -}}
{{- end -}}
{{- if hasKey $v.config "shutdown_grace" -}}
{{- fail "set drain.shutdownGraceSeconds, not config.shutdown_grace: the chart sizes terminationGracePeriodSeconds from it" -}}
{{- end -}}
{{- /* With tracing on, the gateway flushes its last spans for up to 5 s
after shutdown_grace (cmd/mcp-gateway/run.go) before it exits. Any
OTEL_EXPORTER_OTLP_* variable counts: more grace than needed costs nothing. */ -}}
{{- $tracing := and (ne (toString $v.config.tracing) "off") (or $v.tracing.otlpEndpoint (eq (toString $v.config.tracing) "otlp")) -}}
{{- range $v.env -}}
{{- if and (hasPrefix "OTEL_EXPORTER_OTLP_" (toString .name)) (ne (toString $v.config.tracing) "off") -}}
{{- $tracing = true -}}
{{- end -}}
{{- end -}}
{{- $drain := add $v.drain.preStopSleepSeconds $v.drain.shutdownGraceSeconds | int -}}
{{- $flush := "" -}}
{{- if $tracing -}}
{{- $drain = add $drain 5 | int -}}
{{- $flush = " + 5 s of trace flushing (tracing is on)" -}}
{{- end -}}
{{- if le (int $v.terminationGracePeriodSeconds) $drain -}}
{{- fail (printf "terminationGracePeriodSeconds (%d) must exceed drain.preStopSleepSeconds + drain.shutdownGraceSeconds%s (%d): the kubelet kills the pod at the end of the grace period, in-flight calls or not" (int $v.terminationGracePeriodSeconds) $flush $drain) -}}
{{- end -}}
{{- with $v.podDisruptionBudget -}}
{{- if .enabled -}}
{{- /* The pods a voluntary disruption starts from: with an HPA, at least minReplicas. */ -}}
{{- $pods := ternary $v.autoscaling.minReplicas $v.replicaCount $v.autoscaling.enabled | int -}}
{{- $min := toString .minAvailable -}}
{{- if ne $min "" -}}
{{- if or (eq $min "100%") (and (not (hasSuffix "%" $min)) (ge (int $min) $pods)) -}}
{{- fail (printf "podDisruptionBudget.minAvailable (%s) must be below the %d pods (%s): else no pod may ever be evicted and node drains hang" $min $pods (ternary "autoscaling.minReplicas" "replicaCount" $v.autoscaling.enabled)) -}}
{{- end -}}
{{- else if has (toString .maxUnavailable) (list "0" "0%") -}}
{{- fail "podDisruptionBudget.maxUnavailable must be above 0: with 0 no pod may ever be evicted and node drains hang (set podDisruptionBudget.enabled: false for no budget)" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $v.autoscaling.enabled -}}
{{- /* Utilization is a percentage of the request, of every container of
the pod; an HPA without metrics scales on 80% CPU. */ -}}
{{- $cpu := or $v.autoscaling.targetCPUUtilizationPercentage (not $v.autoscaling.targetMemoryUtilizationPercentage) -}}
{{- $containers := prepend ($v.extraContainers | default list) (dict "name" "mcp-gateway" "resources" $v.resources) -}}
{{- range $containers -}}
{{- $req := (.resources | default dict).requests | default dict -}}
{{- $at := ternary "resources.requests" (printf "extraContainers %s: resources.requests" (toString .name)) (eq (toString .name) "mcp-gateway") -}}
{{- if and $cpu (not $req.cpu) -}}
{{- fail (printf "autoscaling.enabled needs %s.cpu: the HPA's CPU utilization is a percentage of the request" $at) -}}
{{- end -}}
{{- if and $v.autoscaling.targetMemoryUtilizationPercentage (not $req.memory) -}}
{{- fail (printf "autoscaling.targetMemoryUtilizationPercentage needs %s.memory: the HPA's memory utilization is a percentage of the request" $at) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $listen := $v.config.listen | default "" -}}
{{- if or (not $listen) (hasPrefix "127." $listen) (hasPrefix "localhost:" $listen) (hasPrefix "[::1]" $listen) -}}
{{- fail "config.listen must be a non-loopback address such as 0.0.0.0:8080: the Service and the kubelet's probes reach the pod's IP" -}}
{{- end -}}
{{- if and $v.serviceMonitor.enabled (or (not $v.config.admin_listen) (not $v.service.metricsPort)) -}}
{{- fail "serviceMonitor.enabled needs config.admin_listen and service.metricsPort: /metrics is scraped through the Service's admin port" -}}
{{- end -}}
{{- $settings := include "mcp-gateway.secretSettings" . | fromYaml -}}
{{- range $name, $ref := $v.secrets -}}
{{- $s := index $settings $name -}}
{{- if and $ref.existingSecret (hasKey $v.config $s.key) -}}
{{- fail (printf "secrets.%s sets %s: remove config.%s" $name $s.key $s.key) -}}
{{- end -}}
{{- end -}}
{{- end -}}
