package digitalocean

import (
	"testing"
	"time"
)

func TestBootTagsAreValidAndDistinct(t *testing.T) {
	opened := time.Unix(1_800_000_000, 0)
	first := BootTag(InstallationTag("hf/prod install"), opened, 1)
	if !tag.MatchString(first) || !IsBootTag(first) {
		t.Fatalf("%q is not a valid boot tag", first)
	}
	for _, other := range []string{
		BootTag(InstallationTag("hf/prod install"), opened, 2),
		BootTag(InstallationTag("hf/prod install"), opened.Add(time.Millisecond), 1),
		BootTag(InstallationTag("other"), opened, 1),
	} {
		if other == first {
			t.Errorf("two buckets share the tag %q", first)
		}
	}
}
