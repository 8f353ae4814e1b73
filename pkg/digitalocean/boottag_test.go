package digitalocean

import (
	"testing"
	"time"
)

func TestBootTagNamesOneBucketPerPeriod(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	first := BootTag(InstallationTag("hf/prod install"), start, 20*time.Second)
	if !tag.MatchString(first) || !IsBootTag(first) {
		t.Fatalf("%q is not a valid boot tag", first)
	}
	if same := BootTag(InstallationTag("hf/prod install"), start.Add(19*time.Second), 20*time.Second); same != first {
		t.Errorf("19 s later: %q, want the same bucket %q", same, first)
	}
	if next := BootTag(InstallationTag("hf/prod install"), start.Add(20*time.Second), 20*time.Second); next == first {
		t.Errorf("20 s later still %q: buckets never end", next)
	}
	if other := BootTag(InstallationTag("other"), start, 20*time.Second); other == first {
		t.Errorf("two installations share the boot tag %q", other)
	}
}
