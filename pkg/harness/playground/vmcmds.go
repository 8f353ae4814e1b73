package playground

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AddVMOptions are what `vm add` asks for; zero values take the playground's defaults.
type AddVMOptions struct {
	Template string // default the playground's template
	Count    int    // default 1
	User     string // spec.user_id; default Clients.CreateVM's
}

// vmNamePrefix names the VMs the playground makes on the claim path and
// AddVMs makes on every path: pg-vm-<n>.
const vmNamePrefix = "pg-vm-"

var numberedVM = regexp.MustCompile(`^` + vmNamePrefix + `(\d+)$`)

// AddVMs creates VMs in the playground at statePath as Gargantua's claim
// controller does (Clients.CreateVM): labelled hobbyfarm.io/provisioner=
// digitalocean, spec.provision false, then the separate status write
// (readyforprovisioning, environment_id). It prints each name on out as it
// is made and does not wait for the VMs to run.
func AddVMs(statePath string, opts AddVMOptions, out io.Writer) ([]string, error) {
	s, g, err := connect(statePath)
	if err != nil {
		return nil, err
	}
	if opts.Template == "" {
		opts.Template = s.Template
	}
	if opts.Count <= 0 {
		opts.Count = 1
	}
	if err := checkTemplate(g, s.Namespace, opts.Template); err != nil {
		return nil, err
	}
	env, err := g.Clients.Envs.Get(s.Namespace, s.Environment, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	clients := g.Clients
	if opts.User != "" {
		c := *g.Clients
		c.VMs = forUser{VirtualMachineClient: c.VMs, user: opts.User}
		clients = &c
	}
	next, err := nextVMNumber(g, s.Namespace)
	if err != nil {
		return nil, err
	}
	var names []string
	for len(names) < opts.Count {
		name := vmNamePrefix + strconv.Itoa(next)
		next++
		_, err := clients.CreateVM(s.Namespace, name, env, opts.Template, "digitalocean")
		if apierrors.IsAlreadyExists(err) {
			continue // made meanwhile, e.g. by a second `vm add`
		}
		if err != nil {
			return names, err
		}
		names = append(names, name)
		fmt.Fprintln(out, name)
	}
	return names, nil
}

// forUser creates VMs for user: the one field Clients.CreateVM fixes that a
// claim's VM takes from its user.
type forUser struct {
	hfcontrollers.VirtualMachineClient
	user string
}

func (c forUser) Create(vm *hfv1.VirtualMachine) (*hfv1.VirtualMachine, error) {
	vm = vm.DeepCopy()
	vm.Spec.UserId = c.user
	return c.VirtualMachineClient.Create(vm)
}

func checkTemplate(g *gargantuasim.Gargantua, namespace, name string) error {
	_, err := g.Clients.Templates.Get(namespace, name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	list, err := g.Clients.Templates.List(namespace, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var have []string
	for _, t := range list.Items {
		have = append(have, t.Name)
	}
	return fmt.Errorf("no template %s in namespace %s; there are: %s", name, namespace, strings.Join(have, ", "))
}

// nextVMNumber is one more than the highest pg-vm-<n> in the namespace.
func nextVMNumber(g *gargantuasim.Gargantua, namespace string) (int, error) {
	list, err := g.Clients.VMs.List(namespace, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	highest := 0
	for _, vm := range list.Items {
		if m := numberedVM.FindStringSubmatch(vm.Name); m != nil {
			n, _ := strconv.Atoi(m[1])
			highest = max(highest, n)
		}
	}
	return highest + 1, nil
}

// WaitVMsRunning waits until each VM runs and prints an ssh helper line for it.
func WaitVMsRunning(ctx context.Context, statePath string, names []string, out io.Writer) error {
	s, g, err := connect(statePath)
	if err != nil {
		return err
	}
	for _, name := range names {
		vm, err := waitVMRunning(ctx, g, s.Namespace, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s  %s  ssh: scripts/playground ssh %s\n", vm.Name, vmState(vm), vm.Name)
	}
	return nil
}

// ListVMs prints every VM of the playground at statePath, one line each.
func ListVMs(statePath string, out io.Writer) error {
	s, g, err := connect(statePath)
	if err != nil {
		return err
	}
	list, err := g.Clients.VMs.List(s.Namespace, metav1.ListOptions{})
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSTATUS\tIP\tTEMPLATE\tUSER\tNOTE")
	for i := range list.Items {
		vm := &list.Items[i]
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", vm.Name, orDash(string(vm.Status.Status)), orDash(vm.Status.PublicIP),
			vm.Spec.VirtualMachineTemplateId, orDash(vm.Spec.UserId), orDash(vmNote(vm)))
	}
	return w.Flush()
}

// vmNote is what else describeVM would say: bound, tainted, deleting.
func vmNote(vm *hfv1.VirtualMachine) string {
	var notes []string
	if vm.Labels["vmset"] != "" {
		notes = append(notes, "vmset "+vm.Labels["vmset"])
	}
	if vm.Status.Tainted {
		notes = append(notes, "tainted")
	}
	if vm.DeletionTimestamp != nil {
		notes = append(notes, "deleting")
	}
	return strings.Join(notes, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// DeleteVM deletes a VM of the playground at statePath, as an operator
// would with kubectl, and waits until it is gone (the controller has then
// had DigitalOcean accept its droplet's delete).
func DeleteVM(ctx context.Context, statePath, name string, out io.Writer) error {
	s, g, err := connect(statePath)
	if err != nil {
		return err
	}
	err = g.Clients.VMs.Delete(s.Namespace, name, nil)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("no VM %s in namespace %s", name, s.Namespace)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "deleting VM %s\n", name)
	began := time.Now()
	if err := waitVMGone(ctx, g, s.Namespace, name); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s  gone after %.1fs\n", name, time.Since(began).Seconds())
	return nil
}
