package environment

import (
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The record says since when a config has been invalid, for exactly the
// Environment and template versions the check saw.
func TestVerdictsKeepWhenAConfigWasFirstFoundInvalid(t *testing.T) {
	r := NewVerdicts()
	const key = "ns/env"
	env := func(uid types.UID, gen int64) *hfv1.Environment {
		return &hfv1.Environment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "env", UID: uid, Generation: gen}}
	}
	vmt := func(name string, gen int64) *hfv1.VirtualMachineTemplate {
		return &hfv1.VirtualMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: gen}}
	}
	t0 := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	expect := func(step string, e *hfv1.Environment, tmpl *hfv1.VirtualMachineTemplate, want time.Time, wantOK bool) {
		t.Helper()
		got, ok := r.InvalidSince(e, tmpl)
		if ok != wantOK || !got.Equal(want) {
			t.Errorf("%s: InvalidSince(%s gen %d, %s gen %d) = %s, %v; want %s, %v",
				step, e.UID, e.Generation, tmpl.Name, tmpl.Generation, got, ok, want, wantOK)
		}
	}
	gens := map[string]int64{"ubuntu": 1, "debian": 1}

	r.record(key, env("a", 1), map[string]bool{"ubuntu": false, "debian": true}, gens, at(0))
	expect("first found invalid", env("a", 1), vmt("ubuntu", 1), at(0), true)
	expect("valid", env("a", 1), vmt("debian", 1), time.Time{}, false)

	r.record(key, env("a", 1), map[string]bool{"ubuntu": false, "debian": true}, gens, at(1))
	expect("checked again, unchanged", env("a", 1), vmt("ubuntu", 1), at(0), true)

	r.record(key, env("a", 1), map[string]bool{"debian": true}, gens, at(2))
	expect("not checked this time", env("a", 1), vmt("ubuntu", 1), at(0), true)

	expect("asked about another generation", env("a", 2), vmt("ubuntu", 1), time.Time{}, false)
	expect("asked about another Environment of the name", env("b", 1), vmt("ubuntu", 1), time.Time{}, false)
	expect("asked about another template generation", env("a", 1), vmt("ubuntu", 2), time.Time{}, false)

	gens["ubuntu"] = 2
	r.record(key, env("a", 1), map[string]bool{"ubuntu": false, "debian": true}, gens, at(3))
	expect("template edited, still invalid", env("a", 1), vmt("ubuntu", 2), at(3), true)

	r.record(key, env("a", 2), map[string]bool{"debian": true}, gens, at(4))
	expect("Environment edited, not checked yet", env("a", 2), vmt("ubuntu", 2), time.Time{}, false)
	r.record(key, env("a", 2), map[string]bool{"ubuntu": false, "debian": false}, gens, at(5))
	expect("Environment edited, still invalid", env("a", 2), vmt("ubuntu", 2), at(5), true)
	expect("Environment edited, turned invalid", env("a", 2), vmt("debian", 1), at(5), true)

	r.record(key, env("a", 2), map[string]bool{"ubuntu": true, "debian": false}, gens, at(6))
	expect("fixed", env("a", 2), vmt("ubuntu", 2), time.Time{}, false)
	r.record(key, env("a", 2), map[string]bool{"ubuntu": false, "debian": false}, gens, at(7))
	expect("broken again", env("a", 2), vmt("ubuntu", 2), at(7), true)

	r.forget(key)
	expect("forgotten", env("a", 2), vmt("debian", 1), time.Time{}, false)
}
