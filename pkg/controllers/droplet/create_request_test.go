package droplet

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// notRequestSettings are the DropletSpec fields that are no setting of a
// create request, and why. Every other field must reach both requests.
var notRequestSettings = map[string]string{
	"VirtualMachine":   "names the VM object; DigitalOcean knows the VM by its tag",
	"KeyRefs":          "names Key objects; their DigitalOcean IDs come resolved (keyIDs)",
	"TokenSecretRef":   "chooses the account the request goes to, not a droplet setting",
	"Readiness":        "checked here after DigitalOcean says active; never sent",
	"Pool":             "marks a warm pool member for the controllers; its tags say so to DigitalOcean",
	"ClaimedDropletID": "a pool droplet taken over, never created",
	"AdoptedDropletID": "the original provisioner's droplet taken over, never created",
	"AlphaDropletSpec": "the original provisioner's record, only read",
}

// TestEverySpecSettingReachesBothCreateRequests gives every DropletSpec
// field a distinct value, then zeroes one at a time: a setting must change
// the same fields of the single and the multi-create request, and a field
// listed in notRequestSettings neither.
func TestEverySpecSettingReachesBothCreateRequests(t *testing.T) {
	full := &v1alpha1.Droplet{}
	next := 0
	fillDistinct(t, reflect.ValueOf(&full.Spec).Elem(), &next)
	keys := []godo.DropletCreateSSHKey{{ID: 7}}
	batch := digitalocean.BatchTag("test")
	// Where the create goes comes from the spec too.
	where := func(d *v1alpha1.Droplet) placement { return (&handler{}).place(d) }
	single := func(d *v1alpha1.Droplet) *godo.DropletCreateRequest { return createRequest(d, keys, where(d)) }
	multi := func(d *v1alpha1.Droplet) *godo.DropletMultiCreateRequest {
		return multiCreateRequest(d, keys, where(d), []*v1alpha1.Droplet{d}, batch)
	}

	specType := reflect.TypeOf(full.Spec)
	for i := range specType.NumField() {
		name := specType.Field(i).Name
		without := full.DeepCopy()
		field := reflect.ValueOf(&without.Spec).Elem().Field(i)
		field.Set(reflect.Zero(field.Type()))

		inSingle := changedFields(single(full), single(without))
		inMulti := changedFields(multi(full), multi(without))
		// The multi-create names its droplets in a list.
		if j := slices.Index(inMulti, "Names"); j >= 0 {
			inMulti[j] = "Name"
		}
		if reason, listed := notRequestSettings[name]; listed {
			if len(inSingle)+len(inMulti) > 0 {
				t.Errorf("DropletSpec.%s is listed as no request setting (%s), but changes the single request's %v and the multi-create's %v",
					name, reason, inSingle, inMulti)
			}
			continue
		}
		if len(inSingle) == 0 || !slices.Equal(inSingle, inMulti) {
			t.Errorf("DropletSpec.%s changes the single create request's %v and the multi-create's %v: a setting must reach both alike "+
				"(set it in createRequest), or be listed in notRequestSettings with the reason it is not sent", name, inSingle, inMulti)
		}
	}
}

// fillDistinct sets v, and all within it, to non-zero values that differ
// from each other.
func fillDistinct(t *testing.T, v reflect.Value, next *int) {
	t.Helper()
	*next++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("value-%d", *next))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*next))
	case reflect.Uint8:
		v.SetUint(uint64(*next % 256))
	case reflect.Interface:
		// A RawExtension's decoded Object: its Raw bytes carry the value.
		return
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillDistinct(t, v.Index(0), next)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillDistinct(t, v.Elem(), next)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillDistinct(t, v.Field(i), next)
			}
		}
	default:
		t.Fatalf("fillDistinct cannot fill a %s: teach it", v.Type())
	}
	if v.IsZero() {
		t.Fatalf("fillDistinct left a %s zero", v.Type())
	}
}

// changedFields names the fields in which the structs *a and *b differ.
func changedFields(a, b any) []string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var out []string
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, va.Type().Field(i).Name)
		}
	}
	return out
}
