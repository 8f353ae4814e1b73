package environment

import (
	"sync"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Verdicts keeps, for the VirtualMachine controller, since when this check
// has held the config of each template of an Environment invalid. A VM
// created after that fails at once rather than wait --config-error-grace
// for a fix: a config broken before the VM existed is no edit in progress.
//
// It is in memory only. After a restart it is empty until the check has run
// again, which it does at start-up for every Environment, and then counts
// from that run: VMs created before it keep the grace, which only delays
// their failure.
type Verdicts struct {
	mu sync.Mutex
	// byEnv is by Environment namespace/name.
	byEnv map[string]envVerdict
}

// envVerdict is what the check found on one version of an Environment.
type envVerdict struct {
	uid        types.UID
	generation int64
	// invalid is, by template name, since when its config has been invalid.
	invalid map[string]invalidSince
}

type invalidSince struct {
	// templateGeneration is the VirtualMachineTemplate's generation (0 when
	// it did not exist): a template edit is an edit of the config too.
	templateGeneration int64
	since              time.Time
}

// NewVerdicts returns an empty record.
func NewVerdicts() *Verdicts { return &Verdicts{byEnv: map[string]envVerdict{}} }

// InvalidSince is since when the check has held the config of template vmt
// in env invalid, both as they are now (same UID and generations); false
// when it holds it valid, has not checked these versions, or could not.
func (r *Verdicts) InvalidSince(env *hfv1.Environment, vmt *hfv1.VirtualMachineTemplate) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byEnv[env.Namespace+"/"+env.Name]
	if !ok || e.uid != env.UID || e.generation != env.Generation {
		return time.Time{}, false
	}
	s, ok := e.invalid[vmt.Name]
	if !ok || s.templateGeneration != vmt.Generation {
		return time.Time{}, false
	}
	return s.since, true
}

// record notes one pass's verdict on env at now: valid by template checked,
// templateGenerations by template of env. A config found invalid before,
// in the same versions, keeps its time; a template not checked this time
// (DigitalOcean unreachable) keeps its last word.
func (r *Verdicts) record(key string, env *hfv1.Environment, valid map[string]bool, templateGenerations map[string]int64, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.byEnv[key]
	sameEnv := prev.uid == env.UID && prev.generation == env.Generation
	next := envVerdict{uid: env.UID, generation: env.Generation, invalid: map[string]invalidSince{}}
	for t, gen := range templateGenerations {
		old, had := prev.invalid[t]
		had = had && sameEnv && old.templateGeneration == gen
		ok, checked := valid[t]
		switch {
		case checked && ok:
		case had:
			next.invalid[t] = old
		case checked:
			next.invalid[t] = invalidSince{templateGeneration: gen, since: now}
		}
	}
	r.byEnv[key] = next
}

// forget drops what was recorded on the Environment key.
func (r *Verdicts) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byEnv, key)
}

// recordVerdict shares v with the VirtualMachine controller. It runs before
// v is reported, so a VM made after the report's Events is made after it.
// (A template edited between the check and this read is checked again at
// once: the template's watch re-runs the check.)
func (h *handler) recordVerdict(key string, env *hfv1.Environment, v *verdict) {
	generations := map[string]int64{}
	for _, t := range templates(env) {
		generations[t] = 0
		if vmt, err := h.templates.Get(env.Namespace, t); err == nil {
			generations[t] = vmt.Generation
		}
	}
	h.verdicts.record(key, env, v.valid, generations, time.Now())
}
