package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/lang"
)

// defineFlag adds -D NAME=VALUE (repeatable) to cmd.
func defineFlag(cmd *cobra.Command, defines *[]string) {
	cmd.Flags().StringArrayVarP(defines, "define", "D", nil,
		"NAME=VALUE: give constant NAME the value VALUE (an integer literal, true or false) in place of its declaration (repeatable)")
}

// frontEnd turns -D flags into the front end's configuration. A flag that
// is not NAME=VALUE, a name given twice or a value that is not a literal
// is a usage error (exit 2).
func frontEnd(defines []string) (lang.Config, error) {
	consts, err := lang.ParseOverrides(defines)
	if err != nil {
		return lang.Config{}, cli.Errorf(exitTool, "-D %w", err)
	}
	return lang.Config{Constants: consts}, nil
}

// reportFrontEnd reports err, of a check or compile, as naamc does: the
// source's own errors (an override's value included, at its declaration)
// are printed with file:line:col and rejected is true (exit 1 is the
// caller's to give); an override naming no constant is returned as a
// usage error (exit 2) naming it. Both are zero for any other error.
func reportFrontEnd(cmd *cobra.Command, fset *lang.FileSet, err error) (rejected bool, usage error) {
	var oe *lang.OverrideError
	if errors.As(err, &oe) {
		return false, cli.Errorf(exitTool, "-D %s: %s in %s", oe.Name, oe.Msg, oe.File)
	}
	var list lang.ErrorList
	var one *lang.Error
	if errors.As(err, &list) || errors.As(err, &one) {
		lang.Print(cmd.ErrOrStderr(), fset, err)
		return true, nil
	}
	return false, nil
}
