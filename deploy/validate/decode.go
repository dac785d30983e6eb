package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// doc is one decoded document.
type doc struct {
	kind string // apiVersion/kind, e.g. apps/v1/Deployment
	name string
	meta *metav1.ObjectMeta
	obj  any
}

func (d *doc) String() string { return d.kind + " " + d.name }

// kinds are the types the manifests may use. A kind not listed is an
// error: a typo in apiVersion or kind must not pass unchecked.
var kinds = map[string]func() any{
	"v1/ConfigMap":                            func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                               func() any { return &corev1.Secret{} },
	"v1/Service":                              func() any { return &corev1.Service{} },
	"v1/ServiceAccount":                       func() any { return &corev1.ServiceAccount{} },
	"v1/Pod":                                  func() any { return &corev1.Pod{} },
	"apps/v1/Deployment":                      func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":                     func() any { return &appsv1.StatefulSet{} },
	"policy/v1/PodDisruptionBudget":           func() any { return &policyv1.PodDisruptionBudget{} },
	"autoscaling/v2/HorizontalPodAutoscaler":  func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"networking.k8s.io/v1/NetworkPolicy":      func() any { return &networkingv1.NetworkPolicy{} },
	"networking.k8s.io/v1/Ingress":            func() any { return &networkingv1.Ingress{} },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return &ServiceMonitor{} },
}

// decode decodes one document strictly, the way the API server's strict
// field validation does (sigs.k8s.io/json: case-sensitive, unknown and
// duplicate fields are errors); a document with nothing in it is nil.
func decode(raw []byte) (*doc, error) {
	j, err := yaml.YAMLToJSONStrict(raw) // duplicate YAML keys are errors
	if err != nil {
		return nil, err
	}
	if string(j) == "null" {
		return nil, nil
	}
	var head struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(j, &head); err != nil {
		return nil, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	key := head.APIVersion + "/" + head.Kind
	newObj, ok := kinds[key]
	if !ok {
		return nil, fmt.Errorf("unknown kind %q (apiVersion %q): the validator knows %v", head.Kind, head.APIVersion, known())
	}
	obj := newObj()
	strict, err := kjson.UnmarshalStrict(j, obj, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("%s %s: %w", key, head.Metadata.Name, errors.Join(strict...))
	}
	return &doc{kind: key, name: head.Metadata.Name, meta: objectMeta(obj), obj: obj}, nil
}

func objectMeta(obj any) *metav1.ObjectMeta {
	if o, ok := obj.(metav1.ObjectMetaAccessor); ok {
		return o.GetObjectMeta().(*metav1.ObjectMeta)
	}
	panic(fmt.Sprintf("%T has no ObjectMeta", obj))
}

func known() []string {
	var out []string
	for k := range kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ServiceMonitor is the Prometheus Operator's CRD (monitoring.coreos.com/v1),
// which k8s.io/api does not have. Rather than import the operator's module
// this types the fields the chart renders and the common ones besides;
// strict decoding then refuses any other field, which is stricter than the
// CRD (a field it has and this struct lacks fails here: add it).
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ServiceMonitorSpec `json:"spec"`
}

type ServiceMonitorSpec struct {
	JobLabel          string               `json:"jobLabel,omitempty"`
	TargetLabels      []string             `json:"targetLabels,omitempty"`
	PodTargetLabels   []string             `json:"podTargetLabels,omitempty"`
	Endpoints         []Endpoint           `json:"endpoints"`
	Selector          metav1.LabelSelector `json:"selector"`
	NamespaceSelector *NamespaceSelector   `json:"namespaceSelector,omitempty"`
	SampleLimit       *uint64              `json:"sampleLimit,omitempty"`
}

type NamespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}

type Endpoint struct {
	Port          string `json:"port,omitempty"`
	Path          string `json:"path,omitempty"`
	Scheme        string `json:"scheme,omitempty"`
	Interval      string `json:"interval,omitempty"`
	ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
	HonorLabels   bool   `json:"honorLabels,omitempty"`
	// Relabelings are Prometheus relabel configs, passed through untyped.
	Relabelings       []map[string]any `json:"relabelings,omitempty"`
	MetricRelabelings []map[string]any `json:"metricRelabelings,omitempty"`
}
