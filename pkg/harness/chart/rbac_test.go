package chart

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// grant is one permission: a verb on a resource (with subresource) of an API group.
type grant struct{ Group, Resource, Verb string }

func (g grant) String() string {
	group := g.Group
	if group == "" {
		group = "core"
	}
	return group + "/" + g.Resource + ":" + g.Verb
}

func grants(group string, resources []string, verbs ...string) []grant {
	var gs []grant
	for _, r := range resources {
		for _, v := range verbs {
			gs = append(gs, grant{group, r, v})
		}
	}
	return gs
}

var crud = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// wantGrants is everything the controller may do in its namespace, and nothing more.
// deleteTainted is the value deleteTaintedVMs: only then does it delete VMs (those
// Gargantua tainted, so their droplets stop billing).
func wantGrants(deleteTainted bool) []grant {
	var gs []grant
	add := func(more []grant) { gs = append(gs, more...) }
	add(grants("hobbyfarm.io", []string{"virtualmachines"}, "get", "list", "watch", "update", "patch"))
	if deleteTainted {
		add(grants("hobbyfarm.io", []string{"virtualmachines"}, "delete"))
	}
	add(grants("hobbyfarm.io", []string{"virtualmachines/status"}, "get", "update", "patch"))
	add(grants("hobbyfarm.io", []string{"environments", "virtualmachinetemplates"}, "get", "list", "watch"))
	add(grants("hobbyfarm.io", []string{"scheduledevents"}, "get", "list", "watch"))
	add(grants("", []string{"secrets"}, crud...))
	add(grants("provisioning.hobbyfarm.io", []string{"droplets", "keys"}, crud...))
	add(grants("provisioning.hobbyfarm.io", []string{"droplets/status", "keys/status"}, "get", "update", "patch"))
	add(grants("provisioning.hobbyfarm.io", []string{"droplets/finalizers", "keys/finalizers"}, "update"))
	add(grants("provisioning.hobbyfarm.io", []string{"warmpools"}, crud...))
	add(grants("provisioning.hobbyfarm.io", []string{"warmpools/status"}, "get", "update", "patch"))
	add(grants("provisioning.hobbyfarm.io", []string{"warmpools/finalizers"}, "update"))
	add(grants("", []string{"events"}, "create", "patch"))
	add(grants("events.k8s.io", []string{"events"}, "create", "patch"))
	add(grants("coordination.k8s.io", []string{"leases"}, crud...))
	return gs
}

// roleGrants flattens a Role's rules, failing on anything not expressible as plain
// grants (wildcards, resourceNames, nonResourceURLs), which would widen them.
func roleGrants(t *testing.T, role *rbacv1.Role) map[grant]bool {
	t.Helper()
	grants, names := flattenRole(t, role)
	for g, n := range names {
		t.Errorf("%s is limited to %v: resourceNames are not expected", g, n)
	}
	return grants
}

// flattenRole flattens a Role's rules into grants, and the resourceNames a grant
// is limited to, failing on wildcards and nonResourceURLs.
func flattenRole(t *testing.T, role *rbacv1.Role) (map[grant]bool, map[grant][]string) {
	t.Helper()
	out, names := map[grant]bool{}, map[grant][]string{}
	for i, r := range role.Rules {
		if len(r.NonResourceURLs) > 0 {
			t.Errorf("rule %d: nonResourceURLs are not expected: %+v", i, r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if g == "*" || res == "*" || v == "*" || strings.Contains(res, "*") {
						t.Errorf("rule %d: wildcard in %+v", i, r)
					}
					out[grant{g, res, v}] = true
					if len(r.ResourceNames) > 0 {
						names[grant{g, res, v}] = append(names[grant{g, res, v}], r.ResourceNames...)
					}
				}
			}
		}
	}
	return out, names
}

