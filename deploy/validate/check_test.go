package main

import (
	"errors"
	"strings"
	"testing"
)

// good is a set every check passes: a gateway Deployment with its
// ConfigMap, Service, PDB, HPA and ServiceMonitor.
const good = `apiVersion: v1
kind: ConfigMap
metadata: {name: gw}
data:
  gateway.yaml: |
    openapi: https://api.example.com/openapi.json
    listen: 0.0.0.0:8080
    admin_listen: 0.0.0.0:9090
    webhook_secret_file: /var/run/secrets/webhook/secret
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: gw}
spec:
  selector: {matchLabels: {app: gw}}
  template:
    metadata: {labels: {app: gw}}
    spec:
      terminationGracePeriodSeconds: 30
      securityContext: {runAsNonRoot: true}
      containers:
        - name: mcp-gateway
          image: mcp-gateway:1
          args: ["--config", "/etc/mcp-gateway/gateway.yaml"]
          env:
            - {name: MCPGW_BACKEND_BEARER_TOKEN_FILE, value: /var/run/secrets/backend/token}
          ports:
            - {name: http, containerPort: 8080}
            - {name: admin, containerPort: 9090}
          livenessProbe: {httpGet: {path: /healthz, port: admin}}
          readinessProbe: {httpGet: {path: /readyz, port: admin}}
          lifecycle: {preStop: {sleep: {seconds: 10}}}
          resources: {requests: {cpu: 100m}}
          securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false}
          volumeMounts:
            - {name: config, mountPath: /etc/mcp-gateway}
            - {name: backend, mountPath: /var/run/secrets/backend}
            - {name: webhook, mountPath: /var/run/secrets/webhook}
      volumes:
        - {name: config, configMap: {name: gw}}
        - {name: backend, secret: {secretName: backend}}
        - {name: webhook, secret: {secretName: webhook}}
---
apiVersion: v1
kind: Service
metadata: {name: gw, labels: {app: gw}}
spec:
  selector: {app: gw}
  ports:
    - {name: http, port: 80, targetPort: http}
    - {name: admin, port: 9090, targetPort: admin}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: gw}
spec:
  maxUnavailable: 1
  unhealthyPodEvictionPolicy: AlwaysAllow
  selector: {matchLabels: {app: gw}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: gw}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: gw}
  minReplicas: 2
  maxReplicas: 4
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: gw}
spec:
  selector: {matchLabels: {app: gw}}
  endpoints: [{port: admin, path: /metrics}]
`

func validate(data string) error {
	_, errs := load([]byte(data))
	return errors.Join(errs...)
}

func TestGoodSetPasses(t *testing.T) {
	if err := validate(good); err != nil {
		t.Fatal(err)
	}
}

