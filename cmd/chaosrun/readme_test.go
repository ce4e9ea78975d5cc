package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// readmeMainJob and readmeTestCommand are the README's quick start, which
// .ci/run and bench's first run also rely on.
const (
	readmeMainJob     = "go run ./cmd/chaosrun run scenarios/bank-slow-vault.yaml"
	readmeTestCommand = "make test"
)

// A placeholder is a word in capitals (PROJECT-chaos.yaml, FILE, URL): the
// reader puts in their own.
var readmePlaceholder = regexp.MustCompile(`\b[A-Z][A-Z0-9_]+\b`)

// readmeCommand is one command line of a README sh block.
type readmeCommand struct {
	line int      // 1-based, in README.md
	text string   // as written, comment included
	args []string // chaosrun's arguments, after `chaosrun` or `go run ./cmd/chaosrun`
}

// TestReadmeCommands keeps every chaosrun command line in README.md's sh
// blocks runnable: each parses as the CLI parses it (the command exists, its
// flags exist and take their values, its arguments are as many as it
// takes), and each `run` or `validate` of a repository file or catalog:NAME
// passes `validate` with the same --set (and other shared) flags, so a
// recipe that validation refuses fails here. Scenario arguments that are
// neither must be placeholders in capitals.
func TestReadmeCommands(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmds, all := readmeCommands(t, filepath.Join(repo, "README.md"))
	for _, want := range []string{readmeMainJob, readmeTestCommand} {
		if !all[want] {
			t.Errorf("README.md's sh blocks have no line %q (the quick start)", want)
		}
	}
	if len(cmds) < 5 {
		t.Fatalf("README.md: only %d chaosrun command lines found in sh blocks; is the extraction broken?", len(cmds))
	}
	for _, c := range cmds {
		t.Run(fmt.Sprintf("README.md:%d", c.line), func(t *testing.T) {
			checkReadmeCommand(t, repo, c)
		})
	}
}

func checkReadmeCommand(t *testing.T, repo string, c readmeCommand) {
	st, _, _ := testState(t)
	st.Dir = repo
	root := newRoot(st)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	cmd, rest, err := root.Find(c.args)
	if err != nil {
		t.Fatalf("%s\n  %v", c.text, err)
	}
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("%s\n  %s: %v", c.text, cmd.CommandPath(), err)
	}
	pos := cmd.Flags().Args()
	for _, check := range []func() error{
		func() error { return cmd.ValidateArgs(pos) }, // an unknown subcommand too
		cmd.ValidateRequiredFlags,
		cmd.ValidateFlagGroups,
	} {
		if err := check(); err != nil {
			t.Fatalf("%s\n  %s: %v", c.text, cmd.CommandPath(), err)
		}
	}
	switch cmd.CommandPath() {
	case "chaosrun run", "chaosrun validate":
	default:
		return
	}
	var files []string
	for _, a := range pos {
		_, statErr := os.Stat(filepath.Join(repo, a))
		switch {
		case strings.HasPrefix(a, "catalog:"), statErr == nil:
			files = append(files, a)
		case readmePlaceholder.MatchString(a):
			t.Logf("%s: %q is a placeholder: parsed, not validated", c.text, a)
		default:
			t.Fatalf("%s\n  %q is neither a repository file, catalog:NAME nor a placeholder in capitals", c.text, a)
		}
	}
	if len(files) == 0 {
		return
	}
	// validate with what run shares with it (--set, --allow-target, --profile).
	vst, so, se := testState(t)
	vst.Dir = repo
	validate, _, err := newRoot(vst).Find([]string{"validate"})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"validate"}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if validate.Flags().Lookup(f.Name) == nil {
			return
		}
		vals := []string{f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			vals = sv.GetSlice()
		}
		for _, v := range vals {
			args = append(args, "--"+f.Name, v)
		}
	})
	args = append(append(args, "--"), files...)
	if code := Execute(context.Background(), vst, args); code != exitOK {
		t.Fatalf("%s\n  chaosrun %s: exit %d, want %d\nstdout: %s\nstderr: %s", c.text, strings.Join(args, " "), code, exitOK, so, se)
	}
	t.Logf("chaosrun %s: %s", strings.Join(args, " "), strings.TrimSpace(so.String()))
}

// readmeCommands returns the chaosrun command lines of path's sh blocks, and
// every line of those blocks (comments and surrounding space trimmed).
func readmeCommands(t *testing.T, path string) ([]readmeCommand, map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		cmds        []readmeCommand
		all         = map[string]bool{}
		inSh, inAny bool
		pending     string
		start       int
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if fence := strings.TrimSpace(line); strings.HasPrefix(fence, "```") {
			if !inAny {
				lang := strings.TrimSpace(strings.TrimPrefix(fence, "```"))
				inAny, inSh = true, lang == "sh" || lang == "bash" || lang == "shell"
			} else {
				inAny, inSh = false, false
			}
			continue
		}
		if !inSh {
			continue
		}
		if pending == "" {
			start = n
		}
		if strings.HasSuffix(line, `\`) {
			pending += strings.TrimSuffix(line, `\`) + " "
			continue
		}
		text := strings.TrimSpace(pending + line)
		pending = ""
		words, err := shellWords(text)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, start, err)
		}
		all[strings.Join(words, " ")] = true
		var args []string
		switch {
		case len(words) >= 1 && words[0] == "chaosrun":
			args = words[1:]
		case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/chaosrun":
			args = words[3:]
		default:
			continue
		}
		cmds = append(cmds, readmeCommand{line: start, text: text, args: args})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds, all
}

// shellWords splits one shell command line into words as sh would, without
// expansions: quotes and backslashes, a comment from an unquoted #, and the
// command ending at an unquoted redirection, pipe, ; or &.
func shellWords(line string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // a word is open (possibly empty, as '')
		quote rune
	)
	flush := func() {
		if in {
			words = append(words, cur.String())
		}
		cur.Reset()
		in = false
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[i+1]):
				i++
				cur.WriteRune(rs[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			in = true
		case r == ' ' || r == '\t':
			flush()
		case r == '#' && !in:
			flush()
			return words, nil
		case strings.ContainsRune("<>|;&", r):
			if in && strings.Trim(cur.String(), "0123456789") == "" {
				in = false // a file descriptor, as in 2>
			}
			flush()
			return words, nil
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, line)
	}
	flush()
	return words, nil
}

func TestReadmeShellWords(t *testing.T) {
	cases := []struct {
		line string
		want []string
	}{
		{"chaosrun run x.yaml   # a comment", []string{"chaosrun", "run", "x.yaml"}},
		{"chaosrun catalog show a > my.yaml", []string{"chaosrun", "catalog", "show", "a"}},
		{"chaosrun fault add --edge 'bank->vault' --attr \"latency=2 000\"", []string{"chaosrun", "fault", "add", "--edge", "bank->vault", "--attr", "latency=2 000"}},
		{"chaosrun run a#b 2>/dev/null", []string{"chaosrun", "run", "a#b"}},
		{"chaosrun run '' x | head", []string{"chaosrun", "run", "", "x"}},
		{`chaosrun run a\ b`, []string{"chaosrun", "run", "a b"}},
	}
	for _, tc := range cases {
		got, err := shellWords(tc.line)
		if err != nil || strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
			t.Errorf("shellWords(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
	if _, err := shellWords("chaosrun run 'x"); err == nil {
		t.Error("an unterminated quote is not an error")
	}
}
