package k8s

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRun API group, version and kind of the k6-operator.
const (
	TestRunAPIVersion = "k6.io/v1alpha1"
	TestRunKind       = "TestRun"
)

// TestRun is the part of the k6-operator's TestRun (k6.io/v1alpha1) that
// the export writes; field names and JSON tags follow the operator's.
type TestRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TestRunSpec `json:"spec"`
}

// TestRunSpec is what the operator runs: the script, how many k6 runners
// share the load (each gets its execution segment) and their arguments.
type TestRunSpec struct {
	Script K6Script `json:"script"`
	// Parallelism is the number of k6 runners.
	Parallelism int32 `json:"parallelism"`
	// Separate puts every runner on its own node.
	Separate bool `json:"separate,omitempty"`
	// Arguments are passed to every `k6 run` (split on spaces).
	Arguments string `json:"arguments,omitempty"`
	// Runner configures the runner pods (and the initializer, which the
	// operator configures the same way when it is not given).
	Runner Pod `json:"runner,omitempty"`
}

// K6Script says where the script is.
type K6Script struct {
	ConfigMap *K6ConfigMap `json:"configMap,omitempty"`
}

// K6ConfigMap is a script stored as one key of a ConfigMap.
type K6ConfigMap struct {
	Name string `json:"name"`
	// File is the key (and file name) of the script.
	File string `json:"file,omitempty"`
}

// Pod configures the operator's pods.
type Pod struct {
	Image        string               `json:"image,omitempty"`
	Env          []corev1.EnvVar      `json:"env,omitempty"`
	Metadata     PodMetadata          `json:"metadata,omitempty"`
	Volumes      []corev1.Volume      `json:"volumes,omitempty"`
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
}

// PodMetadata is extra metadata for the operator's pods.
type PodMetadata struct {
	Labels map[string]string `json:"labels,omitempty"`
}