// Each mutation of the good set must fail with its reason: a check that
// cannot fail checks nothing.
func TestEachCheckFails(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"unknown field", "readinessProbe:", "readinesProbe:", `unknown field "spec.template.spec.containers[0].readinesProbe"`},
		{"wrong case", "terminationGracePeriodSeconds:", "TerminationGracePeriodSeconds:", "unknown field"},
		{"duplicate key", "terminationGracePeriodSeconds: 30", "terminationGracePeriodSeconds: 30\n      terminationGracePeriodSeconds: 31", "already set"},
		{"unknown kind", "kind: PodDisruptionBudget", "kind: PodDisruptionBudgets", `unknown kind "PodDisruptionBudgets"`},
		{"wrong type", "maxReplicas: 4", "maxReplicas: four", "maxReplicas"},
		{"bad quantity", "cpu: 100m", "cpu: lots", "quantities must match"},
		{"selector", "selector: {matchLabels: {app: gw}}\n  template", "selector: {matchLabels: {app: other}}\n  template", "does not select the template's labels"},
		{"probe port", "livenessProbe: {httpGet: {path: /healthz, port: admin}}", "livenessProbe: {httpGet: {path: /healthz, port: metrics}}", "port metrics is not a port of the container"},
		{"probe on the MCP port while admin_listen is set", "readinessProbe: {httpGet: {path: /readyz, port: admin}}", "readinessProbe: {httpGet: {path: /readyz, port: http}}", "but the gateway serves /readyz on 0.0.0.0:9090"},
		{"probe path", "path: /readyz", "path: /ready", "gets /ready, not /readyz"},
		{"no readiness probe", "          readinessProbe: {httpGet: {path: /readyz, port: admin}}\n", "", "no readinessProbe"},
		{"loopback listen", "listen: 0.0.0.0:8080", "listen: 127.0.0.1:8080", "is loopback"},
		{"no drain", "lifecycle: {preStop: {sleep: {seconds: 10}}}", "lifecycle: {}", "must sleep longer than the 1s SSE retry hint"},
		{"grace period", "terminationGracePeriodSeconds: 30", "terminationGracePeriodSeconds: 25", "must exceed the preStop sleep (10s) plus shutdown_grace (15s)"},
		{"grace period with tracing", "            - {name: MCPGW_BACKEND", "            - {name: OTEL_EXPORTER_OTLP_ENDPOINT, value: \"http://otel:4318\"}\n            - {name: MCPGW_BACKEND", "plus shutdown_grace (15s) plus the 5s trace flush"},
		{"grace period with tracing from a Secret", "            - {name: MCPGW_BACKEND", "            - {name: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, valueFrom: {secretKeyRef: {name: otel, key: url}}}\n            - {name: MCPGW_BACKEND", "plus the 5s trace flush"},
		{"grace period with env", "            - {name: MCPGW_BACKEND", "            - {name: MCPGW_SHUTDOWN_GRACE, value: 25s}\n            - {name: MCPGW_BACKEND", "plus shutdown_grace (25s)"},
		{"secret file not mounted", "/var/run/secrets/backend/token}", "/var/run/secrets/other/token}", "MCPGW_BACKEND_BEARER_TOKEN_FILE=/var/run/secrets/other/token is on no mounted volume"},
		{"config file path not mounted", "webhook_secret_file: /var/run/secrets/webhook/secret", "webhook_secret_file: /run/webhook", "webhook_secret_file=/run/webhook is on no mounted volume"},
		{"config not on a ConfigMap", `"/etc/mcp-gateway/gateway.yaml"]`, `"/etc/gw.yaml"]`, "the configuration file /etc/gw.yaml is not a key of a mounted ConfigMap"},
		{"mount without volume", "- {name: webhook, mountPath", "- {name: webhooks, mountPath", `volumeMount "webhooks" names no volume`},
		{"missing ConfigMap", "configMap: {name: gw}", "configMap: {name: gw2}", `no ConfigMap "gw2"`},
		{"writable root", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", "readOnlyRootFilesystem is not true"},
		{"root", "securityContext: {runAsNonRoot: true}", "securityContext: {}", "runAsNonRoot is not true"},
		{"service selector", "selector: {app: gw}", "selector: {app: other}", "selects no pod"},
		{"service target port", "targetPort: admin}", "targetPort: metrics}", "targetPort metrics is a port of no selected container"},
		{"pdb selector", "selector: {matchLabels: {app: gw}}\n---\napiVersion: autoscaling", "selector: {matchLabels: {app: x}}\n---\napiVersion: autoscaling", "PodDisruptionBudget gw: selector selects no pod"},
		{"pdb blocking evictions", "maxUnavailable: 1", "maxUnavailable: 0", "maxUnavailable 0 allows no eviction"},
		{"pdb blocking evictions in percent", "maxUnavailable: 1", "maxUnavailable: 0%", "maxUnavailable 0% allows no eviction"},
		{"pdb minAvailable 100%", "maxUnavailable: 1", "minAvailable: 100%", "minAvailable 100% allows no eviction"},
		{"pdb counting only ready gateways", "  unhealthyPodEvictionPolicy: AlwaysAllow\n", "", "needs unhealthyPodEvictionPolicy: AlwaysAllow"},
		{"hpa target", "kind: Deployment, name: gw}", "kind: Deployment, name: gw2}", "scaleTargetRef apps/v1/Deployment gw2 is not in the manifests"},
		{"hpa and replicas", "spec:\n  selector: {matchLabels: {app: gw}}\n  template", "spec:\n  replicas: 3\n  selector: {matchLabels: {app: gw}}\n  template", "sets replicas while"},
		{"hpa without requests", "resources: {requests: {cpu: 100m}}", "resources: {}", "cpu utilization needs a cpu request"},
		{"servicemonitor port", "endpoints: [{port: admin, path: /metrics}]", "endpoints: [{port: metrics, path: /metrics}]", `endpoint port "metrics" is a port of no selected Service`},
		{"servicemonitor field", "endpoints: [{port: admin, path: /metrics}]", "endpoints: [{port: admin, paths: /metrics}]", "unknown field"},
		{"backend beside the gateway without a drain", "openapi: https://api.example.com/openapi.json",
			"openapi: http://127.0.0.1:3000/openapi.json", "no other container of the pod declares port 3000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("the good set has no %q", tc.old)
			}
			err := validate(strings.Replace(good, tc.old, tc.new, 1))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}

