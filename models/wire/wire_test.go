package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// hist is a real histogram of three values, as the output encodes it.
const hist = "HISTFAAAACl42pJpmSzMwMDAzMDAwAilGaBshmuTlzDYf4AIbK5gAgQAAP//YgYFuA=="

// lines are messages and their lines, byte for byte: the format as the
// extension and the harness have written it since version 1.
var lines = []struct {
	name string
	msg  any
	line string
}{
	{"hello from k6", Hello{Type: TypeHello, Version: Version, K6: "v1.8.1", Extension: "v0.1.0"},
		`{"type":"hello","version":1,"k6":"v1.8.1","extension":"v0.1.0"}`},
	{"hello of a shard with a token", Hello{Type: TypeHello, Version: Version, Extension: "chaosrun-native v0.1.0", Shard: "1/4", Token: "t0k"},
		`{"type":"hello","version":1,"extension":"chaosrun-native v0.1.0","shard":"1/4","token":"t0k"}`},
	{"welcome", Answer{Type: TypeWelcome}, `{"type":"welcome"}`},
	{"refused", Answer{Type: TypeRefused, Error: "wrong token in its hello"}, `{"type":"refused","error":"wrong token in its hello"}`},
	{"window of every kind", Window{Type: TypeWindow, Start: "2026-01-02T03:04:05Z", Series: []Series{
		{Metric: "http_req_duration", Kind: Trend, Tags: map[string]string{"status": "200", "name": "get"}, Count: 1, Sum: 100, Min: 100, Max: 100, Hist: hist},
		{Metric: "http_req_failed", Kind: Rate, Tags: map[string]string{"name": "get"}, Count: 4, NonZero: 1},
		{Metric: "http_reqs", Kind: Counter, Tags: map[string]string{}, Count: 3, Sum: 3},
		{Metric: "vus", Kind: Gauge, Count: 2, Min: 7, Max: 10, Last: 7},
	}}, `{"type":"window","start":"2026-01-02T03:04:05Z","series":[` +
		`{"metric":"http_req_duration","kind":"trend","tags":{"name":"get","status":"200"},"count":1,"sum":100,"min":100,"max":100,"hist":"` + hist + `"},` +
		`{"metric":"http_req_failed","kind":"rate","tags":{"name":"get"},"count":4,"nonzero":1},` +
		`{"metric":"http_reqs","kind":"counter","count":3,"sum":3},` +
		`{"metric":"vus","kind":"gauge","count":2,"min":7,"max":10,"last":7}]}`},
	{"series with only zeros", Window{Type: TypeWindow, Start: "2026-01-02T03:04:05.5Z", Series: []Series{{Metric: "m", Kind: Counter}}},
		`{"type":"window","start":"2026-01-02T03:04:05.5Z","series":[{"metric":"m","kind":"counter","count":0}]}`},
	{"empty window", Window{Type: TypeWindow, Start: "2026-01-02T03:04:05Z", Series: []Series{}},
		`{"type":"window","start":"2026-01-02T03:04:05Z","series":[]}`},
	{"end", End{Type: TypeEnd, Dropped: 7}, `{"type":"end","dropped":7}`},
	{"end without drops", End{Type: TypeEnd}, `{"type":"end","dropped":0}`},
}

// TestLines: each message encodes to its line, and the line decodes to the
// message and encodes again to the same bytes.
func TestLines(t *testing.T) {
	for _, tt := range lines {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Line(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.line+"\n" {
				t.Fatalf("line:\n%s\nwant\n%s", got, tt.line)
			}
			back := reflect.New(reflect.TypeOf(tt.msg))
			if err := json.Unmarshal(got, back.Interface()); err != nil {
				t.Fatal(err)
			}
			again, err := Line(back.Elem().Interface())
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != string(got) {
				t.Fatalf("round trip:\n%s\nwant\n%s", again, got)
			}
			if w, ok := tt.msg.(Window); ok {
				// Empty tag maps are left out, so they come back nil.
				for i := range w.Series {
					if len(w.Series[i].Tags) == 0 {
						w.Series[i].Tags = nil
					}
				}
				if !reflect.DeepEqual(back.Elem().Interface(), w) {
					t.Fatalf("decoded %+v\nwant %+v", back.Elem().Interface(), w)
				}
			}
		})
	}
}

// TestEnvelope: a reader that does not know a line's type yet gets each
// message's fields from the Envelope, and never the token.
func TestEnvelope(t *testing.T) {
	for _, tt := range lines {
		t.Run(tt.name, func(t *testing.T) {
			var e Envelope
			if err := json.Unmarshal([]byte(tt.line), &e); err != nil {
				t.Fatal(err)
			}
			switch m := tt.msg.(type) {
			case Hello:
				if e.Type != TypeHello || e.Version != m.Version || e.K6 != m.K6 || e.Extension != m.Extension || e.Shard != m.Shard {
					t.Errorf("envelope %+v of %+v", e, m)
				}
			case Window:
				if e.Type != TypeWindow || e.Start != m.Start || len(e.Series) != len(m.Series) {
					t.Errorf("envelope %+v of %+v", e, m)
				}
			case End:
				if e.Type != TypeEnd || e.Dropped != m.Dropped {
					t.Errorf("envelope %+v of %+v", e, m)
				}
			}
		})
	}
}

// TestEnvelopeFields: the Envelope has every field of Hello (but the
// token), Window and End, under the same JSON names and Go types.
func TestEnvelopeFields(t *testing.T) {
	env := map[string]reflect.Type{}
	et := reflect.TypeFor[Envelope]()
	for i := range et.NumField() {
		env[jsonName(et.Field(i))] = et.Field(i).Type
	}
	for _, mt := range []reflect.Type{reflect.TypeFor[Hello](), reflect.TypeFor[Window](), reflect.TypeFor[End]()} {
		for i := range mt.NumField() {
			f := mt.Field(i)
			if f.Name == "Token" {
				continue
			}
			if got, ok := env[jsonName(f)]; !ok || got != f.Type {
				t.Errorf("%s.%s (%q, %s): the envelope has %v", mt.Name(), f.Name, jsonName(f), f.Type, got)
			}
		}
	}
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

func TestStart(t *testing.T) {
	for _, tt := range []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02T03:04:05Z"},
		{time.Date(2026, 1, 2, 4, 4, 5, 500_000_000, time.FixedZone("CET", 3600)), "2026-01-02T03:04:05.5Z"},
	} {
		s := FormatStart(tt.t)
		if s != tt.want {
			t.Errorf("FormatStart(%s) = %s, want %s", tt.t, s, tt.want)
		}
		back, err := ParseStart(s)
		if err != nil || !back.Equal(tt.t) || back.Location() != time.UTC {
			t.Errorf("ParseStart(%s) = %s, %v; want %s in UTC", s, back, err, tt.t)
		}
	}
	if _, err := ParseStart("yesterday"); err == nil {
		t.Error("ParseStart(yesterday): want an error")
	}
}
