package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newScenarioChildCmd is the hidden command that "ctxleak run" re-executes
// to run one scenario in a process of its own.
func newScenarioChildCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:    "__scenario",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("not built yet")
		},
	}
}
