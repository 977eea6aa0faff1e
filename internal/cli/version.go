package cli

import (
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
)

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			b := model.Build()
			return a.Out().JSON(map[string]any{"ok": true, "version": b.String(), "build": b})
		},
	}
}
