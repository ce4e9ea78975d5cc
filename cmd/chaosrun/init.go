package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/compose"
)

// newInitCmd writes a starter scenario for a Compose project or a URL.
func newInitCmd(st *State) *cobra.Command {
	var f compose.InitFlags
	cmd := &cobra.Command{
		Use:   "init (--compose FILE [--compose FILE...] [--profile NAME...] | --url URL) [--out DIR] [--force]",
		Short: "write a starter scenario for a Compose project or a service at a URL",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.Profiles = compose.Profiles(f.Profiles, st.Getenv)
			return f.Init(cmd.Context(), st.files(), st.Stdout)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.URL, "url", "", "instead of --compose, the URL of a service that runs already (http://HOST:PORT/PATH): load it, slow it, check it")
	fl.StringArrayVar(&f.Files, "compose", nil, "a Compose file to start from (required; repeatable: merged in order, as docker compose -f)")
	fl.StringArrayVar(&f.Profiles, "profile", nil, "a Compose profile to enable (repeatable; default COMPOSE_PROFILES)")
	fl.StringVar(&f.Out, "out", ".", "folder to write the scenario into")
	fl.BoolVar(&f.Force, "force", false, "overwrite a scenario file that exists")
	return cmd
}
