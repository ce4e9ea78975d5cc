package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/scenarios"
)

// newCatalogCmd lists and prints the catalog's scenarios, which the binary
// carries: `run`, `validate` and `gameday` take them as catalog:NAME.
func newCatalogCmd(st *State) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "the built-in scenarios: one resilience claim each (run them as catalog:NAME)",
		Long: `The catalog's scenarios are built into chaosrun: each proves one claim, passing
with its protection on and breaching with it off. Run one from any folder with
` + "`chaosrun run catalog:NAME`" + `, every one with ` + "`chaosrun run catalog:`" + `; validate,
gameday, export k8s and fault apply take the same names.`,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "list the catalog: name, claim, and the --set that switches the protection off",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { scenarios.WriteList(st.Stdout) }, //nolint:errcheck // as fmt.Println
	}
	show := &cobra.Command{
		Use:               "show NAME",
		Short:             "print a catalog scenario's YAML (a starting point for your own)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: catalogNames,
		RunE: func(_ *cobra.Command, args []string) error {
			b, err := scenarios.ReadRef(scenarios.Prefix + strings.TrimPrefix(args[0], scenarios.Prefix))
			if err != nil {
				return exitcode.Fail(exitcode.Usage, err)
			}
			_, err = st.Stdout.Write(b)
			return err
		},
	}
	return group(st, cmd, list, show)
}

// catalogNames completes catalog scenario names.
func catalogNames(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, e := range scenarios.All() {
		out = append(out, cobra.CompletionWithDesc(e.Name, e.Claim))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
