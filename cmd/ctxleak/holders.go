package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newHoldersCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "holders",
		Short: "(not built yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("holders is not built yet")
		},
	}
}
