package scenario

import (
	"slices"
	"strings"
	"testing"
)

func TestEdgesAndStartOrder(t *testing.T) {
	tests := []struct {
		file  string
		edges []string
		order []string
	}{
		{"testdata/good/bank.yaml", []string{"bank->ledger", "bank->vault"}, []string{"ledger", "vault", "bank"}},
		// dispatcher comes first in the file but depends on store.
		{"testdata/good/kv-replicas.yaml", []string{"dispatcher->store.0", "dispatcher->store.1", "dispatcher->store.2"}, []string{"store", "dispatcher"}},
		{"testdata/good/anchors.yaml", []string{"b->a.0", "b->a.1"}, []string{"a", "b"}},
		{"testdata/good/no-faults.yaml", nil, []string{"ledger"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := Load(tt.file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range s.Edges() {
				got = append(got, e.Proxy)
				if !strings.HasPrefix(e.Proxy, e.From+"->"+e.To) {
					t.Errorf("edge %+v: proxy name does not match from/to", e)
				}
			}
			if !slices.Equal(got, tt.edges) {
				t.Errorf("Edges = %v, want %v", got, tt.edges)
			}
			if got := s.StartOrder(); !slices.Equal(got, tt.order) {
				t.Errorf("StartOrder = %v, want %v", got, tt.order)
			}
		})
	}
}

func TestStartOrderDiamond(t *testing.T) {
	s := &Scenario{
		Services: map[string]*Service{
			"top":   {Run: "x", DependsOn: []string{"left", "right"}},
			"left":  {Run: "x", DependsOn: []string{"base"}},
			"right": {Run: "x", DependsOn: []string{"base"}},
			"base":  {Run: "x"},
		},
		Order: []string{"top", "left", "right", "base"},
	}
	want := []string{"base", "left", "right", "top"}
	if got := s.StartOrder(); !slices.Equal(got, want) {
		t.Errorf("StartOrder = %v, want %v", got, want)
	}
}

func TestProxiesFor(t *testing.T) {
	s, err := Load("testdata/good/kv-replicas.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		edge    string
		want    []string
		wantErr string
	}{
		{"dispatcher->store", []string{"dispatcher->store.0", "dispatcher->store.1", "dispatcher->store.2"}, ""},
		{"dispatcher->store.2", []string{"dispatcher->store.2"}, ""},
		{"dispatcher->store.3", nil, "replica 3 out of range"},
		{"store->dispatcher", nil, "allowed: dispatcher->store"},
		{"nonsense", nil, "not of the form"},
	}
	for _, tt := range tests {
		t.Run(tt.edge, func(t *testing.T) {
			got, err := s.ProxiesFor(tt.edge)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("ProxiesFor = %v, %v; want %v", got, err, tt.want)
			}
		})
	}

	// With one replica the proxy has no index, and .0 names it too.
	b, err := Load("testdata/good/bank.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, edge := range []string{"bank->vault", "bank->vault.0"} {
		if got, err := b.ProxiesFor(edge); err != nil || !slices.Equal(got, []string{"bank->vault"}) {
			t.Errorf("ProxiesFor(%s) = %v, %v", edge, got, err)
		}
	}
}

// TestProxiesForEveryPort: an imported service that declares several
// ports is reached through a proxy per port on every edge to it, so a
// fault on the edge acts on all of them.
func TestProxiesForEveryPort(t *testing.T) {
	s := &Scenario{Services: map[string]*Service{
		"app": {Image: "app", DependsOn: []string{"mq"}, Imported: &Imported{}},
		"mq":  {Image: "rabbitmq", Replicas: 2, Imported: &Imported{Ports: []int{5672, 15672}}},
	}}
	got, err := s.ProxiesFor("app->mq")
	want := []string{"app->mq.0", "app->mq.1", "app->mq.0:15672", "app->mq.1:15672"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("ProxiesFor(app->mq) = %v, %v; want %v", got, err, want)
	}
	got, err = s.ProxiesFor("app->mq.1")
	if want := []string{"app->mq.1", "app->mq.1:15672"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ProxiesFor(app->mq.1) = %v, %v; want %v", got, err, want)
	}
}
