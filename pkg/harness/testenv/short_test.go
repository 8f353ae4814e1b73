package testenv

import (
	"flag"
	"testing"
)

// setShort sets -short for the rest of t.
func setShort(t *testing.T, short bool) {
	was := flag.Lookup("test.short").Value.String()
	set := func(v string) {
		if err := flag.Set("test.short", v); err != nil {
			t.Fatal(err)
		}
	}
	if short {
		set("true")
	} else {
		set("false")
	}
	t.Cleanup(func() { set(was) })
}

// Under -short a test needing a control plane is skipped unless Smoke
// marked it: a new one is skipped by default.
func TestShortSkipsAllButSmokeTests(t *testing.T) {
	if skipIntegration() {
		t.Skip("Require and New skip anyway: " + errSkip.Error())
	}
	setShort(t, true)
	var plain, required, private, smoke *testing.T
	t.Run("plain", func(t *testing.T) { plain = t; SkipUnlessFull(t) })
	t.Run("require", func(t *testing.T) { required = t; Require(t) })
	t.Run("new", func(t *testing.T) { private = t; New(t, Options{}) })
	for name, sub := range map[string]*testing.T{"SkipUnlessFull": plain, "Require": required, "New": private} {
		if !sub.Skipped() {
			t.Errorf("%s: a test not marked Smoke ran under -short", name)
		}
	}

	Smoke(t)
	t.Cleanup(func() {
		smokeMu.Lock()
		delete(smokeTests, topLevel(t))
		smokeMu.Unlock()
	})
	t.Run("smoke", func(t *testing.T) { smoke = t; SkipUnlessFull(t) })
	if smoke.Skipped() {
		t.Error("a smoke test (a subtest of one included) was skipped under -short")
	}

	setShort(t, false)
	t.Run("full", func(t *testing.T) { plain = t; SkipUnlessFull(t) })
	if plain.Skipped() {
		t.Error("skipped without -short")
	}
}
