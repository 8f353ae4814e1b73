package virtualmachine

import (
	"encoding/json"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/rancher/wrangler/v3/pkg/condition"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// patchVM writes only the VM fields this provisioner owns, as merge patches:
// Gargantua rewrites the rest of the status itself.
func (h *handler) patchVM(vm *hfv1.VirtualMachine, secretName string, cfg *config.Droplet, d *v1alpha1.Droplet) error {
	if rv, ok := h.patchedFrom.Load(vm.UID); ok && rv == vm.ResourceVersion {
		// This very copy was patched already and the cache has not caught up:
		// patching it again would repeat the request and its Event. The
		// patched VM's watch event runs this handler again.
		return nil
	}
	spec := map[string]interface{}{}
	if vm.Spec.SecretName != secretName {
		spec["secret_name"] = secretName
	}
	if vm.Spec.SshUsername == "" {
		username := config.DefaultSSHUsername
		if cfg != nil {
			username = cfg.SSHUsername
		}
		spec["ssh_username"] = username
	}
	if len(spec) > 0 {
		if err := h.patch(vm, map[string]interface{}{"spec": spec}); err != nil {
			return err
		}
	}

	status, labels := desiredStatus(vm, d)
	if len(status) == 0 && len(labels) == 0 {
		return nil
	}
	if len(labels) > 0 {
		if err := h.patch(vm, map[string]interface{}{"metadata": map[string]interface{}{"labels": labels}}); err != nil {
			return err
		}
	}
	if len(status) > 0 {
		if err := h.patch(vm, map[string]interface{}{"status": status}, "status"); err != nil {
			return err
		}
		h.announce(vm, status)
	}
	return nil
}

// desiredStatus is what the droplet says the VM's own fields should be; only
// differing fields are returned.
func desiredStatus(vm *hfv1.VirtualMachine, d *v1alpha1.Droplet) (status map[string]interface{}, labels map[string]string) {
	status = map[string]interface{}{}
	labels = map[string]string{}
	if d == nil || d.Status.DropletID == 0 {
		return status, labels
	}
	want := hfv1.VmStatusProvisioned
	if v1alpha1.Ready.IsTrue(d) || vm.Status.Status == hfv1.VmStatusRunning {
		want = hfv1.VmStatusRunning
	}
	if vm.Status.Status != want {
		status["status"] = want
	}
	if want == hfv1.VmStatusRunning {
		for field, pair := range map[string][2]string{
			"public_ip":  {vm.Status.PublicIP, d.Status.PublicIPv4},
			"private_ip": {vm.Status.PrivateIP, d.Status.PrivateIPv4},
			"hostname":   {vm.Status.Hostname, d.Spec.Name},
		} {
			if pair[1] != "" && pair[0] != pair[1] {
				status[field] = pair[1]
			}
		}
		if vm.Labels[readyLabel] != "true" {
			labels[readyLabel] = "true"
		}
	}
	return status, labels
}

func (h *handler) patch(vm *hfv1.VirtualMachine, body map[string]interface{}, subresources ...string) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	if _, err = h.vms.Patch(vm.Namespace, vm.Name, types.MergePatchType, data, subresources...); err != nil {
		return err
	}
	h.patchedFrom.Store(vm.UID, vm.ResourceVersion)
	return nil
}

func (h *handler) announce(vm *hfv1.VirtualMachine, status map[string]interface{}) {
	s, ok := status["status"]
	if !ok {
		return
	}
	log := logrus.WithField("vm", vm.Name)
	switch s {
	case hfv1.VmStatusProvisioned:
		log.Info("droplet created; VM provisioned")
		h.recorder.Event(vm, corev1.EventTypeNormal, "Provisioned", "DigitalOcean droplet created")
	case hfv1.VmStatusRunning:
		log.WithField("public_ip", status["public_ip"]).Info("VM running")
		metrics.ProvisioningSeconds.Observe(time.Since(vm.CreationTimestamp.Time).Seconds())
		h.recorder.Eventf(vm, corev1.EventTypeNormal, "Running", "droplet is active at %v", status["public_ip"])
	}
}

func (h *handler) transition(status interface{}, cond condition.Cond, ok bool, reason, message string, objs ...runtime.Object) bool {
	return events.Transition(h.recorder, status, cond, ok, reason, message, objs...)
}
