package config

import (
	"slices"
	"testing"
)

func TestCloseSpellingsClosestFirst(t *testing.T) {
	candidates := []string{"ubuntu", "ubuntu-22", "ubuntu_20", "debian", "Ubuntu-20"}
	for word, want := range map[string][]string{
		"ubunut":    {"ubuntu"},                                        // two edits
		"ubuntu-20": {"Ubuntu-20", "ubuntu_20", "ubuntu-22"},           // case and separator are free, then one edit
		"ubuntu":    {},                                                // itself is no guess; ubuntu-22 is three edits away
		"ubuntu-2":  {"Ubuntu-20", "ubuntu-22", "ubuntu_20", "ubuntu"}, // one edit each, then two
		"centos":    {},                                                // nothing close
	} {
		if got := CloseSpellings(word, candidates); !slices.Equal(got, want) {
			t.Errorf("CloseSpellings(%q) = %q, want %q", word, got, want)
		}
	}
}
