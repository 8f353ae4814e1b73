package virtualmachine

import (
	"maps"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/tokensecret"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func objectMeta(vm *hfv1.VirtualMachine, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      name,
		Namespace: vm.Namespace,
		Labels:    map[string]string{ProvisionerLabel: ProvisionerName, "hobbyfarm.io/virtualmachine": vm.Name},
	}
}

func sshSecret(vm *hfv1.VirtualMachine, privateKey []byte, publicKey string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: objectMeta(vm, SSHSecretName(vm)),
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			sshkey.PrivateKeyField: privateKey,
			sshkey.PublicKeyField:  []byte(publicKey),
		},
	}
}

func tokenSecret(vm *hfv1.VirtualMachine, token string) *corev1.Secret {
	return tokensecret.WithFinalizer(&corev1.Secret{
		ObjectMeta: objectMeta(vm, TokenSecretName(vm)),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{config.TokenSecretKey: []byte(token)},
	})
}

// tokenRef is where the Droplet and Key controllers find the token: the
// operator's Secret, or the VM's copy of a plain-text token.
func tokenRef(vm *hfv1.VirtualMachine, cfg *config.Droplet) v1alpha1.SecretKeyRef {
	if cfg.TokenSecret != "" {
		return v1alpha1.SecretKeyRef{Name: cfg.TokenSecret, Key: config.TokenSecretKey}
	}
	return v1alpha1.SecretKeyRef{Name: TokenSecretName(vm), Key: config.TokenSecretKey}
}

// withFinalizer makes a Key or Droplet with its controller's cleanup
// finalizer already on. Wrangler's remove handler would otherwise add it
// with a write of its own, which the controller waits for before any
// create in DigitalOcean: a request and a round trip per VM in a flood.
func withFinalizer(meta metav1.ObjectMeta, cleanupHandler string) metav1.ObjectMeta {
	meta.Finalizers = []string{finalizer.Of(cleanupHandler)}
	return meta
}

// WithFinalizer is withFinalizer for the objects of a warm pool's members.
func WithFinalizer(meta metav1.ObjectMeta, cleanupHandler string) metav1.ObjectMeta {
	return withFinalizer(meta, cleanupHandler)
}

// provisioningMeta is the metadata of a VM's own Key or Droplet: its
// cleanup finalizer, and where its settings came from.
func provisioningMeta(vm *hfv1.VirtualMachine, cleanupHandler string) metav1.ObjectMeta {
	meta := withFinalizer(objectMeta(vm, vm.Name), cleanupHandler)
	meta.Annotations = map[string]string{
		v1alpha1.EnvironmentAnnotation: vm.Status.EnvironmentId,
		v1alpha1.TemplateAnnotation:    vm.Spec.VirtualMachineTemplateId,
	}
	return meta
}

func key(vm *hfv1.VirtualMachine, token v1alpha1.SecretKeyRef) *v1alpha1.Key {
	return &v1alpha1.Key{
		ObjectMeta: provisioningMeta(vm, finalizer.KeyCleanupHandler),
		Spec: v1alpha1.KeySpec{
			Name:               digitalocean.KeyName(vm.Namespace, vm.Name),
			PublicKeySecretRef: v1alpha1.SecretKeyRef{Name: SSHSecretName(vm), Key: sshkey.PublicKeyField},
			TokenSecretRef:     token,
		},
	}
}

func droplet(vm *hfv1.VirtualMachine, cfg *config.Droplet, token v1alpha1.SecretKeyRef, installationID string) *v1alpha1.Droplet {
	spec := DropletRequest(cfg)
	spec.VirtualMachine = vm.Name
	spec.Name = digitalocean.DropletName(vm.Name)
	spec.KeyRefs = []string{vm.Name}
	spec.Tags = digitalocean.DropletTags(installationID, vm.Namespace, vm.Name, string(vm.UID), cfg.Tags)
	spec.TokenSecretRef = token
	return &v1alpha1.Droplet{
		ObjectMeta: provisioningMeta(vm, finalizer.DropletCleanupHandler),
		Spec:       spec,
	}
}

// DropletRequest is the part of a Droplet's spec the config decides, the
// same for a VM's droplet and a warm pool's member (so their RequestHashes
// match): the caller adds the name, the identifying tags, the keys and the
// token. Tags holds the config's own tags.
func DropletRequest(cfg *config.Droplet) v1alpha1.DropletSpec {
	return v1alpha1.DropletSpec{
		Region:            cfg.Region,
		Size:              cfg.Size,
		Image:             cfg.Image,
		Backups:           cfg.Backups,
		IPv6:              cfg.IPv6,
		Monitoring:        cfg.Monitoring,
		PrivateNetworking: cfg.PrivateNetworking,
		UserData:          cfg.UserData,
		Tags:              cfg.Tags,
		VPCUUID:           cfg.VPCUUID,
		Readiness:         cfg.Readiness,
	}
}

// labelCost puts CostLabels on the VM's Droplet among objs. Apply then
// owns them, so no other write competes with it for them.
func labelCost(objs []runtime.Object, vm *hfv1.VirtualMachine, existing *v1alpha1.Droplet) {
	for _, obj := range objs {
		if d, ok := obj.(*v1alpha1.Droplet); ok {
			maps.Copy(d.Labels, CostLabels(vm, existing))
		}
	}
}

// placeholderDroplet carries the Configured condition while the config is
// invalid; the Droplet controller ignores a droplet without a name.
func placeholderDroplet(vm *hfv1.VirtualMachine) *v1alpha1.Droplet {
	return &v1alpha1.Droplet{
		ObjectMeta: provisioningMeta(vm, finalizer.DropletCleanupHandler),
		Spec:       v1alpha1.DropletSpec{VirtualMachine: vm.Name},
	}
}
