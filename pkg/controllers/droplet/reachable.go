package droplet

import (
	"fmt"
	"net"
	"strconv"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshprobe"
	"golang.org/x/crypto/ssh"
	"k8s.io/client-go/tools/cache"
)

// reasonNoTarget, of Reachable: what to log in with or where is missing.
const reasonNoTarget = "LoginUnavailable"

// checkReachable runs, for an active droplet, the login its VM's user will
// make, and records the outcome as Reachable. It returns when to look
// again, or 0 once the droplet is reachable (or needs no check).
func (h *handler) checkReachable(d *v1alpha1.Droplet) time.Duration {
	if v1alpha1.Reachable.IsTrue(d) {
		return 0
	}
	if d.Spec.Readiness.Check == v1alpha1.ReadyCheckNone {
		h.progress(d, v1alpha1.Reachable, v1alpha1.ReasonNotChecked, "ready_check is none: running once DigitalOcean reports the droplet active")
		return 0
	}
	vm := h.vmOf(d)
	if vm == nil && !d.IsPoolMember() {
		return 0
	}
	if vm != nil && vm.Status.Status == hfv1.VmStatusRunning && d.Spec.AdoptedDropletID == 0 {
		// Reported running before this check existed: a user may be on it.
		// (The original provisioner's droplets are checked all the same: it
		// left some whose Secret the droplet refuses, and their users
		// cannot log in; a login harms no one on it.)
		events.SetCondition(d, v1alpha1.Reachable, true, "AlreadyRunning", "the VM was running before the reachability check was made")
		return 0
	}
	key := cache.MetaObjectToName(d).String()
	// An adopted droplet was created long before its first check.
	late := h.pastReadyTimeout(d) && d.Spec.AdoptedDropletID == 0
	every := probeEvery
	if late {
		every = probeEveryLate
	}
	var r *sshprobe.Result
	if target, problem := h.loginTarget(d, vm); problem != "" {
		r = &sshprobe.Result{Reason: reasonNoTarget, Message: problem}
	} else {
		r = h.prober.result(key, every, target)
	}
	if r == nil {
		return every
	}
	if r.OK {
		h.prober.discard(key)
		h.progress(d, v1alpha1.Reachable, r.Reason, r.Message)
		return 0
	}
	reason, message := r.Reason, r.Message
	if late && reason != sshprobe.ReasonCloudInitFailed {
		reason = v1alpha1.ReasonReadyTimeout
		message = fmt.Sprintf("not reachable within ready_timeout (%s) of the droplet's creation; last attempt: %s", readyTimeout(d), r.Message)
	}
	h.reportUnreachable(d, reason, message)
	return every
}

// reportUnreachable records a failed login. Waiting for sshd or cloud-init
// is the normal way up: no Event then, only the condition. Anything else
// gets one Event per new reason, not one per attempt.
func (h *handler) reportUnreachable(d *v1alpha1.Droplet, reason, message string) {
	quiet := reason == sshprobe.ReasonUnreachable || reason == sshprobe.ReasonCloudInitRunning
	if quiet || v1alpha1.Reachable.GetReason(d) == reason {
		events.SetCondition(d, v1alpha1.Reachable, false, reason, message)
		return
	}
	h.pass.Transition(d, v1alpha1.Reachable, false, reason, message)
}

// pastReadyTimeout: ready_timeout has passed since DigitalOcean created the
// droplet (its created_at, so a restart does not reset the clock).
func (h *handler) pastReadyTimeout(d *v1alpha1.Droplet) bool {
	created, err := time.Parse(time.RFC3339, d.Status.CreatedAt)
	return err == nil && time.Since(created) > readyTimeout(d)
}

func readyTimeout(d *v1alpha1.Droplet) time.Duration {
	if t := d.Spec.Readiness.Timeout.Duration; t > 0 {
		return t
	}
	return config.DefaultReadyTimeout
}

// loginTarget is what Gargantua's shell will use: the Secret the VM's
// secret_name names, its ssh_username, and its sshEndpoint annotation or
// the droplet's address, at the SSH port. A pool member, with no VM yet,
// is checked as its VM will be: its own key pair (see memberKeySecret), and
// the config's ssh_username recorded in its spec.
func (h *handler) loginTarget(d *v1alpha1.Droplet, vm *hfv1.VirtualMachine) (sshprobe.Target, string) {
	t := sshprobe.Target{CloudInit: d.Spec.Readiness.Check == v1alpha1.ReadyCheckCloudInit}
	var secretName, host string
	whose := "the VM's"
	if vm != nil {
		t.User, secretName, host = vm.Spec.SshUsername, vm.Spec.SecretName, vm.Annotations[v1alpha1.SSHEndpointAnnotation]
		if secretName == "" {
			return t, "the VM has no secret_name yet"
		}
	} else {
		whose = "the pool member's"
		t.User = d.Spec.Readiness.Username
		var problem string
		if secretName, problem = h.memberKeySecret(d); problem != "" {
			return t, problem
		}
	}
	if t.User == "" {
		t.User = config.DefaultSSHUsername
	}
	secret, err := h.secrets.Get(d.Namespace, secretName)
	if err != nil {
		return t, fmt.Sprintf("cannot read %s key Secret %q: %v", whose, secretName, err)
	}
	if t.Signer, err = ssh.ParsePrivateKey(secret.Data[sshkey.PrivateKeyField]); err != nil {
		return t, fmt.Sprintf("%s key Secret %q has no usable %s: %v", whose, secretName, sshkey.PrivateKeyField, err)
	}
	if host == "" {
		host = d.Status.PublicIPv4
		if d.Spec.Readiness.Address == v1alpha1.AddressPrivate {
			host = d.Status.PrivateIPv4
		}
	}
	if host == "" {
		return t, fmt.Sprintf("the droplet has no %s address", d.Spec.Readiness.Address)
	}
	t.Addr = withPort(host, h.opts.SSHPort)
	return t, ""
}

// memberKeySecret is the Secret holding a pool member's key pair: the one
// its Key registered in DigitalOcean, which the droplet accepts.
func (h *handler) memberKeySecret(d *v1alpha1.Droplet) (string, string) {
	if len(d.Spec.KeyRefs) == 0 {
		return "", "the pool member names no Key"
	}
	k, err := h.keys.Get(d.Namespace, d.Spec.KeyRefs[0])
	if err != nil {
		return "", fmt.Sprintf("cannot read the pool member's Key %q: %v", d.Spec.KeyRefs[0], err)
	}
	return k.Spec.PublicKeySecretRef.Name, ""
}

// withPort adds port to host unless it names one already.
func withPort(host string, port int) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if port == 0 {
		port = 22
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}
