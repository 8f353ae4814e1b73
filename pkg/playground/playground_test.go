package playground

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// testWriter shows the playground's progress in `go test -v` as it happens.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

func TestRunCreatesVMsPrintsWorkingSSHAndCleansUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out bytes.Buffer
	var res Result
	ready := false
	err := Run(ctx, Options{
		VMs: 2, BootDelay: 300 * time.Millisecond, BaseDir: t.TempDir(), Result: &res,
		// Cancelling here is what Ctrl-C does once the user has seen the hints.
		OnReady: func() { ready = true; cancel() },
	}, io.MultiWriter(&out, testWriter{t}))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !ready {
		t.Fatal("Run returned without calling OnReady")
	}

	text := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^pg-vm-1  running  127\.\d+\.\d+\.\d+$`),
		regexp.MustCompile(`(?m)^pg-vm-2  running  127\.\d+\.\d+\.\d+$`),
		regexp.MustCompile(`(?m)^export KUBECONFIG=/\S+$`),
		regexp.MustCompile(`(?m)^kubectl get virtualmachines,droplets,keys -n hobbyfarm$`),
		regexp.MustCompile(`(?m)^ssh -i /\S+\.key -p \d+ -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null root@127\.\d+\.\d+\.\d+ hostname$`),
		regexp.MustCompile(`(?m)^verified: ssh login works`),
		regexp.MustCompile(`(?m)^fake DigitalOcean holds 0 droplets and 0 keys`),
	} {
		if !want.MatchString(text) {
			t.Errorf("output lacks %s", want)
		}
	}
	if res.DropletsLeft != 0 || res.KeysLeft != 0 {
		t.Errorf("fake still holds %d droplets and %d keys", res.DropletsLeft, res.KeysLeft)
	}
	if _, err := os.Stat(res.Dir); !os.IsNotExist(err) {
		t.Errorf("temp dir %s not removed: %v", res.Dir, err)
	}
}
