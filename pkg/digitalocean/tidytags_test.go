package digitalocean

import (
	"testing"
	"time"
)

func TestIsTidyTag(t *testing.T) {
	ours := InstallationTag("hobbyfarm")
	opened := time.UnixMilli(1764900000000)
	cases := map[string]bool{
		VMTag("0f6c3a5e-uid"):                        true,
		VMNameTag("vm-abc"):                          true,
		BatchTag("0011223344556677"):                 true,
		PoolTag("pool-uid"):                          true,
		NewDeleteTag():                               true,
		BootTag(ours, opened, 3):                     true,
		BootTag(InstallationTag("other"), opened, 3): false,
		"hfdo-boot:garbage":                          false,
		ours:                                         false,
		"hfdo-ns:hobbyfarm":                          false,
		TagManaged:                                   false,
		"prod":                                       false,
	}
	for tag, want := range cases {
		if got := IsTidyTag(tag, ours); got != want {
			t.Errorf("IsTidyTag(%q) = %v, want %v", tag, got, want)
		}
	}
}

func TestBootTagOpened(t *testing.T) {
	opened := time.UnixMilli(1764900000123)
	got, ok := BootTagOpened(BootTag(InstallationTag("x"), opened, 12))
	if !ok || !got.Equal(opened) {
		t.Errorf("BootTagOpened = %v, %v; want %v", got, ok, opened)
	}
	if _, ok := BootTagOpened(VMTag("uid")); ok {
		t.Error("a VM tag read as a boot bucket")
	}
}
