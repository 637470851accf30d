package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newAnalyzeCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "analyze",
		Short: "(not built yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("analyze is not built yet")
		},
	}
}
