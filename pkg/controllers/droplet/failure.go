package droplet

import (
	"fmt"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/rancher/wrangler/v3/pkg/condition"
	"k8s.io/client-go/tools/cache"
)

// settingValue is the value of config key as d sent it.
func settingValue(d *v1alpha1.Droplet, key string) string {
	switch key {
	case config.KeyRegion:
		return d.Spec.Region
	case config.KeySize:
		return d.Spec.Size
	case config.KeyImage:
		return d.Spec.Image
	case config.KeyVPCUUID:
		return d.Spec.VPCUUID
	case config.KeyTags:
		return fmt.Sprint(d.Spec.Tags)
	case config.KeyUserData:
		// Up to 64 KiB: its size says enough.
		return fmt.Sprintf("(%d bytes)", len(d.Spec.UserData))
	}
	return ""
}

// failDO records a DigitalOcean error on cond and says when to look again.
func (h *handler) failDO(d *v1alpha1.Droplet, cond condition.Cond, err error) time.Duration {
	f := digitalocean.Classify(err)
	return h.recordFailure(d, cond, f, f.Reason, f.Message)
}

// recordFailure records f on cond under reason and message (one condition
// change, so one Event) and says when to look again.
func (h *handler) recordFailure(d *v1alpha1.Droplet, cond condition.Cond, f digitalocean.Failure, reason, message string) time.Duration {
	metrics.ReconcileErrors.WithLabelValues("Droplet", f.Reason).Inc()
	if f.Permanent {
		message = f.Describe(digitalocean.OriginOf(d, d.Spec.TokenSecretRef.Name), func(key string) string { return settingValue(d, key) })
	}
	logFor(d).WithField("reason", reason).Warn(message)
	h.transition(d, cond, false, reason, message)
	return h.backoff.Delay(cache.MetaObjectToName(d).String(), f)
}

// fail records a non-DigitalOcean problem; the watch on its cause re-enqueues.
func (h *handler) fail(d *v1alpha1.Droplet, cond condition.Cond, reason, message string) {
	metrics.ReconcileErrors.WithLabelValues("Droplet", reason).Inc()
	logFor(d).WithField("reason", reason).Warn(message)
	h.transition(d, cond, false, reason, message)
}
