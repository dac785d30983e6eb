package main

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// gatewayName is the container name the manifests give the gateway; the
// gateway-specific rules apply to containers of that name.
const gatewayName = "mcp-gateway"

// retryHint is the SSE retry field the gateway sends when it ends a stream
// at shutdown (gateway/streamlog.go retryMillis): clients come back that
// soon, so the replica must be out of the Service's endpoints by then.
const retryHint = time.Second

// defaultShutdownGrace is the gateway's shutdown_grace default.
const defaultShutdownGrace = 15 * time.Second

// traceFlush is how long the gateway may flush its last spans after
// shutdown_grace when tracing is on (cmd/mcp-gateway/run.go).
const traceFlush = 5 * time.Second

// set is the documents of one input (one helm template, one kustomize
// build), checked together.
type set struct {
	docs     []*doc
	gateways []*gatewayContainer
	errs     []error
	// backendPorts are, by workload, the ports of backends in the pod that
	// a gateway calls on loopback: no Service may expose them.
	backendPorts map[*doc][]int32
}

// gatewayContainer is what the gateway in one container is started with,
// for cmd/mcp-gateway's test that loads the configuration as the binary
// would.
type gatewayContainer struct {
	Source    string            `json:"source"`
	Workload  string            `json:"workload"`
	Container string            `json:"container"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`        // literal values
	EnvFrom   []string          `json:"envFrom"`    // variables set from Secrets or fields (valueFrom)
	Files     map[string]string `json:"files"`      // mounted ConfigMap files by path
	Mounts    []string          `json:"mountPaths"` // every mount path
}

// workload is a document with a pod template.
type workload struct {
	d        *doc
	tmpl     *corev1.PodTemplateSpec
	selector *metav1.LabelSelector
	replicas *int32
}

func (s *set) fail(d fmt.Stringer, format string, a ...any) {
	s.errs = append(s.errs, fmt.Errorf("%s: %s", d, fmt.Sprintf(format, a...)))
}

func (s *set) check() []error {
	seen := map[string]bool{}
	for _, d := range s.docs {
		if seen[d.String()] {
			s.fail(d, "defined twice")
		}
		seen[d.String()] = true
		s.checkMeta(d)
	}
	for _, w := range s.workloads() {
		s.checkWorkload(w)
	}
	for _, d := range s.docs {
		switch o := d.obj.(type) {
		case *corev1.Service:
			s.checkService(d, o)
		case *policyv1.PodDisruptionBudget:
			s.checkPDB(d, o)
		case *autoscalingv2.HorizontalPodAutoscaler:
			s.checkHPA(d, o)
		case *ServiceMonitor:
			s.checkServiceMonitor(d, o)
		}
	}
	return s.errs
}

func (s *set) checkMeta(d *doc) {
	if d.name == "" {
		s.fail(d, "metadata.name is empty")
		return
	}
	nameRule := validation.IsDNS1123Subdomain
	if d.kind == "v1/Service" {
		nameRule = validation.IsDNS1035Label
	}
	for _, m := range nameRule(d.name) {
		s.fail(d, "metadata.name: %s", m)
	}
	s.checkLabels(d, "metadata.labels", d.meta.Labels)
	for k := range d.meta.Annotations {
		for _, m := range validation.IsQualifiedName(k) {
			s.fail(d, "annotation %q: %s", k, m)
		}
	}
}

func (s *set) checkLabels(d *doc, at string, l map[string]string) {
	for k, v := range l {
		for _, m := range validation.IsQualifiedName(k) {
			s.fail(d, "%s key %q: %s", at, k, m)
		}
		for _, m := range validation.IsValidLabelValue(v) {
			s.fail(d, "%s %s=%q: %s", at, k, v, m)
		}
	}
}

func (s *set) workloads() []*workload {
	var out []*workload
	for _, d := range s.docs {
		switch o := d.obj.(type) {
		case *appsv1.Deployment:
			out = append(out, &workload{d: d, tmpl: &o.Spec.Template, selector: o.Spec.Selector, replicas: o.Spec.Replicas})
		case *appsv1.StatefulSet:
			out = append(out, &workload{d: d, tmpl: &o.Spec.Template, selector: o.Spec.Selector, replicas: o.Spec.Replicas})
		case *corev1.Pod:
			out = append(out, &workload{d: d, tmpl: &corev1.PodTemplateSpec{ObjectMeta: o.ObjectMeta, Spec: o.Spec}})
		}
	}
	return out
}

