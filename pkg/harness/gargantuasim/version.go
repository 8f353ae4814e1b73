package gargantuasim

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Gargantua release line. The API types are the same in all of
// them; what differs is who labels a VM for its provisioner, which status
// writes retry, and who deletes VMs and strips their finalizers.
type Version int

const (
	// V1_0 is the go.mod pseudo-version (v1.0.1-0.20230714095352-ed48c8682797):
	// only on-demand (claim) VMs are labelled for a provisioner, and no status
	// write after a create retries.
	V1_0 Version = iota
	// V3_0 is v3.0.1-rc0: VM set VMs are labelled too and the claim path
	// retries its status write on conflict. Nothing deletes a tainted
	// provision=false VM; the garbage collector is the only deleter.
	V3_0
	// V3_3 is v3.1.0 to v3.3.x: every VM status write goes through its VM
	// service, which retries on conflict, and its terraform service deletes
	// every tainted VM and strips the finalizers of every deleting VM.
	V3_3
)

// ParseVersion reads "v1.0", "v3.0" or "v3.3", or any release of those lines
// such as "v3.0.1-rc0", "v3.1", "v3.2.0" or "v3.3.2" (the "v" is optional).
func ParseVersion(s string) (Version, error) {
	major, minor, ok := majorMinor(s)
	switch {
	case ok && major == 1 && minor == 0:
		return V1_0, nil
	case ok && major == 3 && minor == 0:
		return V3_0, nil
	case ok && major == 3 && minor >= 1 && minor <= 3:
		return V3_3, nil
	}
	return 0, fmt.Errorf("unknown Gargantua version %q: want v1.0, v3.0 (v3.0.1-rc0) or v3.1.0 to v3.3.x", s)
}

// majorMinor reads "v3.0.1-rc0" as 3, 0.
func majorMinor(s string) (major, minor int, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(s, "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	minorPart, _, _ := strings.Cut(parts[1], "-")
	major, errMajor := strconv.Atoi(parts[0])
	minor, errMinor := strconv.Atoi(minorPart)
	return major, minor, errMajor == nil && errMinor == nil
}

func (v Version) String() string {
	switch v {
	case V1_0:
		return "v1.0"
	case V3_0:
		return "v3.0"
	case V3_3:
		return "v3.3"
	}
	return fmt.Sprintf("Version(%d)", int(v))
}

// MarshalText and UnmarshalText make a Version usable with flag.TextVar.
func (v Version) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

func (v *Version) UnmarshalText(text []byte) error {
	parsed, err := ParseVersion(string(text))
	if err != nil {
		return err
	}
	*v = parsed
	return nil
}

// labelsVMSetVMs: v3.0.1-rc0 ("Better labeling for 3rd party provisioners")
// gave VM set VMs the provisioner label, as claim VMs already had.
func (v Version) labelsVMSetVMs() bool { return v >= V3_0 }

// retriesClaimStatus: from v3.0.1-rc0 on, the claim path retries the status
// write that follows the create.
func (v Version) retriesClaimStatus() bool { return v >= V3_0 }

// retriesVMSetStatus: from v3.1 on, the VM set path writes status through the
// VM service too, which retries on conflict.
func (v Version) retriesVMSetStatus() bool { return v >= V3_3 }

// retriesVMSetFinalizer: from v3.1 on, the finalizer of a deleting VM is
// removed through the VM service, which retries on conflict; before, one
// failed UPDATE leaves the VM for good (removeVMSetFinalizer).
func (v Version) retriesVMSetFinalizer() bool { return v >= V3_3 }

// runsTerraformService: from v3.1 on, the terraform service deletes tainted
// VMs and empties the finalizers of deleting ones, whoever provisions them.
func (v Version) runsTerraformService() bool { return v >= V3_3 }

// provisionerOf is the Environment's third-party provisioner as this version
// reads the annotation: the go.mod version takes it even when empty.
func (v Version) provisionerOf(annotations map[string]string) (string, bool) {
	p, ok := annotations[ProvisionerKey]
	if v == V1_0 {
		return p, ok
	}
	return p, ok && p != ""
}
