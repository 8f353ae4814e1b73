// Package sweeper deletes droplets and keys this installation made whose VM
// no longer exists: the last line of defence against droplets that bill forever.
package sweeper

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/deletepause"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/labels"
)

// Options tune the sweep.
type Options struct {
	Namespace      string
	InstallationID string
	// Interval between sweeps; the first runs right after start.
	Interval time.Duration
	// Grace is how old an orphan must be before it is deleted, so that a
	// droplet whose VM is still reaching the cache is never touched.
	Grace time.Duration
	// TagTidyDelay is how long Droplet deletes must have paused before our
	// empty tags are looked for, and how long a tag must stay empty before
	// it is deleted (see tagTidy).
	TagTidyDelay time.Duration
	// BootBucketLife is how long a boot bucket may be handed to creates.
	BootBucketLife time.Duration
	// Pause tells when Droplet deletes paused; nil: the tidy keeps its own.
	Pause *deletepause.Pause
}

type sweeper struct {
	opts     Options
	tidy     *tagTidy
	clients  *digitalocean.Clients
	vms      hfcontrollers.VirtualMachineCache
	envs     hfcontrollers.EnvironmentCache
	droplets provcontrollers.DropletCache
	keys     provcontrollers.KeyCache
	secrets  corecontrollers.SecretCache
	pools    provcontrollers.WarmPoolCache
}