// Tracing adds its flush to the drain, unless tracing is off.
func TestTracingGraceFits(t *testing.T) {
	otel := "            - {name: OTEL_EXPORTER_OTLP_ENDPOINT, value: \"http://otel:4318\"}\n            - {name: MCPGW_BACKEND"
	set := strings.Replace(good, "            - {name: MCPGW_BACKEND", otel, 1)
	if err := validate(strings.Replace(set, "terminationGracePeriodSeconds: 30", "terminationGracePeriodSeconds: 31", 1)); err != nil {
		t.Fatal(err)
	}
	if err := validate(strings.Replace(set, "listen: 0.0.0.0:8080", "listen: 0.0.0.0:8080\n    tracing: \"off\"", 1)); err != nil {
		t.Fatal(err)
	}
	err := validate(strings.Replace(good, "listen: 0.0.0.0:8080", "listen: 0.0.0.0:8080\n    tracing: otlp", 1))
	if err == nil || !strings.Contains(err.Error(), "plus the 5s trace flush") {
		t.Fatalf("tracing: otlp without an endpoint variable: got %v", err)
	}
}

// minAvailable must leave a replica to evict.
func TestPDBMinAvailableBelowReplicas(t *testing.T) {
	set := strings.Replace(good, "spec:\n  selector: {matchLabels: {app: gw}}\n  template", "spec:\n  replicas: 2\n  selector: {matchLabels: {app: gw}}\n  template", 1)
	// Without the HPA, which refuses replicas.
	set = set[:strings.Index(set, "---\napiVersion: autoscaling/v2")] + set[strings.Index(set, "---\napiVersion: monitoring"):]
	if err := validate(strings.Replace(set, "maxUnavailable: 1", "minAvailable: 1", 1)); err != nil {
		t.Fatal(err)
	}
	err := validate(strings.Replace(set, "maxUnavailable: 1", "minAvailable: 2", 1))
	if err == nil || !strings.Contains(err.Error(), "minAvailable 2 is not below the 2 replicas") {
		t.Fatalf("got %v", err)
	}
}

func TestBackendInThePodMustOutliveTheDrain(t *testing.T) {
	set := strings.Replace(good, "openapi: https://api.example.com/openapi.json", "openapi: http://127.0.0.1:3000/openapi.json", 1)
	backend := "      containers:\n        - name: api\n          image: api:1\n          ports: [{containerPort: 3000}]\n          resources: {requests: {cpu: 50m}}\n"
	set = strings.Replace(set, "      containers:\n", backend, 1)
	err := validate(set)
	if err == nil || !strings.Contains(err.Error(), `container "api" (the gateway's backend at http://127.0.0.1:3000/openapi.json) must sleep in preStop at least the gateway's drain, 10s + 15s`) {
		t.Fatalf("got %v", err)
	}
	set = strings.Replace(set, "ports: [{containerPort: 3000}]\n", "ports: [{containerPort: 3000}]\n          lifecycle: {preStop: {sleep: {seconds: 25}}}\n", 1)
	if err := validate(set); err != nil {
		t.Fatal(err)
	}
	// The Service must not expose the backend beside the gateway.
	set = strings.Replace(set, "    - {name: admin, port: 9090, targetPort: admin}\n", "    - {name: admin, port: 9090, targetPort: admin}\n    - {name: api, port: 3000}\n", 1)
	err = validate(set)
	if err == nil || !strings.Contains(err.Error(), `port "api" exposes port 3000 of apps/v1/Deployment gw, the backend its gateway calls on loopback`) {
		t.Fatalf("got %v", err)
	}
}
