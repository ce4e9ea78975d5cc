package k8s

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Objects lists the manifests in the order kubectl should apply them: the
// namespace, what pods read, each Deployment with its Service, the load
// (the load Job or the TestRun), the fault Job.
func (m *Manifests) Objects() []any {
	out := []any{m.Namespace, m.Secret}
	for _, c := range m.ConfigMaps {
		out = append(out, c)
	}
	for _, d := range m.Deployments {
		out = append(out, d)
		for _, s := range m.Services {
			if s.Name == d.Name {
				out = append(out, s)
			}
		}
	}
	if m.JudgeJob != nil {
		out = append(out, m.JudgeService, m.JudgeJob)
	}
	if m.LoadJob != nil {
		out = append(out, m.LoadJob)
	}
	if m.TestRun != nil {
		out = append(out, m.TestRun)
	}
	if m.Job != nil {
		out = append(out, m.Job)
	}
	return out
}

// YAML writes the manifests as one multi-document YAML stream, header
// comment first.
func (m *Manifests) YAML(header string) ([]byte, error) {
	var b bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(header), "\n") {
		if line != "" {
			b.WriteString("# " + line + "\n")
		}
	}
	for _, obj := range m.Objects() {
		doc, err := marshal(obj)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(doc)
	}
	return b.Bytes(), nil
}

// marshal writes one object without the empty fields Go's zero values
// leave (creationTimestamp: null, status: {}, …).
func marshal(obj any) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("export k8s: encode %T: %w", obj, err)
	}
	var v map[string]any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	prune(v)
	return yaml.Marshal(v)
}

// prune drops null values, and empty maps under keys where they mean
// nothing; an empty map elsewhere (emptyDir: {}) is kept.
func prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			prune(x)
			if x == nil {
				delete(t, k)
				continue
			}
			if m, ok := x.(map[string]any); ok && len(m) == 0 {
				switch k {
				case "status", "strategy", "resources", "metadata", "spec":
					delete(t, k)
				}
			}
		}
	case []any:
		for _, x := range t {
			prune(x)
		}
	}
}

// Decode reads a multi-document YAML stream written by YAML back into
// typed objects, strictly: a field the type does not have is an error.
func Decode(data []byte) (*Manifests, error) {
	m := &Manifests{}
	for i, doc := range splitDocs(data) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		var err error
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 Namespace":
			m.Namespace = &corev1.Namespace{}
			err = yaml.UnmarshalStrict(doc, m.Namespace)
		case "v1 Secret":
			m.Secret = &corev1.Secret{}
			err = yaml.UnmarshalStrict(doc, m.Secret)
		case "v1 ConfigMap":
			err = decodeInto(doc, &m.ConfigMaps)
		case "v1 Service":
			if err = decodeInto(doc, &m.Services); err == nil && m.Services[len(m.Services)-1].Name == JudgeName {
				m.JudgeService, m.Services = m.Services[len(m.Services)-1], m.Services[:len(m.Services)-1]
			}
		case "apps/v1 Deployment":
			err = decodeInto(doc, &m.Deployments)
		case "batch/v1 Job":
			j := &batchv1.Job{}
			if err = yaml.UnmarshalStrict(doc, j); j.Name == LoadJobName {
				m.LoadJob = j
			} else if j.Name == JudgeName {
				m.JudgeJob = j
			} else {
				m.Job = j
			}
		case TestRunAPIVersion + " " + TestRunKind:
			m.TestRun = &TestRun{}
			err = yaml.UnmarshalStrict(doc, m.TestRun)
		default:
			err = fmt.Errorf("unexpected kind %q (apiVersion %q)", tm.Kind, tm.APIVersion)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i+1, tm.Kind, err)
		}
	}
	return m, nil
}

func decodeInto[T corev1.ConfigMap | corev1.Service | appsv1.Deployment](doc []byte, list *[]*T) error {
	v := new(T)
	if err := yaml.UnmarshalStrict(doc, v); err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}

// splitDocs splits a YAML stream on its "---" lines, dropping documents
// that hold only comments and blank lines.
func splitDocs(data []byte) [][]byte {
	var out [][]byte
	var cur bytes.Buffer
	flush := func() {
		for _, l := range strings.Split(cur.String(), "\n") {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				out = append(out, append([]byte(nil), cur.Bytes()...))
				break
			}
		}
		cur.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.TrimRight(line, "\r\n") == "---" {
			flush()
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return out
}
