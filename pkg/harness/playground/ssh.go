package playground

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SSHCommand returns the ssh command line (ssh first) that logs in to the
// fake droplet of VM vmName in the playground at statePath and runs
// command (none: the fake's one-line login). The VM's private key is
// written to a mode 0600 file in the playground's temp dir, which goes
// when the playground stops.
func SSHCommand(statePath, vmName string, command []string) ([]string, error) {
	s, g, err := connect(statePath)
	if err != nil {
		return nil, err
	}
	vm, err := g.Clients.VMs.Get(s.Namespace, vmName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("no VM %s in namespace %s (scripts/playground vm list shows them)", vmName, s.Namespace)
	}
	if err != nil {
		return nil, err
	}
	return sshArgs(s, g, vm, command)
}

// sshArgs builds the ssh command line into vm's fake droplet. It refuses
// any address but a 127.x one: the playground's droplets live on loopback,
// and a helper must never log in somewhere real.
func sshArgs(s State, g *gargantuasim.Gargantua, vm *hfv1.VirtualMachine, command []string) ([]string, error) {
	if vm.Status.Status != hfv1.VmStatusRunning || vm.Status.PublicIP == "" {
		return nil, fmt.Errorf("VM %s is %q, not running with an IP yet", vm.Name, vm.Status.Status)
	}
	ip := vm.Status.PublicIP
	if !loopbackIPv4(ip) {
		return nil, fmt.Errorf("VM %s has IP %s, not a 127.x address of the fake DigitalOcean; not dialing it", vm.Name, ip)
	}
	secret, err := g.Clients.Secrets.Get(s.Namespace, vm.Spec.SecretName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading key secret %q of %s: %w", vm.Spec.SecretName, vm.Name, err)
	}
	key := secret.Data["private_key"]
	if len(key) == 0 {
		return nil, fmt.Errorf("key secret %s of %s holds no private_key", secret.Name, vm.Name)
	}
	keyFile := filepath.Join(s.Dir, vm.Name+".key")
	if err := writeKeyFile(keyFile, key); err != nil {
		return nil, err
	}
	args := []string{"ssh", "-i", keyFile, "-p", strconv.Itoa(s.SSHPort),
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", sshUser(vm) + "@" + ip}
	return append(args, command...), nil
}

// sshUser is the user Gargantua's shell logs in as.
func sshUser(vm *hfv1.VirtualMachine) string {
	if vm.Spec.SshUsername == "" {
		return "root"
	}
	return vm.Spec.SshUsername
}

// writeKeyFile writes a private key with mode 0600, which ssh insists on
// (WriteFile alone keeps the mode of a file that exists).
func writeKeyFile(path string, key []byte) error {
	if err := os.WriteFile(path, key, 0o600); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}

func loopbackIPv4(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.To4() != nil && ip.IsLoopback()
}

// safeWord is what a shell takes literally.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9@%+=:,./_-]+$`)

// ShellLine joins args into one line a shell reads back as args.
func ShellLine(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if safeWord.MatchString(a) {
			quoted[i] = a
		} else {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}
