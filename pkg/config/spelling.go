package config

import (
	"sort"
	"strings"
)

// maxSpellingEdits is how many edits apart a word and what it was meant to
// be may be: a dropped, doubled or swapped letter, or two.
const maxSpellingEdits = 2

// UnknownKeys lists keys that look like typos of known ones, with the likely intent.
func UnknownKeys(settings map[string]string) map[string]string {
	known := make([]string, 0, len(knownKeys))
	for k := range knownKeys {
		known = append(known, k)
	}
	out := map[string]string{}
	for k := range settings {
		if knownKeys[k] {
			continue
		}
		if guesses := CloseSpellings(k, known); len(guesses) > 0 {
			out[k] = guesses[0]
		}
	}
	return out
}

// CloseSpellings are the candidates word may be a misspelling of: the same
// but for case and '-', '_' or ' ' between words, or at most
// maxSpellingEdits edits away; the closest first, then by name. Config
// keys and template names are checked with it alike.
func CloseSpellings(word string, candidates []string) []string {
	w := normalizeSpelling(word)
	type guess struct {
		name  string
		edits int
	}
	var found []guess
	for _, c := range candidates {
		if c == word {
			continue
		}
		if d := editDistance(w, normalizeSpelling(c)); d <= maxSpellingEdits {
			found = append(found, guess{c, d})
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].edits != found[j].edits {
			return found[i].edits < found[j].edits
		}
		return found[i].name < found[j].name
	})
	out := make([]string, 0, len(found))
	for _, g := range found {
		out = append(out, g.name)
	}
	return out
}

func normalizeSpelling(s string) string {
	return strings.ToLower(strings.NewReplacer("-", "_", " ", "_").Replace(s))
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
