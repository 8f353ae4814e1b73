package virtualmachine

import (
	"maps"
	"strings"
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCostLabels(t *testing.T) {
	priced := &v1alpha1.Droplet{Status: v1alpha1.DropletStatus{DropletID: 1, PriceHourly: "0.03571"}}
	vm := func(labels map[string]string, env string) *hfv1.VirtualMachine {
		return &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Status: hfv1.VirtualMachineStatus{EnvironmentId: env}}
	}
	cost := func(group string) map[string]string {
		return map[string]string{v1alpha1.CostGroupLabel: group, v1alpha1.CostBasePriceLabel: "0.03571", v1alpha1.CostTimeUnitLabel: "hours"}
	}
	with := func(a, b map[string]string) map[string]string {
		out := maps.Clone(a)
		maps.Copy(out, b)
		return out
	}
	for _, tc := range []struct {
		name     string
		vm       *hfv1.VirtualMachine
		existing *v1alpha1.Droplet
		want     map[string]string
	}{
		{"price unknown: only the event", vm(map[string]string{v1alpha1.ScheduledEventLabel: "se"}, "env"), nil,
			map[string]string{v1alpha1.ScheduledEventLabel: "se"}},
		{"price unknown, no event", vm(nil, "env"), &v1alpha1.Droplet{}, map[string]string{}},
		{"the VM's cost group wins", vm(map[string]string{v1alpha1.CostGroupLabel: "cg", v1alpha1.ScheduledEventLabel: "se"}, "env"), priced,
			with(cost("cg"), map[string]string{v1alpha1.ScheduledEventLabel: "se"})},
		{"then the scheduled event", vm(map[string]string{v1alpha1.ScheduledEventLabel: "se"}, "env"), priced,
			with(cost("se"), map[string]string{v1alpha1.ScheduledEventLabel: "se"})},
		{"a cost group alone names the event", vm(map[string]string{v1alpha1.CostGroupLabel: "cg"}, "env"), priced,
			with(cost("cg"), map[string]string{v1alpha1.ScheduledEventLabel: "cg"})},
		{"then the Environment", vm(map[string]string{v1alpha1.ScheduledEventLabel: ""}, "env"), priced, cost("env")},
		{"an Environment name no label can hold", vm(nil, strings.Repeat("e", 64)), priced, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CostLabels(tc.vm, tc.existing); !maps.Equal(got, tc.want) {
				t.Errorf("CostLabels = %v, want %v", got, tc.want)
			}
		})
	}
}
