package main

import (
	"encoding/json"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/scenarios"
	"github.com/spf13/cobra"
)

// scenarioChildCmd is the name of the hidden subcommand.
const scenarioChildCmd = "__scenario"

// newScenarioChildCmd is the hidden command that "ctxleak run" re-executes
// to run one scenario in a process of its own. It writes the scenario's
// Result as one JSON document to stdout.
func newScenarioChildCmd(a *app) *cobra.Command {
	var (
		payload bytesize.Size
		tasks   int
		keep    string
		dumps   string
	)
	cmd := &cobra.Command{
		Use:    scenarioChildCmd + " NAME",
		Short:  "Run one scenario in this process and print its result as JSON (used by 'ctxleak run')",
		Hidden: true,
		Args:   rangeArgs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, ok := scenarios.Lookup(args[0])
			if !ok {
				return usageErrorf("unknown scenario %q", args[0])
			}
			opts := scenarios.Options{PayloadBytes: int64(payload), Tasks: tasks, KeepDir: keep, DumpDir: dumps}
			if err := opts.Check(); err != nil {
				return usageErrorf("%v", err)
			}
			res, err := scenarios.Run(s, opts)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(a.stdout)
			return enc.Encode(res)
		},
	}
	cmd.Flags().Var(bytesize.NewFlag(&payload, scenarios.DefaultPayloadBytes), "payload", "payload size")
	cmd.Flags().IntVar(&tasks, "tasks", scenarios.DefaultTasks, "background tasks or requests")
	cmd.Flags().StringVar(&keep, "keep", "", "existing directory to write the heap profiles to")
	cmd.Flags().StringVar(&dumps, "dumps", "", "existing directory to write a heap dump to at each phase where a payload is alive")
	return cmd
}
