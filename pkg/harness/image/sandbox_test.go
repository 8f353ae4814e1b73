package image_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
)

// sandboxRootEnv makes the test binary a launcher: it runs the image's
// binary from the unpacked root filesystem this names, as a container
// runtime would (see sandboxMain).
const sandboxRootEnv = "HF_DO_TEST_SANDBOX_ROOT"

// sandboxCommand runs the image's entrypoint, with args, from the
// filesystem unpacked at root: read-only, as uid and gid 65532, in a mount
// namespace of its own so that nothing it mounts reaches the host. Needs root.
func sandboxCommand(t *testing.T, root string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = []string{sandboxRootEnv + "=" + root}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// sandboxMain sets the sandbox up, as the chart's pod gets it (a read-only
// root filesystem, an emptyDir at /tmp, runAsUser and runAsGroup 65532), and
// execs the entrypoint with an empty environment. It never returns.
func sandboxMain() {
	root := os.Getenv(sandboxRootEnv)
	if err := enterSandbox(root); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(125)
	}
	err := syscall.Exec("/"+image.BinaryName, append([]string{"/" + image.BinaryName}, os.Args[1:]...), []string{})
	fmt.Fprintln(os.Stderr, "sandbox: exec:", err)
	os.Exit(126)
}

func enterSandbox(root string) error {
	steps := []struct {
		what string
		do   func() error
	}{
		// Mounts start shared with the host's: make ours private first.
		{"make mounts private", func() error { return syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, "") }},
		{"bind the root", func() error { return syscall.Mount(root, root, "", syscall.MS_BIND|syscall.MS_REC, "") }},
		{"make the root read-only", func() error {
			return syscall.Mount("", root, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
		}},
		{"mount a tmpfs at /tmp", func() error {
			return syscall.Mount("tmpfs", filepath.Join(root, "tmp"), "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size=16m,mode=1777")
		}},
		{"chroot", func() error { return syscall.Chroot(root) }},
		{"chdir /", func() error { return syscall.Chdir("/") }},
		{"check the root is read-only", func() error {
			err := os.WriteFile("/probe", nil, 0o644)
			if !errors.Is(err, syscall.EROFS) {
				return fmt.Errorf("writing /probe as root: %v, want EROFS", err)
			}
			return nil
		}},
		{"drop groups", func() error { return syscall.Setgroups(nil) }},
		{"setgid", func() error { return syscall.Setgid(image.NonRootID) }},
		{"setuid", func() error { return syscall.Setuid(image.NonRootID) }},
		// The kernel forgets the parent-death signal when credentials change.
		{"set the parent-death signal", func() error {
			_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
			if errno != 0 {
				return errno
			}
			return nil
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	return nil
}