func (s *set) find(kind, name string) *doc {
	for _, d := range s.docs {
		if d.kind == kind && d.name == name {
			return d
		}
	}
	return nil
}

func (s *set) checkWorkload(w *workload) {
	d, spec := w.d, &w.tmpl.Spec
	s.checkLabels(d, "spec.template.metadata.labels", w.tmpl.Labels)
	if d.kind != "v1/Pod" {
		sel, err := metav1.LabelSelectorAsSelector(w.selector)
		switch {
		case w.selector == nil:
			s.fail(d, "spec.selector is missing")
		case err != nil:
			s.fail(d, "spec.selector: %v", err)
		case sel.Empty() || !sel.Matches(labels.Set(w.tmpl.Labels)):
			s.fail(d, "spec.selector %s does not select the template's labels %v", sel, w.tmpl.Labels)
		}
	}
	if len(spec.Containers) == 0 {
		s.fail(d, "no containers")
	}
	vols := map[string]*corev1.Volume{}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if vols[v.Name] != nil {
			s.fail(d, "volume %q defined twice", v.Name)
		}
		vols[v.Name] = v
		if cm := v.ConfigMap; cm != nil {
			c := s.find("v1/ConfigMap", cm.Name)
			switch {
			case c == nil && (cm.Optional == nil || !*cm.Optional):
				s.fail(d, "volume %q: no ConfigMap %q in the manifests", v.Name, cm.Name)
			case c != nil:
				for _, it := range cm.Items {
					if _, ok := c.obj.(*corev1.ConfigMap).Data[it.Key]; !ok {
						s.fail(d, "volume %q: ConfigMap %q has no key %q", v.Name, cm.Name, it.Key)
					}
				}
			}
		}
	}
	names := map[string]bool{}
	all := append(slices.Clone(spec.InitContainers), spec.Containers...)
	for i := range all {
		c := &all[i]
		if names[c.Name] {
			s.fail(d, "container %q defined twice", c.Name)
		}
		names[c.Name] = true
		s.checkContainer(w, c, vols)
	}
	// The gateway may also run as a native sidecar (an init container
	// that keeps running).
	for i := range all {
		if all[i].Name == gatewayName {
			s.checkGateway(w, &all[i], vols)
		}
	}
}

