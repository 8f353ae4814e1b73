package gargantuasim

import (
	"errors"
	"fmt"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Session is a user's session as far as VMs go: its VirtualMachineClaim and
// the VMs bound to it.
type Session struct {
	Name  string
	User  string
	Claim string
	VMs   []string
}

// claimVMKey is the claim's name for its one VM (a scenario's VM name).
const claimVMKey = "vm1"

// StartSession is a user starting an on-demand session: the session server
// creates a VirtualMachineClaim, and the claim controller creates one VM for
// it in env, writes the VM's status in a second call (V1_0 without retry),
// and binds the claim. An error wraps ErrSessionTainted; the Session returned
// with it holds what was made, for EndSession.
func (g *Gargantua) StartSession(user string, env *hfv1.Environment, template string) (*Session, error) {
	s, claim, err := g.createClaim(user, template, "dynamic", g.SessionEvent)
	if err != nil {
		return nil, err
	}
	vm, err := g.createClaimVM(claim, env, template)
	if vm != nil {
		s.VMs = []string{vm.Name}
	}
	if err == nil {
		err = g.bindClaim(claim, vm.Name, template)
	}
	if err != nil {
		return s, fmt.Errorf("%w: %w", ErrSessionTainted, err)
	}
	return s, nil
}

// BindStaticVM is a user starting a session of a scheduled event with VM
// sets: the claim controller picks a free VM of the set (Gargantua picks
// among the event's sets for the template; here only vmset's), binds it to
// the user and marks it allocated, each write retried on conflict. An error
// wraps ErrSessionTainted.
func (g *Gargantua) BindStaticVM(vmset, user string) (*hfv1.VirtualMachine, *Session, error) {
	set, err := g.Clients.VMSets.Get(g.Namespace, vmset, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	template := set.Spec.VMTemplate
	s, claim, err := g.createClaim(user, template, "static", set.Labels[eventLabel])
	if err != nil {
		return nil, nil, err
	}
	vm, err := g.assignFreeVM(set, claim.Name, user)
	if err == nil {
		s.VMs = []string{vm.Name}
		err = g.bindClaim(claim, vm.Name, template)
	}
	if err != nil {
		return vm, s, fmt.Errorf("%w: %w", ErrSessionTainted, err)
	}
	return vm, s, nil
}

// EndSession is a session expiring or being finished: the session controller
// taints its VMs and its claim (each retried on conflict, a failure only
// logged), and the claim controller then deletes the tainted claim. The
// garbage collector deletes the claim's on-demand VMs; VM set VMs stay.
func (g *Gargantua) EndSession(s *Session) error {
	var errs []error
	for _, name := range s.VMs {
		_, err := retryWrite(g.Clients.VMs, g.Namespace, name, true,
			func(vm *hfv1.VirtualMachine) { vm.Status.Tainted = true })
		errs = append(errs, err)
	}
	_, err := retryWrite(g.Clients.Claims, g.Namespace, s.Claim, true,
		func(c *hfv1.VirtualMachineClaim) { c.Status.Tainted = true })
	errs = append(errs, err)
	if err := g.Clients.Claims.Delete(g.Namespace, s.Claim, nil); !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// createClaim is the session server's part: create the claim, then write its
// status (bind mode, not bound, not ready) with the create's resourceVersion.
func (g *Gargantua) createClaim(user, template, bindMode, event string) (*Session, *hfv1.VirtualMachineClaim, error) {
	s := &Session{Name: "ss-" + randomSuffix(), User: user}
	s.Claim = "vmc-" + randomSuffix()
	claim := &hfv1.VirtualMachineClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:      s.Claim,
			Namespace: g.Namespace,
			Labels: map[string]string{
				sessionLabel:             s.Name,
				userLabel:                user,
				eventLabel:               event,
				templateMarker(template): "true",
			},
		},
		Spec: hfv1.VirtualMachineClaimSpec{
			UserId:          user,
			BaseName:        s.Claim,
			DynamicCapable:  true,
			VirtualMachines: map[string]hfv1.VirtualMachineClaimVM{claimVMKey: {Template: template}},
		},
	}
	created, err := g.Clients.Claims.Create(claim)
	if err != nil {
		return nil, nil, fmt.Errorf("creating claim %s: %w", s.Claim, err)
	}
	created.Status = hfv1.VirtualMachineClaimStatus{BindMode: bindMode}
	if created, err = g.Clients.Claims.UpdateStatus(created); err != nil {
		return nil, nil, fmt.Errorf("writing status of claim %s: %w", s.Claim, err)
	}
	return s, created, nil
}

// createClaimVM is the claim controller's on-demand VM: owned by the claim,
// labelled for the Environment's provisioner if it has one.
func (g *Gargantua) createClaimVM(claim *hfv1.VirtualMachineClaim, env *hfv1.Environment, template string) (*hfv1.VirtualMachine, error) {
	tmpl, err := g.Clients.Templates.Get(g.Namespace, template, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	vm := &hfv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{
			Name:            claim.Spec.BaseName + "-" + randomSuffix(),
			Namespace:       g.Namespace,
			OwnerReferences: ownedBy("VirtualMachineClaim", claim),
			Labels: map[string]string{
				"dynamic":        "true",
				claimLabel:       claim.Name,
				environmentLabel: env.Name,
				boundLabel:       "true",
				"ready":          "false",
				templateLabel:    template,
				eventLabel:       claim.Labels[eventLabel],
				restrictedLabel:  "false",
			},
		},
		Spec: configuredSpec(env, tmpl),
	}
	vm.Spec.VirtualMachineClaimId = claim.Name
	vm.Spec.UserId = claim.Spec.UserId
	vm.Spec.Provision = true
	if provisioner, ok := g.Version.provisionerOf(env.Annotations); ok {
		vm.Labels[ProvisionerKey] = provisioner
		vm.Spec.Provision = false
	}
	return g.createVM(vm, readyForProvisioning(env, true), g.Version.retriesClaimStatus())
}

// assignFreeVM picks a free VM as Gargantua does (labels bound=false, the
// template and restrictedbind; status neither allocated nor tainted; the
// last such unless one is running) and binds it to the claim.
func (g *Gargantua) assignFreeVM(set *hfv1.VirtualMachineSet, claim, user string) (*hfv1.VirtualMachine, error) {
	vms, err := g.VMSetVMs(set.Name)
	if err != nil {
		return nil, err
	}
	free := ""
	for _, vm := range vms {
		if vm.Labels[boundLabel] != "false" || vm.Labels[templateLabel] != set.Spec.VMTemplate ||
			vm.Labels[restrictedLabel] != fmt.Sprint(set.Spec.RestrictedBind) ||
			vm.Status.Allocated || vm.Status.Tainted {
			continue
		}
		free = vm.Name
		if vm.Status.Status == hfv1.VmStatusRunning {
			break
		}
	}
	if free == "" {
		return nil, fmt.Errorf("no free VM of template %s in VM set %s: all static VMs are in use", set.Spec.VMTemplate, set.Name)
	}
	_, err = retryWrite(g.Clients.VMs, g.Namespace, free, false, func(vm *hfv1.VirtualMachine) {
		vm.Labels[boundLabel] = "true"
		vm.Spec.VirtualMachineClaimId = claim
		vm.Spec.UserId = user
	})
	if err != nil {
		return nil, fmt.Errorf("binding VM %s: %w", free, err)
	}
	vm, err := retryWrite(g.Clients.VMs, g.Namespace, free, true,
		func(vm *hfv1.VirtualMachine) { vm.Status.Allocated = true })
	if err != nil {
		return nil, fmt.Errorf("allocating VM %s: %w", free, err)
	}
	return vm, nil
}

// bindClaim is the claim controller finishing: it records the VM in the
// claim (an update with the claim as it read it) and marks the claim bound
// (retried on conflict).
func (g *Gargantua) bindClaim(claim *hfv1.VirtualMachineClaim, vm, template string) error {
	c := claim.DeepCopy()
	c.Spec.VirtualMachines = map[string]hfv1.VirtualMachineClaimVM{claimVMKey: {Template: template, VirtualMachineId: vm}}
	if _, err := g.Clients.Claims.Update(c); err != nil {
		return fmt.Errorf("recording VM %s in claim %s: %w", vm, c.Name, err)
	}
	_, err := retryWrite(g.Clients.Claims, g.Namespace, c.Name, true,
		func(c *hfv1.VirtualMachineClaim) { c.Status.Bound, c.Status.Ready = true, false })
	return err
}
