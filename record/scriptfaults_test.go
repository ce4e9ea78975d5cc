package record

import (
	"reflect"
	"testing"
	"time"
)

func TestScriptFaultEvents(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(proxy, toxic, action string) Series {
		return Series{Metric: scriptFaultMetric, Kind: "counter", Count: 1, Tags: map[string]string{"proxy": proxy, "toxic": toxic, "action": action}}
	}
	ws := []Window{
		{Start: t0, Series: []Series{ev("api", "", "create_proxy"), {Metric: "http_reqs", Count: 9}}},
		{Start: t0.Add(time.Second), Series: []Series{ev("api", "slow", "add_toxic")}},
		{Start: t0.Add(2 * time.Second), Series: []Series{ev("api", "slow", "update_toxic"), ev("api", "", "disable")}},
		{Start: t0.Add(3 * time.Second), Series: []Series{ev("api", "slow", "remove_toxic"), ev("api", "", "enable"), ev("db", "x", "add_toxic")}},
	}
	type got struct {
		Fault  string
		Action FaultAction
		At     int
	}
	var g []got
	evs, err := ScriptFaultEvents(&Run{Windows: ws})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		g = append(g, got{e.Fault, e.Action, int(e.Actual.Sub(t0) / time.Second)})
		if e.Kind != "script" || e.Target == "" {
			t.Errorf("event %+v: want kind script and the proxy as target", e)
		}
	}
	want := []got{
		{"slow@api", Applied, 1},
		{"proxy_down@api", Applied, 2},
		{"x@db", Applied, 3},
		{"proxy_down@api", Reverted, 3},
		{"slow@api", Reverted, 3},
	}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("events:\n got %v\nwant %v", g, want)
	}
}

func TestMergeFaultEvents(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(name string, s int) FaultEvent {
		return FaultEvent{Fault: name, Actual: t0.Add(time.Duration(s) * time.Second)}
	}
	got := MergeFaultEvents([]FaultEvent{at("a", 1), at("a", 5)}, []FaultEvent{at("b", 0), at("b", 3)})
	var names []string
	for _, e := range got {
		names = append(names, e.Fault)
	}
	if want := []string{"b", "a", "b", "a"}; !reflect.DeepEqual(names, want) {
		t.Errorf("merged order %v, want %v", names, want)
	}
}