func (s *set) checkContainer(w *workload, c *corev1.Container, vols map[string]*corev1.Volume) {
	d := w.d
	at := fmt.Sprintf("container %q", c.Name)
	for _, m := range validation.IsDNS1123Label(c.Name) {
		s.fail(d, "%s: name: %s", at, m)
	}
	if c.Image == "" {
		s.fail(d, "%s: no image", at)
	}
	for _, p := range c.Ports {
		if p.Name != "" {
			for _, m := range validation.IsValidPortName(p.Name) {
				s.fail(d, "%s: port name %q: %s", at, p.Name, m)
			}
		}
		for _, m := range validation.IsValidPortNum(int(p.ContainerPort)) {
			s.fail(d, "%s: containerPort %d: %s", at, p.ContainerPort, m)
		}
	}
	for _, p := range []struct {
		what  string
		probe *corev1.Probe
	}{{"startupProbe", c.StartupProbe}, {"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}} {
		if p.probe != nil {
			s.checkHandlerPort(d, at+" "+p.what, c, p.probe.HTTPGet, p.probe.TCPSocket)
		}
	}
	if l := c.Lifecycle; l != nil {
		for _, h := range []struct {
			what    string
			handler *corev1.LifecycleHandler
		}{{"postStart", l.PostStart}, {"preStop", l.PreStop}} {
			if h.handler != nil {
				s.checkHandlerPort(d, at+" "+h.what, c, h.handler.HTTPGet, h.handler.TCPSocket)
			}
		}
	}
	paths := map[string]bool{}
	for _, m := range c.VolumeMounts {
		if vols[m.Name] == nil {
			s.fail(d, "%s: volumeMount %q names no volume of the pod", at, m.Name)
		}
		if !path.IsAbs(m.MountPath) {
			s.fail(d, "%s: mountPath %q is not absolute", at, m.MountPath)
		}
		if paths[m.MountPath] {
			s.fail(d, "%s: two volumes mounted at %s", at, m.MountPath)
		}
		paths[m.MountPath] = true
	}
	env := map[string]bool{}
	for _, e := range c.Env {
		if env[e.Name] {
			s.fail(d, "%s: env %s set twice (the last wins, silently)", at, e.Name)
		}
		env[e.Name] = true
	}
}

func (s *set) checkHandlerPort(d *doc, at string, c *corev1.Container, h *corev1.HTTPGetAction, t *corev1.TCPSocketAction) {
	var port intstr.IntOrString
	switch {
	case h != nil:
		port = h.Port
	case t != nil:
		port = t.Port
	default:
		return
	}
	if _, ok := containerPort(c, port); !ok {
		s.fail(d, "%s: port %s is not a port of the container", at, port.String())
	}
}

// containerPort resolves a named or numbered port of c; a numbered one
// must be declared too (the manifests declare every port they use).
func containerPort(c *corev1.Container, p intstr.IntOrString) (int32, bool) {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

// checkGateway applies what the gateway needs of its container: probes
// on the port that serves them, its files on mounted volumes, a drain
// that fits the grace period, and a locked-down security context.
func (s *set) checkGateway(w *workload, c *corev1.Container, vols map[string]*corev1.Volume) {
	d := w.d
	at := fmt.Sprintf("container %q", c.Name)
	g := &gatewayContainer{Workload: d.String(), Container: c.Name, Args: slices.Concat(c.Command[min(len(c.Command), 1):], c.Args),
		Env: map[string]string{}, Files: map[string]string{}}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			g.EnvFrom = append(g.EnvFrom, e.Name)
		} else {
			g.Env[e.Name] = e.Value
		}
	}
	for _, m := range c.VolumeMounts {
		g.Mounts = append(g.Mounts, m.MountPath)
		v := vols[m.Name]
		if v == nil || v.ConfigMap == nil {
			continue
		}
		cmDoc := s.find("v1/ConfigMap", v.ConfigMap.Name)
		if cmDoc == nil {
			continue
		}
		data := cmDoc.obj.(*corev1.ConfigMap).Data
		switch {
		case m.SubPath != "":
			g.Files[m.MountPath] = data[m.SubPath]
		case len(v.ConfigMap.Items) > 0:
			for _, it := range v.ConfigMap.Items {
				g.Files[path.Join(m.MountPath, it.Path)] = data[it.Key]
			}
		default:
			for k, body := range data {
				g.Files[path.Join(m.MountPath, k)] = body
			}
		}
	}
	mounted := func(p string) bool {
		return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return p == m.MountPath || strings.HasPrefix(p, strings.TrimSuffix(m.MountPath, "/")+"/")
		})
	}

	// The configuration: flags, then env, then the file (as the binary).
	cfgPath := g.Env["MCPGW_CONFIG"]
	for i, a := range g.Args {
		if a == "--config" && i+1 < len(g.Args) {
			cfgPath = g.Args[i+1]
		} else if v, ok := strings.CutPrefix(a, "--config="); ok {
			cfgPath = v
		}
	}
	file := map[string]any{}
	if cfgPath != "" {
		body, ok := g.Files[cfgPath]
		if !ok {
			s.fail(d, "%s: the configuration file %s is not a key of a mounted ConfigMap", at, cfgPath)
		} else if err := yaml.Unmarshal([]byte(body), &file); err != nil {
			s.fail(d, "%s: %s is not YAML: %v", at, cfgPath, err)
		}
	}
	setting := func(key, def string) string {
		for i, a := range g.Args {
			flagName := "--" + strings.ReplaceAll(key, "_", "-")
			if a == flagName && i+1 < len(g.Args) {
				return g.Args[i+1]
			}
			if v, ok := strings.CutPrefix(a, flagName+"="); ok {
				return v
			}
		}
		if v, ok := g.Env["MCPGW_"+strings.ToUpper(key)]; ok {
			return v
		}
		if v, ok := file[key]; ok && v != nil {
			return fmt.Sprint(v)
		}
		return def
	}

	// Secret files and other files must be on a mounted volume.
	for name, v := range g.Env {
		if strings.HasPrefix(name, "MCPGW_") && strings.HasSuffix(name, "_FILE") && v != "" && !mounted(v) {
			s.fail(d, "%s: %s=%s is on no mounted volume", at, name, v)
		}
	}
	walkFiles(file, "", func(key, p string) {
		if !path.IsAbs(p) {
			s.fail(d, "%s: %s: %s: a path in a manifest must be absolute", at, cfgPath, key)
		} else if !mounted(p) {
			s.fail(d, "%s: %s: %s=%s is on no mounted volume", at, cfgPath, key, p)
		}
	})

	// Probes: /healthz and /readyz are on admin_listen when it is set.
	listen, admin := setting("listen", "127.0.0.1:8080"), setting("admin_listen", "")
	probeAddr := listen
	if admin != "" {
		probeAddr = admin
	}
	for _, a := range []struct{ key, addr string }{{"listen", listen}, {"admin_listen", admin}} {
		if a.addr == "" {
			continue
		}
		host, _, err := net.SplitHostPort(a.addr)
		if err != nil {
			s.fail(d, "%s: %s %q: %v", at, a.key, a.addr, err)
			continue
		}
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			s.fail(d, "%s: %s %s is loopback: neither the kubelet's probes nor the Service reach it", at, a.key, a.addr)
		}
	}
	_, probePort, _ := net.SplitHostPort(probeAddr)
	probes := []struct {
		what, path string
		p          *corev1.Probe
		required   bool
	}{{"livenessProbe", "/healthz", c.LivenessProbe, true}, {"readinessProbe", "/readyz", c.ReadinessProbe, true}, {"startupProbe", "/healthz", c.StartupProbe, false}}
	for _, pr := range probes {
		if pr.p == nil {
			if pr.required {
				s.fail(d, "%s: no %s (the gateway serves %s)", at, pr.what, pr.path)
			}
			continue
		}
		h := pr.p.HTTPGet
		if h == nil {
			s.fail(d, "%s: %s must be an httpGet of %s", at, pr.what, pr.path)
			continue
		}
		if h.Path != pr.path {
			s.fail(d, "%s: %s gets %s, not %s", at, pr.what, h.Path, pr.path)
		}
		if n, ok := containerPort(c, h.Port); ok && strconv.Itoa(int(n)) != probePort {
			s.fail(d, "%s: %s on port %d, but the gateway serves %s on %s", at, pr.what, n, pr.path, probeAddr)
		}
	}

	// The drain: out of the endpoints before SIGTERM ends the streams,
	// then shutdown_grace for the calls in flight, within the grace period.
	grace := int64(30)
	if t := w.tmpl.Spec.TerminationGracePeriodSeconds; t != nil {
		grace = *t
	}
	sleep := preStopSleep(c)
	shutdown, err := time.ParseDuration(setting("shutdown_grace", defaultShutdownGrace.String()))
	if err != nil {
		s.fail(d, "%s: shutdown_grace: %v", at, err)
	}
	// Any OTEL_EXPORTER_OTLP_* variable counts as tracing on: more grace
	// than needed costs nothing, less kills the flush.
	var flush time.Duration
	if mode := setting("tracing", "auto"); mode == "otlp" || (mode != "off" && slices.ContainsFunc(slices.Concat(slices.Collect(maps.Keys(g.Env)), g.EnvFrom),
		func(n string) bool { return strings.HasPrefix(n, "OTEL_EXPORTER_OTLP_") })) {
		flush = traceFlush
	}
	switch {
	case sleep <= retryHint:
		s.fail(d, "%s: lifecycle.preStop must sleep longer than the %s SSE retry hint, so that the pod leaves the Service's endpoints before its streams end (got %s)", at, retryHint, sleep)
	case flush == 0 && time.Duration(grace)*time.Second <= sleep+shutdown:
		s.fail(d, "terminationGracePeriodSeconds %d must exceed the preStop sleep (%s) plus shutdown_grace (%s)", grace, sleep, shutdown)
	case flush > 0 && time.Duration(grace)*time.Second <= sleep+shutdown+flush:
		s.fail(d, "terminationGracePeriodSeconds %d must exceed the preStop sleep (%s) plus shutdown_grace (%s) plus the %s trace flush (tracing is on)", grace, sleep, shutdown, flush)
	}

	// A backend in the same pod (a loopback upstream or document) gets
	// SIGTERM with the gateway: it must outlive the gateway's drain, or the
	// calls in flight lose it.
	backends := []string{setting("openapi", ""), setting("upstream", "")}
	if apis, ok := file["apis"].([]any); ok {
		for _, a := range apis {
			if m, ok := a.(map[string]any); ok {
				backends = append(backends, fmt.Sprint(m["openapi"]), fmt.Sprint(m["upstream"]))
			}
		}
	}
	checked := map[string]bool{}
	for _, b := range backends {
		port, ok := loopbackPort(b)
		if !ok || checked[port] {
			continue
		}
		checked[port] = true
		n, _ := strconv.Atoi(port)
		i := slices.IndexFunc(w.tmpl.Spec.Containers, func(o corev1.Container) bool {
			_, declared := containerPort(&o, intstr.FromInt(n))
			return o.Name != c.Name && declared
		})
		if i < 0 {
			s.fail(d, "%s: %s is on loopback, but no other container of the pod declares port %s", at, b, port)
			continue
		}
		be := &w.tmpl.Spec.Containers[i]
		if s.backendPorts == nil {
			s.backendPorts = map[*doc][]int32{}
		}
		s.backendPorts[d] = append(s.backendPorts[d], int32(n))
		if beSleep := preStopSleep(be); beSleep < sleep+shutdown {
			s.fail(d, "container %q (the gateway's backend at %s) must sleep in preStop at least the gateway's drain, %s + %s, to serve the calls in flight (got %s)", be.Name, b, sleep, shutdown, beSleep)
		}
	}

	// Non-root, read-only root file system, no privilege escalation.
	psc, sc := w.tmpl.Spec.SecurityContext, c.SecurityContext
	nonRoot := (sc != nil && sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) ||
		(psc != nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot && (sc == nil || sc.RunAsNonRoot == nil))
	if !nonRoot {
		s.fail(d, "%s: runAsNonRoot is not true", at)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		s.fail(d, "%s: readOnlyRootFilesystem is not true", at)
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		s.fail(d, "%s: allowPrivilegeEscalation is not false", at)
	}
	s.gateways = append(s.gateways, g)
}

