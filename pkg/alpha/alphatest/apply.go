package alphatest

import (
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The alpha made a VM's Secret, Key and Droplet with baaah's apply, owned
// by the VM. Apply marks what it made with these labels and annotations
// (baaah at acorn-io/baaah d553bca0d3d8, pkg/apply).
const (
	applyHash       = "apply.acorn.io/hash"
	applySubContext = "apply.acorn.io/owner-sub-context"
	applyOwnerGVK   = "apply.acorn.io/owner-gvk"
	applyOwnerName  = "apply.acorn.io/owner-name"
	applyOwnerNS    = "apply.acorn.io/owner-namespace"
	applyApplied    = "apply.acorn.io/applied"
)

// vmGVK is the owner's group, version and kind as apply writes it.
const vmGVK = "hobbyfarm.io/v1, Kind=VirtualMachine"

// ownedBy is an object's metadata as apply creates it for the VM: the
// handler's labels plus apply's hash label, apply's owner annotations
// (the sub-context empty: the alpha set none) and a controller reference.
func ownedBy(vm *hfv1.VirtualMachine, name string, labels map[string]string) objectMeta {
	annotations := map[string]string{
		applySubContext: "",
		applyOwnerGVK:   vmGVK,
		applyOwnerName:  vm.Name,
		applyOwnerNS:    vm.Namespace,
	}
	withHash := map[string]string{applyHash: ownerHash(annotations)}
	for k, v := range labels {
		withHash[k] = v
	}
	yes := true
	return objectMeta{
		Name: name, Namespace: vm.Namespace, Labels: withHash, Annotations: annotations,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: hfv1.SchemeGroupVersion.String(), Kind: "VirtualMachine",
			Name: vm.Name, UID: vm.UID, Controller: &yes, BlockOwnerDeletion: &yes,
		}},
	}
}

// ownerHash is apply's hash label: SHA-1 of the sub-context, owner GVK,
// name and namespace.
func ownerHash(annotations map[string]string) string {
	h := sha1.New()
	for _, k := range []string{applySubContext, applyOwnerGVK, applyOwnerName, applyOwnerNS} {
		h.Write([]byte(annotations[k]))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// withApplied returns obj's JSON with apply's record of it added to
// metadata.annotations: obj itself as the handler built it (no kind or
// apiVersion, no earlier record), strings over 64 characters shortened,
// gzipped and base64-encoded. Apply compares against this record when it
// next writes the object.
func withApplied(obj any) (map[string]any, error) {
	m, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	meta, _ := m["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
	}
	delete(annotations, applyApplied)
	meta["annotations"] = annotations
	delete(m, "kind")
	delete(m, "apiVersion")
	record, err := appliedRecord(m)
	if err != nil {
		return nil, err
	}
	annotations[applyApplied] = record
	return m, nil
}

func appliedRecord(m map[string]any) (string, error) {
	b, err := json.Marshal(shorten(m, false))
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return base64.RawStdEncoding.EncodeToString(buf.Bytes()), nil
}

// listKeys are kept whole in the items of lists.
var listKeys = map[string]bool{
	"apiVersion": true, "containerPort": true, "devicePath": true, "ip": true, "kind": true,
	"mountPath": true, "name": true, "port": true, "topologyKey": true, "type": true,
}

// shorten cuts every string over 64 characters to its first 64 and 8 hex
// digits of its SHA-256, but for the listKeys of list items.
func shorten(m map[string]any, inList bool) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case map[string]any:
			out[k] = shorten(v, false)
		case []any:
			out[k] = shortenList(v)
		case string:
			if len(v) > 64 && !(inList && listKeys[k]) {
				sum := sha256.Sum256([]byte(v))
				out[k] = v[:64] + hex.EncodeToString(sum[:])[:8]
			} else {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	return out
}

func shortenList(l []any) []any {
	out := make([]any, 0, len(l))
	for _, v := range l {
		switch v := v.(type) {
		case map[string]any:
			out = append(out, shorten(v, true))
		case []any:
			out = append(out, shortenList(v))
		default:
			out = append(out, v)
		}
	}
	return out
}

// toMap is v's JSON as a map, numbers kept as written.
func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	return m, dec.Decode(&m)
}
