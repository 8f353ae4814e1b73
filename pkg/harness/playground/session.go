package playground

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// sessionLabel is the claim label Gargantua gives a claim's session.
const sessionLabel = "hobbyfarm.io/session"

// sessionTimeout bounds how long the helper commands wait on the playground.
const sessionTimeout = 2 * time.Minute

// SessionInfo is a session started by StartSession.
type SessionInfo struct {
	gargantuasim.Session
	VM, IP string
}

// connect reads the running playground's state and plays its Gargantua.
func connect(statePath string) (State, *gargantuasim.Gargantua, error) {
	s, err := ReadState(statePath)
	if err != nil {
		return s, nil, err
	}
	cfg, err := s.restConfig()
	if err != nil {
		return s, nil, err
	}
	cfg.Timeout = 10 * time.Second
	g, err := gargantuasim.New(cfg, s.Namespace, s.Gargantua)
	if err != nil {
		return s, nil, err
	}
	// A playground whose control plane is gone is no running playground.
	if _, err := g.Clients.Envs.Get(s.Namespace, s.Environment, metav1.GetOptions{}); err != nil {
		return s, nil, fmt.Errorf("%w: its API server (kubeconfig %s) does not answer: %w", ErrNoPlayground, s.Kubeconfig, err)
	}
	return s, g, nil
}

// StartSession starts a session of user in the playground at statePath: on
// the static path (v3.0, v3.3) it binds a free VM of the VM set, on the
// claim path (v1.0) it makes an on-demand VM. It waits for the VM to run
// and prints its IP and an ssh command.
func StartSession(ctx context.Context, statePath, user string, out io.Writer) (*SessionInfo, error) {
	s, g, err := connect(statePath)
	if err != nil {
		return nil, err
	}
	var session *gargantuasim.Session
	var vmName string
	if s.VMSet != "" {
		vm, sess, err := g.BindStaticVM(s.VMSet, user)
		if err != nil {
			return nil, err
		}
		session, vmName = sess, vm.Name
		fmt.Fprintf(out, "session %s of user %s: bound static VM %s of VM set %s (claim %s)\n",
			sess.Name, user, vm.Name, s.VMSet, sess.Claim)
	} else {
		env, err := g.Clients.Envs.Get(s.Namespace, s.Environment, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		sess, err := g.StartSession(user, env, s.Template)
		if err != nil {
			return nil, err
		}
		session, vmName = sess, sess.VMs[0]
		fmt.Fprintf(out, "session %s of user %s: made on-demand VM %s (claim %s)\n", sess.Name, user, vmName, sess.Claim)
	}
	vm, err := waitVMRunning(ctx, g, s.Namespace, vmName)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "%s  %s\n", vm.Name, vmState(vm))
	if err := printSSH(out, s, g, vm); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "end it: scripts/playground session end %s\n", vm.Name)
	return &SessionInfo{Session: *session, VM: vm.Name, IP: vm.Status.PublicIP}, nil
}