// preStopSleep is how long c's preStop hook sleeps, 0 without one.
func preStopSleep(c *corev1.Container) time.Duration {
	if l := c.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil {
		return time.Duration(l.PreStop.Sleep.Seconds) * time.Second
	}
	return 0
}

// walkFiles calls fn for every string value of a key named file or ending
// in _file, at any depth (resources[0].file, apis[1].backend_bearer_token_file).
func walkFiles(v any, at string, fn func(key, path string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			key := k
			if at != "" {
				key = at + "." + k
			}
			if p, ok := sub.(string); ok && (k == "file" || strings.HasSuffix(k, "_file")) && p != "" {
				fn(key, p)
				continue
			}
			walkFiles(sub, key, fn)
		}
	case []any:
		for i, sub := range x {
			walkFiles(sub, fmt.Sprintf("%s[%d]", at, i), fn)
		}
	}
}

// selected are the workloads whose pods match sel.
func (s *set) selected(sel labels.Selector) []*workload {
	var out []*workload
	for _, w := range s.workloads() {
		if !sel.Empty() && sel.Matches(labels.Set(w.tmpl.Labels)) {
			out = append(out, w)
		}
	}
	return out
}

func (s *set) checkService(d *doc, svc *corev1.Service) {
	if len(svc.Spec.Selector) == 0 {
		s.fail(d, "no selector")
		return
	}
	pods := s.selected(labels.SelectorFromSet(svc.Spec.Selector))
	if len(pods) == 0 {
		s.fail(d, "selector %v selects no pod of the manifests", svc.Spec.Selector)
		return
	}
	for _, p := range svc.Spec.Ports {
		target := p.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(p.Port)
		}
		found := false
		for _, w := range pods {
			for i := range w.tmpl.Spec.Containers {
				if n, ok := containerPort(&w.tmpl.Spec.Containers[i], target); ok {
					found = true
					if slices.Contains(s.backendPorts[w.d], n) {
						s.fail(d, "port %q exposes port %d of %s, the backend its gateway calls on loopback: callers would get past the gateway's authentication, scopes and quotas", p.Name, n, w.d)
					}
				}
			}
		}
		if !found {
			s.fail(d, "port %q: targetPort %s is a port of no selected container", p.Name, target.String())
		}
	}
}

