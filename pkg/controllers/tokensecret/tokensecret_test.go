package tokensecret

import (
	"slices"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// A user's removal queues only a token Secret waiting to be released: each
// pass of a Secret re-runs everything that reads it.
func TestARemovalQueuesOnlyATokenSecretWaitingForIt(t *testing.T) {
	deleting := metav1.NewTime(time.Now())
	secrets := testutil.NamedCache[*corev1.Secret]{Objs: map[string]*corev1.Secret{
		"shared":   {ObjectMeta: metav1.ObjectMeta{Name: "shared"}},
		"released": {ObjectMeta: metav1.ObjectMeta{Name: "released", DeletionTimestamp: &deleting, Finalizers: []string{"other"}}},
		"waiting":  {ObjectMeta: metav1.ObjectMeta{Name: "waiting", DeletionTimestamp: &deleting, Finalizers: []string{InUseFinalizer}}},
	}}
	var queued []string
	gone := releaser(secrets, func(_, name string) { queued = append(queued, name) })
	droplet := func(secret string) *v1alpha1.Droplet {
		return &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm"},
			Spec: v1alpha1.DropletSpec{TokenSecretRef: v1alpha1.SecretKeyRef{Name: secret, Key: "token"}}}
	}
	for _, secret := range []string{"shared", "released", "missing", ""} {
		gone(droplet(secret))
	}
	gone(&v1alpha1.Key{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm"},
		Spec: v1alpha1.KeySpec{TokenSecretRef: v1alpha1.SecretKeyRef{Name: "waiting", Key: "token"}}})
	gone(cache.DeletedFinalStateUnknown{Key: "ns/vm", Obj: droplet("waiting")})
	if want := []string{"waiting", "waiting"}; !slices.Equal(queued, want) {
		t.Errorf("queued %v, want only the Secret waiting for its users, once per removal: %v", queued, want)
	}
}
