package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// asMainEnv makes the test binary run main() instead of the tests, so the
// tests drive the real program (its re-exec into its own process group included).
const asMainEnv = "HF_PLAYGROUND_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestScriptHelpNeedsNoGoAndNoBuild runs scripts/playground --help as on a
// fresh machine: an empty cache and no go on PATH. It must print the usage
// the program embeds and build nothing.
func TestScriptHelpNeedsNoGoAndNoBuild(t *testing.T) {
	script, err := filepath.Abs("../../../../scripts/playground")
	if err != nil {
		t.Fatal(err)
	}
	// A PATH with only the tools the script's help path uses.
	bin := t.TempDir()
	for _, tool := range []string{"bash", "dirname", "cat"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s not installed", tool)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	cache := filepath.Join(home, "cache")
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"ssh", "--help"}, {"vm", "help"}, {"session", "-h"}} {
		cmd := exec.Command(script, args...)
		cmd.Env = []string{"PATH=" + bin, "HOME=" + home, "XDG_CACHE_HOME=" + cache}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		began := time.Now()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("scripts/playground %v: %v\n%s", args, err, stderr.String())
		}
		if took := time.Since(began); took > 5*time.Second {
			t.Errorf("scripts/playground %v took %v", args, took)
		}
		if string(out) != usage {
			t.Errorf("scripts/playground %v printed something else than usage.txt:\n%s", args, out)
		}
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("help touched the cache %s (a build?): %v", cache, err)
	}
	if !strings.HasPrefix(usage, "Usage:\n  scripts/playground [flags]") {
		t.Errorf("usage does not start with the command's usage line:\n%s", usage)
	}
}

// TestUsageDocumentsEveryFlag keeps usage.txt, which is written by hand so
// the script can print it without a build, in step with the flags.
func TestUsageDocumentsEveryFlag(t *testing.T) {
	runFS, _ := runFlags()
	sessionFS, _, _ := sessionFlags()
	vmFS, _, _, _ := vmFlags()
	sshFS, _, _ := sshFlags()
	for _, fs := range []*flag.FlagSet{runFS, sessionFS, vmFS, sshFS} {
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(usage, "--"+f.Name+" ") {
				t.Errorf("usage.txt lacks %s's flag --%s", fs.Name(), f.Name)
			}
			// The state path depends on the machine; usage.txt spells out the rule.
			if f.Name != "state" && f.DefValue != "" && f.DefValue != "false" &&
				!strings.Contains(usage, "(default "+f.DefValue) {
				t.Errorf("usage.txt does not give %s's --%s default %s", fs.Name(), f.Name, f.DefValue)
			}
		})
	}
	for _, cmd := range []string{"vm add", "vm list", "vm delete <vm>", "ssh <vm>", "session start", "session end <vm-or-session>"} {
		if !strings.Contains(usage, "scripts/playground "+cmd) {
			t.Errorf("usage.txt has no usage line for %s", cmd)
		}
	}
	// What the fake droplet's SSH answers, from pkg/harness/fakedo/commands.go.
	for _, answered := range []string{"hostname", "echo [words]", "cloud-init status", `"fake droplet"`, "no real shell"} {
		if !strings.Contains(usage, answered) {
			t.Errorf("usage.txt does not say the fake's SSH answers %s", answered)
		}
	}
}
