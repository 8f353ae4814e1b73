package gargantuasim

import (
	"errors"
	"fmt"
	"strconv"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// CreateVMSet is a scheduled event starting: its controller creates a
// VirtualMachineSet of count VMs of template in env (an Environment name),
// and the VM set controller then makes the VMs, one at a time, before any
// user exists. It returns the VMs made, with an error for each that failed
// (ErrLeftWithoutStatus for a failed status write). The set is named name
// and its VMs name-<random>; it has no owner, since no ScheduledEvent object
// exists here.
func (g *Gargantua) CreateVMSet(name, env, template string, count int, scheduledEvent string) ([]*hfv1.VirtualMachine, error) {
	set := &hfv1.VirtualMachineSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: g.Namespace,
			Labels: map[string]string{
				environmentLabel:         env,
				eventLabel:               scheduledEvent,
				templateMarker(template): "true",
			},
		},
		Spec: hfv1.VirtualMachineSetSpec{Count: count, Environment: env, VMTemplate: template, BaseName: name},
	}
	if _, err := g.Clients.VMSets.Create(set); err != nil {
		return nil, fmt.Errorf("creating VM set %s: %w", name, err)
	}
	return g.reconcileVMSet(name)
}

// DeleteVMSet is the end of a scheduled event: Gargantua deletes its VM sets
// and leaves their VMs to the garbage collector; Run's VM set controller
// then removes its finalizer from each.
func (g *Gargantua) DeleteVMSet(name string) error {
	return g.Clients.VMSets.Delete(g.Namespace, name, nil)
}

// VMSetVMs lists the VMs of a VM set, by its label as Gargantua does.
func (g *Gargantua) VMSetVMs(name string) ([]hfv1.VirtualMachine, error) {
	list, err := g.Clients.VMs.List(g.Namespace, metav1.ListOptions{
		LabelSelector: labels.Set{vmsetLabel: name}.String(),
	})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// reconcileVMSet creates VMs while the set has fewer than its count. Like
// Gargantua it counts every VM with the set's label, tainted and deleting
// ones included: a tainted VM is replaced once it is gone, not before.
func (g *Gargantua) reconcileVMSet(name string) ([]*hfv1.VirtualMachine, error) {
	g.vmsetWorker.Lock()
	defer g.vmsetWorker.Unlock()
	set, err := g.Clients.VMSets.Get(g.Namespace, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Listed from the API, not a cache, so a VM just made is always counted.
	vms, err := g.VMSetVMs(name)
	if err != nil {
		return nil, err
	}
	missing := set.Spec.Count - len(vms)
	if missing <= 0 {
		return nil, nil
	}
	env, err := g.Clients.Envs.Get(g.Namespace, set.Spec.Environment, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("VM set %s: %w", name, err)
	}
	tmpl, err := g.Clients.Templates.Get(g.Namespace, set.Spec.VMTemplate, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("VM set %s: %w", name, err)
	}
	var made []*hfv1.VirtualMachine
	var errs []error
	for range missing {
		// Gargantua logs a failure and goes on with the next VM.
		vm, err := g.createVM(g.vmSetVM(set, env, tmpl), readyForProvisioning(env, false), g.Version.retriesVMSetStatus())
		if vm != nil {
			made = append(made, vm)
		}
		if err != nil && vm != nil {
			err = fmt.Errorf("%w: %w", ErrLeftWithoutStatus, err)
		}
		errs = append(errs, err)
	}
	return made, errors.Join(errs...)
}

// vmSetVM is a free VM of a set as the VM set controller makes it.
func (g *Gargantua) vmSetVM(set *hfv1.VirtualMachineSet, env *hfv1.Environment, tmpl *hfv1.VirtualMachineTemplate) *hfv1.VirtualMachine {
	vm := &hfv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{
			Name:            set.Spec.BaseName + "-" + randomSuffix(),
			Namespace:       g.Namespace,
			OwnerReferences: ownedBy("VirtualMachineSet", set),
			Finalizers:      []string{VMSetFinalizer},
			Labels: map[string]string{
				"dynamic":        "false",
				vmsetLabel:       set.Name,
				templateLabel:    tmpl.Name,
				environmentLabel: env.Name,
				boundLabel:       "false",
				"ready":          "false",
				eventLabel:       set.Labels[eventLabel],
				restrictedLabel:  strconv.FormatBool(set.Spec.RestrictedBind),
			},
		},
		Spec: configuredSpec(env, tmpl),
	}
	if set.Spec.RestrictedBind {
		vm.Labels["restrictedbindvalue"] = set.Spec.RestrictedBindValue
	}
	vm.Spec.VirtualMachineSetId = set.Name
	provisioner, external := g.Version.provisionerOf(env.Annotations)
	if g.Version.labelsVMSetVMs() {
		vm.Spec.Provision = !external
		if external {
			vm.Labels[ProvisionerKey] = provisioner
		}
	} else {
		// The go.mod version only knew provisioner "external", and labelled nothing.
		vm.Spec.Provision = provisioner != "external"
	}
	return vm
}
