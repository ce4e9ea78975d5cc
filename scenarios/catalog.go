// Package scenarios is the catalog: one scenario per resilience claim,
// each passing with its protection on and breaching with it off. The
// scenario files are embedded in the binary, so an installed chaosrun runs
// them from any folder as catalog:NAME.
package scenarios

import (
	"embed"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/chaosrun/chaosrun/internal/suggest"
)

//go:embed *.yaml
var files embed.FS

// Prefix names catalog scenarios where a scenario file is expected:
// catalog:NAME is one, catalog: alone every one.
const Prefix = "catalog:"

// Entry is one catalog scenario.
type Entry struct {
	Name string
	// Claim is what the scenario proves, in one line.
	Claim string
	// Switch are the --set overrides that switch the protection off; the
	// scenario then breaches.
	Switch []string
}

// Ref is how the entry is named on a command line: catalog:NAME.
func (e Entry) Ref() string { return Prefix + e.Name }

// catalog is every scenario of the folder, in name order.
var catalog = []Entry{
	{"bank-deadlines", "expired work is not done downstream", []string{"bank.deadlines=off", "bank.deadline-propagation=off"}},
	{"bank-list-starvation", "long ListTransactions do not starve TransactCheck", []string{"bank.list-bulkhead=off"}},
	{"bank-outlier-host", "a resetting ledger replica is ejected and gets almost no traffic", []string{"bank.outlier=off"}},
	{"bank-outlier-pause", "a paused (hung) ledger replica is ejected within 5 s and gets < 5% of the traffic", []string{"bank.outlier=off"}},
	{"bank-overload", "CoDel + adaptive LIFO keeps goodput near capacity at 3x overload", []string{"ledger.queue=fifo"}},
	{"bank-quota", "a rogue caller over quota does not hurt the others", []string{"bank.quotas=off"}},
	{"bank-retry-storm", "smart clients (budget, no retry on back pressure) stop a retry storm", []string{"bank.retry-mode=naive"}},
	{"bank-shadow-vault", "a shadow-mode vault bulkhead reports the rejections it would make, as a share of the calls within 10% of an enforcing run's, and rejects none", []string{"bank.vault-bulkhead=hard"}},
	{"bank-slow-replica", "a slow-but-answering ledger replica is avoided within 5 s and gets < 5% of the calls", []string{"bank.balancer=rr", "bank.outlier-latency-factor=0"}},
	{"bank-slow-vault", "a slow vault leaves TransactCheck untouched; TransactCash fails fast", []string{"bank.bulkheads=off"}},
	{"bank-vault-down", "cash from the drawer keeps working while the vault is down", []string{"bank.drawer=off"}},
	{"cache-slow-redis", "a real Redis behind an edge: a cache timeout keeps the front fast", []string{"front.cache-timeout=0s"}},
	{"grpc-pushback-storm", "over gRPC, smart clients honour RESOURCE_EXHAUSTED with pushback and retry none of it", []string{"bank.retry-mode=naive"}},
	{"grpc-slow-vault", "over gRPC, one slow vault method behind a bulkhead leaves TransactCheck untouched", []string{"bank.bulkheads=off"}},
	{"grpc-unavailable-retries", "over gRPC, budgeted retries keep a burst of UNAVAILABLE on one method from becoming a retry storm", []string{"bank.retry-mode=naive"}},
	{"http-retry-storm", "smart clients stop a retry storm of HTTP 503s", []string{"bank.retry-mode=naive"}},
	{"http-slow-withdraw", "an HTTP-level slow API behind a bulkhead stays contained", []string{"bank.bulkheads=off"}},
	{"kv-hot-key-flood", "a bot flood on one key reaches storage as a trickle", []string{"kvdispatcher.hotkeys=off"}},
	{"kv-scan-quota", "a scan-heavy caller is charged in request units and throttled; point readers are not", []string{"kvdispatcher.ru=off"}},
	{"kv-slow-partition", "one slow partition fails only its own keys", []string{"kvdispatcher.shard-breakers=off"}},
	{"kv-tier-shedding", "when capacity drops, low tiers are shed first and the critical tier stays up", []string{"kvdispatcher.tiers=off"}},
}