// waitVMRunning waits until the VM runs with an IP.
func waitVMRunning(ctx context.Context, g *gargantuasim.Gargantua, namespace, name string) (*hfv1.VirtualMachine, error) {
	var vm *hfv1.VirtualMachine
	err := poll(ctx, func() (bool, error) {
		var err error
		vm, err = g.Clients.VMs.Get(namespace, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return isRunning(vm), nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for VM %s to run: %w", name, err)
	}
	return vm, nil
}

// waitVMGone waits until the VM no longer exists.
func waitVMGone(ctx context.Context, g *gargantuasim.Gargantua, namespace, name string) error {
	err := poll(ctx, func() (bool, error) {
		_, err := g.Clients.VMs.Get(namespace, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("waiting for VM %s to be deleted: %w", name, err)
	}
	return nil
}

// printSSH prints an ssh command into the VM's fake droplet (see sshArgs).
func printSSH(out io.Writer, s State, g *gargantuasim.Gargantua, vm *hfv1.VirtualMachine) error {
	args, err := sshArgs(s, g, vm, []string{"hostname"})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, ShellLine(args))
	return nil
}

// EndSession ends the session that target names (a VM, a session or a
// claim) as Gargantua does: the VM is tainted and the claim deleted. It
// waits until the VM is gone and, on the static path, until the VM set's
// replacement runs.
func EndSession(ctx context.Context, statePath, target string, out io.Writer) error {
	s, g, err := connect(statePath)
	if err != nil {
		return err
	}
	session, err := findSession(g, s.Namespace, target)
	if err != nil {
		return err
	}
	var before []string
	if s.VMSet != "" {
		vms, err := g.VMSetVMs(s.VMSet)
		if err != nil {
			return err
		}
		for _, vm := range vms {
			before = append(before, vm.Name)
		}
	}
	if err := g.EndSession(session); err != nil {
		return err
	}
	fmt.Fprintf(out, "session %s of user %s ended: VM %v tainted, claim %s deleted\n",
		session.Name, session.User, session.VMs, session.Claim)

	began := time.Now()
	for _, name := range session.VMs {
		if err := waitVMGone(ctx, g, s.Namespace, name); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s  gone after %.1fs\n", name, time.Since(began).Seconds())
	}
	if s.VMSet == "" {
		return nil
	}
	var replacement string
	err = poll(ctx, func() (bool, error) {
		vms, err := g.VMSetVMs(s.VMSet)
		if err != nil {
			return false, err
		}
		for _, vm := range vms {
			if !slices.Contains(before, vm.Name) {
				replacement = vm.Name
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for VM set %s to make a replacement: %w", s.VMSet, err)
	}
	vm, err := waitVMRunning(ctx, g, s.Namespace, replacement)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s  %s  (VM set %s's replacement, after %.1fs)\n", vm.Name, vmState(vm), s.VMSet, time.Since(began).Seconds())
	return nil
}

// findSession reads the session of target: a VM bound to a claim
// (spec.vm_claim_id), a session name (the claim's label) or a claim name.
func findSession(g *gargantuasim.Gargantua, namespace, target string) (*gargantuasim.Session, error) {
	claimName, viaVM := target, false
	vm, err := g.Clients.VMs.Get(namespace, target, metav1.GetOptions{})
	switch {
	case err == nil:
		if vm.Spec.VirtualMachineClaimId == "" {
			return nil, fmt.Errorf("VM %s is in no session (no claim): start one with scripts/playground session start", target)
		}
		claimName, viaVM = vm.Spec.VirtualMachineClaimId, true
	case apierrors.IsNotFound(err):
		claims, err := g.Clients.Claims.List(namespace, metav1.ListOptions{
			LabelSelector: labels.Set{sessionLabel: target}.String(),
		})
		if err != nil {
			return nil, err
		}
		if len(claims.Items) > 0 {
			claimName = claims.Items[0].Name
		}
	default:
		return nil, err
	}
	claim, err := g.Clients.Claims.Get(namespace, claimName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && viaVM:
		return nil, fmt.Errorf("the session of VM %s has ended already (claim %s is gone)", target, claimName)
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("no VM, session or claim named %s in namespace %s", target, namespace)
	case err != nil:
		return nil, err
	}
	s := &gargantuasim.Session{Name: claim.Labels[sessionLabel], User: claim.Spec.UserId, Claim: claim.Name}
	for _, key := range slices.Sorted(maps.Keys(claim.Spec.VirtualMachines)) {
		if id := claim.Spec.VirtualMachines[key].VirtualMachineId; id != "" {
			s.VMs = append(s.VMs, id)
		}
	}
	if len(s.VMs) == 0 && viaVM {
		s.VMs = []string{vm.Name}
	}
	return s, nil
}

// poll calls done every pollInterval until it reports true or fails, ctx
// ends or sessionTimeout passes.
func poll(ctx context.Context, done func() (bool, error)) error {
	deadline := time.NewTimer(sessionTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("not after %v", sessionTimeout)
		}
	}
}