func TestRoleGrantsExactlyWhatTheControllerNeeds(t *testing.T) {
	for name, tc := range map[string]struct {
		args          []string
		deleteTainted bool
	}{
		"defaults":         {nil, true},
		"all values":       {[]string{"-f", testdata(t, "all-values.yaml")}, false}, // deleteTaintedVMs: false
		"keep tainted VMs": {[]string{"--set", "deleteTaintedVMs=false"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			ms := render(t, "hf-provisioner-digitalocean", "team-a", tc.args...)
			var role rbacv1.Role
			only(t, ms, "Role").into(t, &role)
			compareGrants(t, "controller's needs", wantGrants(tc.deleteTainted), roleGrants(t, &role))

			var rb rbacv1.RoleBinding
			only(t, ms, "RoleBinding").into(t, &rb)
			sa := only(t, ms, "ServiceAccount").Obj
			if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != role.Name || rb.RoleRef.APIGroup != rbacv1.GroupName {
				t.Errorf("RoleBinding roleRef = %+v, want the chart's Role %q", rb.RoleRef, role.Name)
			}
			wantSubject := rbacv1.Subject{Kind: "ServiceAccount", Name: sa.GetName(), Namespace: "team-a"}
			if len(rb.Subjects) != 1 || rb.Subjects[0] != wantSubject {
				t.Errorf("RoleBinding subjects = %+v, want only %+v", rb.Subjects, wantSubject)
			}
		})
	}
}

// readmeTable reads the permissions table under heading in the chart README: each
// row's grants, and apart those its verbs cell grants only "while" a value is true.
func readmeTable(t *testing.T, heading string) (always, conditional []grant) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(chartDir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(readme), "\n"+heading+"\n")
	if !found {
		t.Fatalf("chart README has no %q section", heading)
	}
	section, _, _ = strings.Cut(section, "\n#")
	backticked := regexp.MustCompile("`([^`]*)`")
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 3 || !strings.HasPrefix(cells[0], "`") {
			continue
		}
		for _, g := range backticked.FindAllStringSubmatch(cells[0], -1) {
			group := strings.Trim(g[1], `"`)
			for _, r := range backticked.FindAllStringSubmatch(cells[1], -1) {
				for _, part := range regexp.MustCompile(`[,;]`).Split(cells[2], -1) {
					verb := strings.Fields(part)[0]
					if strings.Contains(part, " while ") {
						conditional = append(conditional, grant{group, r[1], verb})
					} else {
						always = append(always, grant{group, r[1], verb})
					}
				}
			}
		}
	}
	if len(always) == 0 {
		t.Fatalf("chart README's %q section has no permissions table", heading)
	}
	return always, conditional
}

// TestREADMEPermissionsAreTheRoles keeps the chart README's permissions table equal
// to the Role the chart renders, with and without its conditional verbs.
func TestREADMEPermissionsAreTheRoles(t *testing.T) {
	always, conditional := readmeTable(t, "## Permissions")
	for name, tc := range map[string]struct {
		set  string
		want []grant
	}{
		"defaults":         {"deleteTaintedVMs=true", append(slices.Clone(always), conditional...)},
		"keep tainted VMs": {"deleteTaintedVMs=false", always},
	} {
		t.Run(name, func(t *testing.T) {
			var role rbacv1.Role
			only(t, render(t, release, "team-a", "--set", tc.set), "Role").into(t, &role)
			compareGrants(t, "README table", tc.want, roleGrants(t, &role))
		})
	}
}

