package gargantuasim

import (
	"flag"
	"io"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{
		"v1.0": V1_0, "v1.0.1-0.20230714095352-ed48c8682797": V1_0,
		"v3.0": V3_0, "v3.0.1-rc0": V3_0, "3.0.1": V3_0,
		"v3.1": V3_3, "v3.1.0": V3_3, "v3.2": V3_3, "v3.3": V3_3, "v3.3.2": V3_3,
	} {
		got, err := ParseVersion(in)
		if err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "v3", "v2.0", "v3.4", "v0.9", "latest", "v3.x"} {
		if got, err := ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q) = %v, want an error", in, got)
		}
	}
}

// A Version round-trips through its String and works as a flag.
func TestVersionFlag(t *testing.T) {
	for _, v := range []Version{V1_0, V3_0, V3_3} {
		if got, err := ParseVersion(v.String()); err != nil || got != v {
			t.Errorf("ParseVersion(%q) = %v, %v", v, got, err)
		}
	}
	fs := flag.NewFlagSet("playground", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var v Version
	fs.TextVar(&v, "gargantua", V3_3, "Gargantua version")
	if v != V3_3 {
		t.Errorf("default = %v", v)
	}
	if err := fs.Parse([]string{"-gargantua", "v3.0.1-rc0"}); err != nil || v != V3_0 {
		t.Errorf("-gargantua v3.0.1-rc0: %v, %v", v, err)
	}
	if err := fs.Parse([]string{"-gargantua", "v9"}); err == nil {
		t.Error("-gargantua v9 accepted")
	}
}