func (s *set) checkPDB(d *doc, pdb *policyv1.PodDisruptionBudget) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || len(s.selected(sel)) == 0 {
		s.fail(d, "selector selects no pod of the manifests")
	}
	if (pdb.Spec.MinAvailable == nil) == (pdb.Spec.MaxUnavailable == nil) {
		s.fail(d, "set exactly one of minAvailable and maxUnavailable")
	}
	// A budget that allows no eviction hangs every node drain.
	if m := pdb.Spec.MaxUnavailable; m != nil && (m.String() == "0" || m.String() == "0%") {
		s.fail(d, "maxUnavailable %s allows no eviction: node drains would hang", m.String())
	}
	if m := pdb.Spec.MinAvailable; m != nil {
		if m.String() == "100%" {
			s.fail(d, "minAvailable 100%% allows no eviction: node drains would hang")
		}
		for _, w := range s.selected(sel) {
			if m.Type == intstr.Int && w.replicas != nil && m.IntVal >= *w.replicas {
				s.fail(d, "minAvailable %d is not below the %d replicas of %s: no eviction is allowed, node drains would hang", m.IntVal, *w.replicas, w.d)
			}
		}
	}
	// Every gateway fails /readyz while Redis is down; a budget counting
	// only ready pods would then allow no eviction at all.
	gateway := slices.ContainsFunc(s.selected(sel), func(w *workload) bool {
		return slices.ContainsFunc(slices.Concat(w.tmpl.Spec.InitContainers, w.tmpl.Spec.Containers), func(c corev1.Container) bool { return c.Name == gatewayName })
	})
	if gateway && (pdb.Spec.UnhealthyPodEvictionPolicy == nil || *pdb.Spec.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow) {
		s.fail(d, "a budget of gateway pods needs unhealthyPodEvictionPolicy: AlwaysAllow: with Redis down no gateway is ready, and drains would hang")
	}
}