// compareGrants fails with the grants one side has and the other lacks.
func compareGrants(t *testing.T, wantName string, want []grant, got map[grant]bool) {
	t.Helper()
	wanted := map[grant]bool{}
	for _, g := range want {
		wanted[g] = true
	}
	var missing, extra []string
	for g := range wanted {
		if !got[g] {
			missing = append(missing, g.String())
		}
	}
	for g := range got {
		if !wanted[g] {
			extra = append(extra, g.String())
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("Role rules differ from the %s:\nonly in the %s: %v\nonly in the Role: %v", wantName, wantName, missing, extra)
	}
}

// wantDrainGrants is everything the uninstall hook may do, and nothing more, with
// the names a grant is limited to: the release's Deployment and Lease.
func wantDrainGrants(deployment, lease string) (map[grant]bool, map[grant][]string) {
	want, names := map[grant]bool{}, map[grant][]string{}
	add := func(gs []grant, name string) {
		for _, g := range gs {
			want[g] = true
			if name != "" {
				names[g] = []string{name}
			}
		}
	}
	add(grants("apps", []string{"deployments"}, "get"), deployment)
	add(grants("apps", []string{"deployments/scale"}, "get", "update"), deployment)
	add(grants("", []string{"pods"}, "list"), "")
	if lease != "" {
		add(grants("coordination.k8s.io", []string{"leases"}, "create"), "")
		add(grants("coordination.k8s.io", []string{"leases"}, "get", "update", "delete"), lease)
	}
	add(grants("", []string{"secrets"}, "get", "list", "patch"), "")
	add(grants("hobbyfarm.io", []string{"environments"}, "list"), "")
	add(grants("hobbyfarm.io", []string{"virtualmachines"}, "get", "list", "patch"), "")
	add(grants("provisioning.hobbyfarm.io", []string{"droplets", "keys", "warmpools"}, "get", "list", "patch", "delete"), "")
	return want, names
}

// TestDrainRoleGrantsExactlyWhatTheDrainNeeds checks the hook's Role, its binding to
// the hook's ServiceAccount, which the hook's Job runs as, and the chart README's
// table of it.
func TestDrainRoleGrantsExactlyWhatTheDrainNeeds(t *testing.T) {
	readme, _ := readmeTable(t, "### The uninstall hook's Role")
	for name, tc := range map[string]struct {
		args  []string
		lease string
	}{
		"defaults":           {nil, "hf-provisioner-digitalocean"},
		"lease name":         {[]string{"--set", "leaderElection.leaseName=hfdo-lock"}, "hfdo-lock"},
		"no leader election": {[]string{"--set", "leaderElection.enabled=false"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			ms := render(t, "hfdo", "team-a", tc.args...)
			var role rbacv1.Role
			onlyHook(t, ms, "Role").into(t, &role)
			got, gotNames := flattenRole(t, &role)
			want, wantNames := wantDrainGrants(only(t, ms, "Deployment").Obj.GetName(), tc.lease)
			var wantList []grant
			for g := range want {
				wantList = append(wantList, g)
			}
			compareGrants(t, "drain's needs", wantList, got)
			for g, n := range wantNames {
				if !slices.Equal(gotNames[g], n) {
					t.Errorf("%s limited to %v, want %v", g, gotNames[g], n)
				}
			}
			for g, n := range gotNames {
				if _, ok := wantNames[g]; !ok {
					t.Errorf("%s limited to %v, want no limit", g, n)
				}
			}
			if tc.lease != "" {
				compareGrants(t, "README table", readme, got)
			}

			var rb rbacv1.RoleBinding
			onlyHook(t, ms, "RoleBinding").into(t, &rb)
			var job batchv1.Job
			onlyHook(t, ms, "Job").into(t, &job)
			sa := onlyHook(t, ms, "ServiceAccount").Obj.GetName()
			if rb.RoleRef.Name != role.Name || len(rb.Subjects) != 1 || rb.Subjects[0].Name != sa || job.Spec.Template.Spec.ServiceAccountName != sa {
				t.Errorf("the hook's Job runs as %q; its RoleBinding binds %+v to Role %q, want ServiceAccount %q to %q",
					job.Spec.Template.Spec.ServiceAccountName, rb.Subjects, rb.RoleRef.Name, sa, role.Name)
			}
			if sa == only(t, ms, "ServiceAccount").Obj.GetName() {
				t.Errorf("the hook runs as the controller's ServiceAccount %q: the controller would keep the hook's rights", sa)
			}
		})
	}
}
