package alphatest

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// decodeApplied reverses appliedRecord, as baaah reads its record back.
func decodeApplied(s string) ([]byte, error) {
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// Apply's record of an object is the object as built, without kind or
// earlier record, with long strings cut to 64 characters and a hash,
// except the names and kinds of list items.
func TestApplyRecordIsTheObjectShortened(t *testing.T) {
	vm := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("v", 70), Namespace: "ns", UID: "uid-1"}}
	long := strings.Repeat("k", 100)
	obj := object{APIVersion: "v1", Kind: "Secret",
		Metadata: ownedBy(vm, "s", map[string]string{alpha.VMLabel: vm.Name}),
		Data:     map[string][]byte{"public_key": []byte(long), "password": []byte("")}}
	obj.Metadata.Annotations[applyApplied] = "an earlier record"
	m, err := withApplied(obj)
	if err != nil {
		t.Fatal(err)
	}
	b, err := decodeApplied(annotation(m, applyApplied).(string))
	if err != nil {
		t.Fatal(err)
	}
	var record map[string]any
	if err := json.Unmarshal(b, &record); err != nil {
		t.Fatal(err)
	}
	if record["kind"] != nil || record["apiVersion"] != nil {
		t.Errorf("record has type meta: %s", b)
	}
	meta := record["metadata"].(map[string]any)
	if _, ok := meta["annotations"].(map[string]any)[applyApplied]; ok {
		t.Errorf("record holds an earlier record: %s", b)
	}
	if c, ok := meta["creationTimestamp"]; !ok || c != nil {
		t.Errorf("record creationTimestamp %v, want null", c)
	}
	if got := meta["labels"].(map[string]any)[alpha.VMLabel].(string); len(got) != 72 || got[:64] != vm.Name[:64] {
		t.Errorf("long label kept as %q", got)
	}
	if got := meta["ownerReferences"].([]any)[0].(map[string]any)["name"]; got != vm.Name {
		t.Errorf("owner reference name %v: names of list items are kept whole", got)
	}
	encoded := base64.StdEncoding.EncodeToString([]byte(long))
	if got := record["data"].(map[string]any)["public_key"].(string); len(got) != 72 || got[:64] != encoded[:64] {
		t.Errorf("data.public_key recorded as %q", got)
	}
	if got := record["data"].(map[string]any)["password"]; got != "" {
		t.Errorf("empty password recorded as %v", got)
	}
}

// The hash label is SHA-1 of the empty sub-context and the owner's GVK,
// name and namespace.
func TestOwnerHash(t *testing.T) {
	vm := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm-1", Namespace: "hf"}}
	// printf %s "hobbyfarm.io/v1, Kind=VirtualMachinevm-1hf" | sha1sum
	const want = "3a86a0c669ed8f8f1e01dc72398689b6acd8c89b"
	if got := ownedBy(vm, "x", nil).Labels[applyHash]; got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
}
