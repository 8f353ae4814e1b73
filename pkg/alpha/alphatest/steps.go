package alphatest

import (
	"context"
	"encoding/base64"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// addVMFinalizer: the VM handler's FinalizeFunc, on first sight of the VM,
// after any finalizer it has.
func (p *provisioning) addVMFinalizer(ctx context.Context) error {
	return p.kube.addFinalizer(ctx, vmsResource, p.vm.Name, alpha.VMFinalizer)
}

// secretObject is the Secret as the alpha's Secret handler built it.
func (p *provisioning) secretObject(pair keyPair) object {
	return object{
		Metadata: ownedBy(p.vm, p.out.SecretName, map[string]string{alpha.VMLabel: p.vm.Name}),
		Data: map[string][]byte{
			"public_key":  []byte(pair.public),
			"private_key": []byte(pair.private),
			"password":    []byte(p.cfg.get("password")),
		},
	}
}

func (p *provisioning) createSecret(ctx context.Context) error {
	m, err := withApplied(p.secretObject(p.initial))
	if err != nil {
		return err
	}
	return p.kube.create(ctx, secretsResource, "Secret", m)
}

func (p *provisioning) keyRequest(pair keyPair) keyCreateRequest {
	return keyCreateRequest{Name: p.out.KeyName, PublicKey: pair.public}
}

// createKey: the Key object, then its DigitalOcean key, its status, its
// finalizer. With duplicateFirst a key was first made from the Secret's
// first pair, and its status write lost, before the Secret and spec.key
// were rewritten with the pair the recorded key was made from.
func (p *provisioning) createKey(ctx context.Context) error {
	request, err := rawJSON(p.keyRequest(p.initial))
	if err != nil {
		return err
	}
	m, err := withApplied(object{
		Metadata: ownedBy(p.vm, p.out.KeyName, map[string]string{alpha.VMLabel: p.vm.Name}),
		Spec:     keySpec{Machine: p.vm.Name, Secret: p.out.SecretName, Key: request},
		Status:   keyStatus{},
	})
	if err != nil {
		return err
	}
	if err := p.kube.create(ctx, keysResource, "Key", m); err != nil {
		return err
	}
	if p.duplicateFirst() {
		if err := p.createDuplicateKey(ctx); err != nil {
			return err
		}
		if err := p.rewriteSecret(ctx, p.recorded); err != nil {
			return err
		}
	}
	key, err := p.do.createKey(ctx, p.keyRequest(p.recorded))
	if err != nil {
		return err
	}
	p.out.KeyID = key.ID
	p.recordedKey = key
	raw, err := rawJSON(key)
	if err != nil {
		return err
	}
	if err := p.kube.writeStatus(ctx, keysResource, p.out.KeyName,
		keyStatus{Key: raw, Conditions: keyConditions()}); err != nil {
		return err
	}
	return p.kube.addFinalizer(ctx, keysResource, p.out.KeyName, alpha.KeyFinalizer)
}

func (p *provisioning) createDuplicateKey(ctx context.Context) error {
	key, err := p.do.createKey(ctx, p.keyRequest(p.duplicate))
	p.out.DuplicateKeyID = key.ID
	return err
}

// setSecretName: the Key handler's write of the VM's spec.secret_name once
// the DigitalOcean key existed.
func (p *provisioning) setSecretName(ctx context.Context) error {
	return p.kube.mergePatch(ctx, vmsResource, p.vm.Name,
		map[string]any{"spec": map[string]any{"secret_name": p.out.SecretName}})
}

// createDroplet: the Droplet object, its droplet, the status after the
// create and after DigitalOcean reports it active, its finalizer, and the
// VM's status.
func (p *provisioning) createDroplet(ctx context.Context) error {
	request := p.cfg.dropletRequest(p.out.DropletName, p.recordedKey)
	rawRequest, err := rawJSON(request)
	if err != nil {
		return err
	}
	m, err := withApplied(object{
		Metadata: ownedBy(p.vm, p.out.DropletName, map[string]string{alpha.VMLabel: p.vm.Name}),
		Spec:     dropletSpec{Machine: p.vm.Name, Droplet: rawRequest},
		Status:   dropletStatus{},
	})
	if err != nil {
		return err
	}
	if err := p.kube.create(ctx, dropletsResource, "Droplet", m); err != nil {
		return err
	}
	readyStamped := now() // the first status write marks both conditions unknown
	created, err := p.do.createDroplet(ctx, request)
	if err != nil {
		return err
	}
	conditions := dropletConditions(readyStamped, now())
	if err := p.writeDropletStatus(ctx, created, conditions); err != nil {
		return err
	}
	if err := p.kube.addFinalizer(ctx, dropletsResource, p.out.DropletName, alpha.DropletFinalizer); err != nil {
		return err
	}
	active, err := p.do.waitActive(ctx, created.ID)
	if err != nil {
		return err
	}
	if err := p.writeDropletStatus(ctx, active, conditions); err != nil {
		return err
	}
	p.out.DropletID = active.ID
	p.out.PublicIP, p.out.PrivateIP = active.ipv4("public"), active.ipv4("private")
	return p.writeVMStatus(ctx, active)
}

func (p *provisioning) writeDropletStatus(ctx context.Context, d doDroplet, conditions []condition) error {
	raw, err := rawJSON(d)
	if err != nil {
		return err
	}
	return p.kube.writeStatus(ctx, dropletsResource, p.out.DropletName,
		dropletStatus{Droplet: raw, Conditions: conditions})
}

// writeVMStatus: what the alpha set of an active droplet's VM (it wrote
// the whole status; only these fields are its own): running, the
// addresses it found, and the droplet's name as hostname.
func (p *provisioning) writeVMStatus(ctx context.Context, d doDroplet) error {
	status := map[string]any{"status": string(hfv1.VmStatusRunning), "hostname": d.Name}
	for field, network := range map[string]string{"public_ip": "public", "private_ip": "private"} {
		if ip := d.ipv4(network); ip != "" {
			status[field] = ip
		}
	}
	return p.kube.mergePatch(ctx, vmsResource, p.vm.Name, map[string]any{"status": status}, "status")
}

// rewriteSecret: a pass that missed the Secret in its cache made a new
// pair and apply wrote it over the Secret; the Key handler then wrote its
// public key into the Key's spec.key. Apply records each object as its
// handler passed it: the Secret new, the Key as read with spec.key changed.
func (p *provisioning) rewriteSecret(ctx context.Context, pair keyPair) error {
	secret, err := withApplied(p.secretObject(pair))
	if err != nil {
		return err
	}
	enc := base64.StdEncoding.EncodeToString
	if err := p.kube.mergePatch(ctx, secretsResource, p.out.SecretName, map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{applyApplied: annotation(secret, applyApplied)}},
		"data":     map[string]any{"public_key": enc([]byte(pair.public)), "private_key": enc([]byte(pair.private))},
	}); err != nil {
		return err
	}

	key, err := p.kube.res(keysResource).Get(ctx, p.out.KeyName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	request, err := rawJSON(p.keyRequest(pair))
	if err != nil {
		return err
	}
	asRead, err := keyAsTyped(key.Object)
	if err != nil {
		return err
	}
	asRead.Spec.Key = request
	applied, err := withApplied(asRead)
	if err != nil {
		return err
	}
	return p.kube.mergePatch(ctx, keysResource, p.out.KeyName, map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{applyApplied: annotation(applied, applyApplied)}},
		"spec":     map[string]any{"key": request},
	})
}

// annotation is an annotation of an object map.
func annotation(obj map[string]any, name string) any {
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	return annotations[name]
}
