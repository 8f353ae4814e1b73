package warmpool

import (
	"strings"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/sirupsen/logrus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
)

// partialGrace is how old a member's object must be before a missing
// sibling counts as missing: a fill creates the Secret, Key and Droplet in
// turn, and their caches catch up one by one.
const partialGrace = 30 * time.Second

// cleanupPartial completes nothing and deletes what a crash mid-fill, or a
// hand, left incomplete: a member Droplet without its Key or Secret (it
// could never be claimed), and Keys and Secrets without their Droplet.
func (h *handler) cleanupPartial(pool *v1alpha1.WarmPool, members []*v1alpha1.Droplet, now time.Time) error {
	selector := labels.SelectorFromSet(labels.Set{v1alpha1.WarmPoolLabel: pool.Name})
	keys, err := h.keys.Cache().List(pool.Namespace, selector)
	if err != nil {
		return err
	}
	secrets, err := h.secrets.Cache().List(pool.Namespace, selector)
	if err != nil {
		return err
	}
	old := func(created time.Time) bool { return now.Sub(created) > partialGrace }
	hasDroplet, hasKey, hasSecret := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, d := range members {
		hasDroplet[d.Name] = true
	}
	for _, k := range keys {
		if isControlledBy(k, string(pool.UID)) {
			hasKey[k.Name] = true
		}
	}
	for _, s := range secrets {
		if member, ok := strings.CutSuffix(s.Name, sshSecretSuffix); ok && isControlledBy(s, string(pool.UID)) {
			hasSecret[member] = true
		}
	}
	for _, d := range members {
		if d.DeletionTimestamp == nil && d.Status.Claim == nil && ownKey(d) && old(d.CreationTimestamp.Time) && (!hasKey[d.Name] || !hasSecret[d.Name]) {
			logrus.WithField("pool", pool.Name).WithField("member", d.Name).Warn("pool member lost its Key or key-pair Secret: deleting it")
			if err := h.deleteMember(pool, d); err != nil {
				return err
			}
		}
	}
	for _, k := range keys {
		if hasKey[k.Name] && !hasDroplet[k.Name] && k.DeletionTimestamp == nil && old(k.CreationTimestamp.Time) {
			logrus.WithField("pool", pool.Name).WithField("member", k.Name).Info("deleting a pool member's Key left without its Droplet")
			if err := h.keys.Delete(k.Namespace, k.Name, nil); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	for _, s := range secrets {
		member, _ := strings.CutSuffix(s.Name, sshSecretSuffix)
		if hasSecret[member] && !hasDroplet[member] && !hasKey[member] && s.DeletionTimestamp == nil && old(s.CreationTimestamp.Time) {
			if err := h.secrets.Delete(s.Namespace, s.Name, nil); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}
