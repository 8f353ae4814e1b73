package playground

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// printHints prints how to look around, with an ssh command into vmName's
// fake droplet that has been tried first.
func (p *playground) printHints(vmName string) error {
	vm, err := p.hf.VMs.Get(Namespace, vmName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	secret, err := p.hf.Secrets.Get(Namespace, vm.Spec.SecretName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading key secret %q of %s: %w", vm.Spec.SecretName, vmName, err)
	}
	privateKey := secret.Data["private_key"]
	droplet, err := p.droplets.Get(Namespace, vmName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	addr, ok := p.do.SSHAddr(Token, droplet.Status.DropletID)
	if !ok {
		return fmt.Errorf("fake droplet %d of %s serves no SSH", droplet.Status.DropletID, vmName)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	sshPort, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	user := sshUser(vm)
	hostname, err := sshHostname(addr, user, privateKey, p.do.HostPublicKey())
	if err != nil {
		return fmt.Errorf("ssh into %s (%s): %w", vmName, addr, err)
	}
	if hostname != vm.Status.Hostname {
		return fmt.Errorf("ssh into %s answered hostname %q, VM status says %q", vmName, hostname, vm.Status.Hostname)
	}
	command, err := sshArgs(State{Namespace: Namespace, Dir: p.dir, SSHPort: sshPort}, p.garg, vm, []string{"hostname"})
	if err != nil {
		return err
	}

	fmt.Fprintf(p.out, "\nexport KUBECONFIG=%s\n", p.env.KubeconfigPath)
	// Not "vm": the HobbyFarm CRDs have no short names.
	fmt.Fprintf(p.out, "kubectl get virtualmachines,droplets,keys -n %s\n", Namespace)
	fmt.Fprintf(p.out, "controller log: %s\n", p.logPath)
	fmt.Fprintln(p.out, ShellLine(command))
	fmt.Fprintf(p.out, "verified: ssh login works (%s@%s answered hostname %s)\n", user, addr, hostname)
	return nil
}

// sshHostname logs in with the VM's own key, checking the fake's host key, and runs `hostname`.
func sshHostname(addr, user string, privateKey []byte, hostKey ssh.PublicKey) (string, error) {
	signer, err := ssh.ParsePrivateKey(privateKey)
	if err != nil {
		return "", fmt.Errorf("parsing the VM's private key: %w", err)
	}
	client, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{
		User: user, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		// Pinned, unlike the printed command: that one is for a human, this one proves it is the fake.
		HostKeyCallback: ssh.FixedHostKey(hostKey), Timeout: 5 * time.Second,
	})
	if err != nil {
		return "", err
	}
	defer client.Close()
	session, err := client.NewSession()
	if err != nil {
		return "", err
	}
	defer session.Close()
	var stdout bytes.Buffer
	session.Stdout = &stdout
	if err := session.Run("hostname"); err != nil {
		return "", err
	}
	return strings.TrimSpace(stdout.String()), nil
}