func (s *set) checkHPA(d *doc, hpa *autoscalingv2.HorizontalPodAutoscaler) {
	ref := hpa.Spec.ScaleTargetRef
	target := s.find(ref.APIVersion+"/"+ref.Kind, ref.Name)
	if target == nil {
		s.fail(d, "scaleTargetRef %s/%s %s is not in the manifests", ref.APIVersion, ref.Kind, ref.Name)
		return
	}
	if hpa.Spec.MinReplicas != nil && *hpa.Spec.MinReplicas > hpa.Spec.MaxReplicas {
		s.fail(d, "minReplicas %d > maxReplicas %d", *hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas)
	}
	for _, w := range s.workloads() {
		if w.d != target {
			continue
		}
		if w.replicas != nil {
			s.fail(target, "sets replicas while %s scales it (every apply would reset the count)", d)
		}
		for _, m := range hpa.Spec.Metrics {
			if m.Resource == nil || m.Resource.Target.Type != autoscalingv2.UtilizationMetricType {
				continue
			}
			for _, c := range w.tmpl.Spec.Containers {
				if _, ok := c.Resources.Requests[m.Resource.Name]; !ok {
					s.fail(d, "%s utilization needs a %s request on every container; %q has none", m.Resource.Name, m.Resource.Name, c.Name)
				}
			}
		}
	}
}

func (s *set) checkServiceMonitor(d *doc, sm *ServiceMonitor) {
	sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil {
		s.fail(d, "selector: %v", err)
		return
	}
	var ports []string
	for _, o := range s.docs {
		if svc, ok := o.obj.(*corev1.Service); ok && !sel.Empty() && sel.Matches(labels.Set(svc.Labels)) {
			for _, p := range svc.Spec.Ports {
				ports = append(ports, p.Name)
			}
		}
	}
	if len(ports) == 0 {
		s.fail(d, "selector %s selects no Service of the manifests", sel)
	}
	if len(sm.Spec.Endpoints) == 0 {
		s.fail(d, "no endpoints")
	}
	for _, e := range sm.Spec.Endpoints {
		if !slices.Contains(ports, e.Port) {
			s.fail(d, "endpoint port %q is a port of no selected Service (they have %v)", e.Port, ports)
		}
	}
}

// loopbackPort is the port of an http(s) URL on a loopback host.
func loopbackPort(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", false
	}
	if p := u.Port(); p != "" {
		return p, true
	}
	if u.Scheme == "https" {
		return "443", true
	}
	return "80", true
}
