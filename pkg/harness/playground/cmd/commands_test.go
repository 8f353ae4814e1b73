package main

import (
	"path/filepath"
	"testing"
)

// A verb runs only with its own number of arguments; anything else is a
// usage error, and a verb that fails is an error, not a usage error.
func TestVerbsTakeTheirArguments(t *testing.T) {
	noPlayground := filepath.Join(t.TempDir(), "state.json")
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"vm"}, exitUsage},
		{[]string{"vm", "frobnicate"}, exitUsage},
		{[]string{"vm", "delete"}, exitUsage},
		{[]string{"vm", "list", "extra"}, exitUsage},
		{[]string{"vm", "help"}, exitOK},
		{[]string{"session", "end"}, exitUsage},
		{[]string{"session", "start", "x"}, exitUsage},
		{[]string{"vm", "list", "--state", noPlayground}, exitError},
		{[]string{"vm", "delete", "vm-1", "--state", noPlayground}, exitError},
		{[]string{"session", "end", "s-1", "--state", noPlayground}, exitError},
	} {
		run := map[string]func([]string) int{"vm": vm, "session": session}[c.args[0]]
		if got := run(c.args[1:]); got != c.want {
			t.Errorf("%q exited %d, want %d", c.args, got, c.want)
		}
	}
}