// All is every catalog scenario, in name order.
func All() []Entry { return slices.Clone(catalog) }

// Lookup finds a catalog scenario by name; the error lists the names there are.
func Lookup(name string) (Entry, error) {
	for _, e := range catalog {
		if e.Name == name {
			return e, nil
		}
	}
	names := make([]string, len(catalog))
	for i, e := range catalog {
		names[i] = e.Name
	}
	if name == "" {
		return Entry{}, fmt.Errorf("no catalog scenario named (allowed: %s)", strings.Join(names, ", "))
	}
	hint := ""
	if near := suggest.Nearest(name, names); near != "" {
		hint = fmt.Sprintf("; did you mean %q?", near)
	}
	return Entry{}, fmt.Errorf("no catalog scenario %q%s (allowed: %s; `chaosrun catalog list` says what each proves)", name, hint, strings.Join(names, ", "))
}

// Read returns a catalog scenario's YAML.
func Read(name string) ([]byte, error) {
	if _, err := Lookup(name); err != nil {
		return nil, err
	}
	return files.ReadFile(name + ".yaml")
}

// IsRef reports whether s names catalog scenarios (catalog:NAME or catalog:).
func IsRef(s string) bool { return strings.HasPrefix(s, Prefix) }

// Expand turns a catalog reference into the references of the scenarios
// it names: every one for catalog:, else the one, checked.
func Expand(ref string) ([]string, error) {
	name, ok := strings.CutPrefix(ref, Prefix)
	if !ok {
		return nil, fmt.Errorf("%q is not a catalog reference (want %sNAME)", ref, Prefix)
	}
	if name == "" {
		refs := make([]string, len(catalog))
		for i, e := range catalog {
			refs[i] = e.Ref()
		}
		return refs, nil
	}
	e, err := Lookup(strings.TrimSuffix(name, ".yaml"))
	if err != nil {
		return nil, err
	}
	return []string{e.Ref()}, nil
}

// ReadRef returns the YAML of the scenario a catalog:NAME reference names.
func ReadRef(ref string) ([]byte, error) {
	refs, err := Expand(ref)
	if err != nil {
		return nil, err
	}
	if len(refs) != 1 {
		return nil, fmt.Errorf("%s names every catalog scenario; name one: %sNAME", ref, Prefix)
	}
	return Read(strings.TrimPrefix(refs[0], Prefix))
}

// ListWidth is the width WriteList fits the catalog in: a terminal's.
const ListWidth = 80

// WriteList writes the catalog to w within ListWidth columns: each
// scenario's name and claim (wrapped), then the --set flags that switch its
// protection off, and how to run and read its scenarios.
func WriteList(w io.Writer) error {
	nameWidth := 0
	for _, e := range catalog {
		nameWidth = max(nameWidth, len(e.Name))
	}
	indent := strings.Repeat(" ", nameWidth+2)
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %s\n", nameWidth, "NAME", "CLAIM, then the switch that turns its protection off")
	for _, e := range catalog {
		for i, line := range wrap(strings.Fields(e.Claim), ListWidth-len(indent)) {
			head := indent
			if i == 0 {
				head = fmt.Sprintf("%-*s  ", nameWidth, e.Name)
			}
			b.WriteString(head + line + "\n")
		}
		words := make([]string, len(e.Switch))
		for i, s := range e.Switch {
			words[i] = "--set " + s
		}
		for i, line := range wrap(words, ListWidth-len(indent)-7) {
			head := indent + "       "
			if i == 0 {
				head = indent + "  off: "
			}
			b.WriteString(head + line + "\n")
		}
	}
	b.WriteString("\nrun one:  chaosrun run catalog:NAME\nrun all:  chaosrun run catalog:\nread one: chaosrun catalog show NAME\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap joins words into lines of at most width columns; a word longer
// than width has a line of its own.
func wrap(words []string, width int) []string {
	var lines []string
	line := ""
	for _, word := range words {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}
