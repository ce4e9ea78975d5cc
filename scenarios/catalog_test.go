package scenarios

import (
	"bytes"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestCatalogCoversTheFolder: every embedded scenario has an entry and
// every entry a file, in name order, named as the file says.
func TestCatalogCoversTheFolder(t *testing.T) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range All() {
		got = append(got, e.Name+".yaml")
	}
	if !slices.Equal(got, names) {
		t.Fatalf("catalog entries %v\nscenario files   %v", got, names)
	}
	for _, e := range All() {
		b, err := Read(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		var head struct{ Name, Description string }
		if err := yaml.Unmarshal(b, &head); err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		if head.Name != e.Name {
			t.Errorf("%s.yaml is named %q inside", e.Name, head.Name)
		}
		if e.Claim == "" || len(e.Switch) == 0 {
			t.Errorf("%s: a claim and a switch are required", e.Name)
		}
		// The description says how to switch the protection off.
		for _, s := range e.Switch {
			key, _, _ := strings.Cut(s, "=")
			if !strings.Contains(head.Description, "--set "+key+"=") {
				t.Errorf("%s: description does not name the switch --set %s", e.Name, s)
			}
		}
	}
}

func TestExpand(t *testing.T) {
	all, err := Expand("catalog:")
	if err != nil || len(all) != len(catalog) || all[0] != "catalog:bank-deadlines" {
		t.Fatalf("Expand(catalog:) = %v, %v", all, err)
	}
	for _, tc := range []struct {
		ref, want, wantErr string
	}{
		{"catalog:bank-slow-vault", "catalog:bank-slow-vault", ""},
		{"catalog:bank-slow-vault.yaml", "catalog:bank-slow-vault", ""},
		{"catalog:bank-slow", "", `no catalog scenario "bank-slow" (allowed: bank-deadlines, `},
		{"catalog:../go.mod", "", `no catalog scenario "../go.mod"`},
		{"scenarios/x.yaml", "", "not a catalog reference"},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			got, err := Expand(tc.ref)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Expand(%q) = %v, %v; want error %q", tc.ref, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != 1 || got[0] != tc.want {
				t.Fatalf("Expand(%q) = %v, %v; want [%s]", tc.ref, got, err, tc.want)
			}
		})
	}
}

func TestReadRef(t *testing.T) {
	b, err := ReadRef("catalog:bank-slow-vault")
	if err != nil || !strings.HasPrefix(string(b), "version: 1\nname: bank-slow-vault\n") {
		t.Fatalf("ReadRef = %.40q, %v", b, err)
	}
	if _, err := ReadRef("catalog:"); err == nil || !strings.Contains(err.Error(), "name one") {
		t.Errorf("ReadRef(catalog:) = %v; want an error asking for one name", err)
	}
	if _, err := Read("nope"); err == nil {
		t.Error("Read(nope): want an error")
	}
	if !IsRef("catalog:x") || IsRef("x.yaml") || IsRef("./catalog:x") {
		t.Error("IsRef: wrong answer")
	}
}

// TestWriteList: a header, each scenario with its claim and switch, how to
// run them, and no line wider than a terminal.
func TestWriteList(t *testing.T) {
	var b bytes.Buffer
	if err := WriteList(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "NAME ") || !strings.Contains(out, "chaosrun run catalog:NAME") {
		t.Errorf("list:\n%s", out)
	}
	for i, line := range strings.Split(out, "\n") {
		if len(line) > ListWidth {
			t.Errorf("line %d is %d columns, want at most %d: %q", i+1, len(line), ListWidth, line)
		}
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, e := range All() {
		if !strings.Contains(flat, e.Name+" "+e.Claim) || !strings.Contains(flat, "--set "+strings.Join(e.Switch, " --set ")) {
			t.Errorf("list lacks %s, its claim or its switch %v", e.Name, e.Switch)
		}
	}
}

// TestWrap: words are kept whole and in order; a line breaks before the
// word that would pass the width (a switch's "--set a=b" is one word).
func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"a bb ccc", 4, []string{"a bb", "ccc"}},
		{"a bb ccc", 8, []string{"a bb ccc"}},
		{"averyverylongword b", 5, []string{"averyverylongword", "b"}},
		{"", 5, []string{""}},
	} {
		if got := wrap(strings.Fields(tc.in), tc.width); !slices.Equal(got, tc.want) {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}