// Register starts sweeping, and tidying our tags, once the caches are
// synced, until ctx ends.
func Register(ctx context.Context, opts Options, c *controllers.Set, synced <-chan struct{}) {
	droplets := c.Droplets
	s := &sweeper{opts: opts, clients: c.DigitalOcean, vms: c.VMs.Cache(), envs: c.Environments.Cache(), droplets: droplets.Cache(),
		keys: c.Keys.Cache(), secrets: c.Secrets.Cache(), pools: c.WarmPools.Cache()}
	pause := opts.Pause
	if pause == nil {
		pause = deletepause.New(time.Now())
	}
	s.tidy = newTagTidy(s, opts.TagTidyDelay, opts.BootBucketLife, pause)
	droplets.OnChange(ctx, "tag-tidy", s.tidy.onDroplet)
	go s.tidy.run(ctx, synced)
	go func() {
		select {
		case <-ctx.Done():
			return
		case <-synced:
		}
		ticker := time.NewTicker(opts.Interval)
		defer ticker.Stop()
		for {
			s.sweep(ctx)
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
}

func (s *sweeper) sweep(ctx context.Context) {
	liveVMs := map[string]bool{}
	vms, err := s.vms.List(s.opts.Namespace, labels.Everything())
	if err != nil {
		return
	}
	for _, vm := range vms {
		liveVMs[string(vm.UID)] = true
	}
	// A live pool's members are spared as VMs are, by their identity.
	for uid := range s.liveMembers() {
		liveVMs[uid] = true
	}
	ownKeys := map[int]bool{}
	if keys, err := s.keys.List(s.opts.Namespace, labels.Everything()); err == nil {
		for _, k := range keys {
			ownKeys[k.Status.KeyID] = true
		}
	}
	for hash, token := range s.tokens() {
		client, err := s.clients.For(token)
		if err != nil {
			continue
		}
		log := logrus.WithField("token_hash", hash)
		s.sweepDroplets(ctx, client, liveVMs, log)
		s.sweepKeys(ctx, client, ownKeys, log)
	}
}

// sweepDroplets deletes this installation's droplets whose VM UID is gone.
func (s *sweeper) sweepDroplets(ctx context.Context, client *godo.Client, liveVMs map[string]bool, log *logrus.Entry) {
	callCtx, cancel := digitalocean.CallContext(ctx)
	defer cancel()
	found, err := digitalocean.DropletsOf(client).ListSummariesByTag(callCtx, digitalocean.InstallationTag(s.opts.InstallationID), digitalocean.PriorityDelete)
	if err != nil {
		log.WithError(err).Warn("orphan sweep: listing droplets")
		return
	}
	onRecord := s.recorded()
	for _, d := range found {
		if !onRecord.orphaned(d, liveVMs) {
			continue
		}
		created, _ := time.Parse(time.RFC3339, d.Created)
		if time.Since(created) < s.opts.Grace {
			continue
		}
		entry := log.WithField("vm", cmp.Or(digitalocean.VMNameFromTags(d.Tags), d.Name)).WithField("droplet", d.ID)
		if err := digitalocean.DropletsOf(client).Delete(callCtx, d.ID); err != nil {
			entry.WithError(err).Warn("orphan sweep: deleting droplet")
			continue
		}
		metrics.OrphansSwept.WithLabelValues("droplet").Inc()
		s.tidy.noteDeleted()
		entry.Warn("deleted orphaned droplet: its VM no longer exists")
	}
}

// records tell which VMs a droplet serves beyond its tags: a droplet made
// by this version carries no VM tag, and one a VM took from a warm pool
// carries the pool member's identity, not the VM's.
type records struct {
	byID        map[int][]string    // droplet id -> UIDs of the VMs holding it
	byBatchName map[string]string   // batch tag + "/" + droplet name -> VM UID
	byName      map[string][]string // droplet name -> UIDs of the VMs whose create may have made it
	namespace   string              // the NamespaceTag of what this sweep judges
}

// recorded reads every droplet ID on record for a VM: a Droplet's
// status.dropletID, spec.claimedDropletID and spec.adoptedDropletID (for
// the VM its tags name),
// and a VM's known-droplet annotation.
func (s *sweeper) recorded() records {
	r := records{byID: map[int][]string{}, byBatchName: map[string]string{}, byName: map[string][]string{},
		namespace: digitalocean.NamespaceTag(s.opts.Namespace)}
	if droplets, err := s.droplets.List(s.opts.Namespace, labels.Everything()); err == nil {
		for _, d := range droplets {
			uid := digitalocean.VMUIDFromTags(d.Spec.Tags)
			r.hold(d.Status.DropletID, uid)
			r.hold(d.Spec.ClaimedDropletID, uid)
			r.hold(d.Spec.AdoptedDropletID, uid)
			if d.Status.CreateBatch != "" {
				r.byBatchName[d.Status.CreateBatch+"/"+d.Spec.Name] = uid
			} else if d.Status.DropletID == 0 && d.Spec.Name != "" && uid != "" {
				// A create sent alone whose answer is not in.
				r.byName[d.Spec.Name] = append(r.byName[d.Spec.Name], uid)
			}
		}
	}
	if vms, err := s.vms.List(s.opts.Namespace, labels.Everything()); err == nil {
		for _, vm := range vms {
			if id, err := strconv.Atoi(vm.Annotations[v1alpha1.KnownDropletAnnotation]); err == nil {
				r.hold(id, string(vm.UID))
			}
		}
	}
	return r
}

func (r records) hold(id int, uid string) {
	if id != 0 && uid != "" && !slices.Contains(r.byID[id], uid) {
		r.byID[id] = append(r.byID[id], uid)
	}
}

// owners are the UIDs of the VMs d serves: those its tags name, those
// holding its ID on record, and those whose create may have made it: by
// its batch and name (multi-created), or by its name alone (a create sent
// alone, without a VM or batch tag).
func (r records) owners(d godo.Droplet) []string {
	out := append(vmUIDs(d.Tags), r.byID[d.ID]...)
	for _, t := range d.Tags {
		if uid, ok := r.byBatchName[t+"/"+d.Name]; ok {
			out = append(out, uid)
		}
	}
	if r.madeAlone(d) {
		out = append(out, r.byName[d.Name]...)
	}
	return out
}

// madeAlone: d is a VM's droplet made by a create sent alone: it carries
// the namespace's tag and no tag that names its VM, batch or pool.
func (r records) madeAlone(d godo.Droplet) bool {
	return slices.Contains(d.Tags, r.namespace) && !slices.ContainsFunc(d.Tags, func(t string) bool {
		return digitalocean.IsVMTag(t) || digitalocean.IsBatchTag(t) || digitalocean.IsPoolTag(t)
	})
}

// orphaned: d is one of this installation's VM or pool droplets (a VM,
// batch or pool tag, an ID on record, or made alone) and none of the VMs
// or live pool members it serves exists.
func (r records) orphaned(d godo.Droplet, live map[string]bool) bool {
	if len(vmUIDs(d.Tags)) == 0 && len(r.byID[d.ID]) == 0 && !slices.ContainsFunc(d.Tags, digitalocean.IsBatchTag) && !r.madeAlone(d) {
		return false
	}
	return !slices.ContainsFunc(r.owners(d), func(uid string) bool { return live[uid] })
}

// sweepKeys deletes keys named for this namespace that no Key object owns.
// Listing keys has its own low limit at DigitalOcean, hence once per sweep;
// every page, so an account with more than 200 keys is swept whole.
func (s *sweeper) sweepKeys(ctx context.Context, client *godo.Client, ownKeys map[int]bool, log *logrus.Entry) {
	callCtx, cancel := digitalocean.CallContext(ctx)
	defer cancel()
	prefix := digitalocean.KeyName(s.opts.Namespace, "")
	keys, err := digitalocean.KeysOf(client).List(callCtx, digitalocean.PriorityDelete)
	if err != nil {
		log.WithError(err).Warn("orphan sweep: listing keys")
		return
	}
	for _, k := range keys {
		if !strings.HasPrefix(k.Name, prefix) || ownKeys[k.ID] || s.keyMayBeInFlight(k) {
			continue
		}
		if err := digitalocean.KeysOf(client).Delete(callCtx, k.ID, digitalocean.PriorityDelete); err != nil {
			log.WithError(err).Warn("orphan sweep: deleting key")
			continue
		}
		metrics.OrphansSwept.WithLabelValues("key").Inc()
		log.WithField("vm", strings.TrimPrefix(k.Name, prefix)).WithField("key", k.ID).Warn("deleted orphaned SSH key: no Key object owns it")
	}
}

// keyMayBeInFlight: a Key object for this name exists and has not recorded
// its ID yet (the key may be the one it is creating right now), or has
// recorded this very key since ownKeys was read.
func (s *sweeper) keyMayBeInFlight(k godo.Key) bool {
	name := strings.TrimPrefix(k.Name, digitalocean.KeyName(s.opts.Namespace, ""))
	obj, err := s.keys.Get(s.opts.Namespace, name)
	return err == nil && (obj.Status.KeyID == 0 || obj.Status.KeyID == k.ID)
}

// tokens are every token this installation may have used (see Tokens).
func (s *sweeper) tokens() map[string]string {
	return CachedTokens(s.opts.Namespace, s.droplets, s.envs, s.secrets)
}

// CachedTokens are Tokens read from the caches: those of namespace's
// Droplets and DigitalOcean Environments.
func CachedTokens(namespace string, droplets provcontrollers.DropletCache, envCache hfcontrollers.EnvironmentCache,
	secrets corecontrollers.SecretCache) map[string]string {
	var refs []v1alpha1.SecretKeyRef
	if all, err := droplets.List(namespace, labels.Everything()); err == nil {
		for _, d := range all {
			refs = append(refs, d.Spec.TokenSecretRef)
		}
	}
	envs, _ := envCache.List(namespace, labels.Everything())
	return Tokens(refs, envs, func(ref v1alpha1.SecretKeyRef) (string, error) {
		return digitalocean.ReadToken(secrets, namespace, ref)
	})
}

// Tokens are the tokens that refs name and that DigitalOcean Environments
// name (plain or by Secret), keyed by hash; read reads a ref's token, and
// one it cannot read is left out.
func Tokens(refs []v1alpha1.SecretKeyRef, envs []*hfv1.Environment, read func(v1alpha1.SecretKeyRef) (string, error)) map[string]string {
	out := map[string]string{}
	add := func(ref v1alpha1.SecretKeyRef) {
		if token, err := read(ref); err == nil {
			out[digitalocean.TokenHash(token)] = token
		}
	}
	for _, ref := range refs {
		add(ref)
	}
	for _, env := range envs {
		for _, settings := range envSettings(env) {
			if t := strings.TrimSpace(settings[config.KeyToken]); t != "" {
				out[digitalocean.TokenHash(t)] = t
			}
			if name := strings.TrimSpace(settings[config.KeyTokenSecret]); name != "" {
				add(v1alpha1.SecretKeyRef{Name: name, Key: config.TokenSecretKey})
			}
		}
	}
	return out
}

// envSettings are the setting maps of a DigitalOcean Environment that may name a token.
func envSettings(env *hfv1.Environment) []map[string]string {
	if env.Annotations["hobbyfarm.io/provisioner"] != "digitalocean" {
		return nil
	}
	out := []map[string]string{env.Spec.EnvironmentSpecifics}
	for _, m := range env.Spec.TemplateMapping {
		out = append(out, m)
	}
	return out
}
