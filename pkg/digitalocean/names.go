package digitalocean

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

const (
	// TagManaged is on everything this provisioner makes.
	TagManaged = "hobbyfarm-provisioner"
	// Tag prefixes; DigitalOcean tags allow only [a-zA-Z0-9_:-].
	tagInstallationPrefix = "hfdo-install:"
	tagNamespacePrefix    = "hfdo-ns:"
	tagVMPrefix           = "hfdo-vm:"
	tagVMNamePrefix       = "hfdo-vmname:"
	tagBatchPrefix        = "hfdo-batch:"
	tagPoolPrefix         = "hfdo-pool:"
	// reservedTagPrefix starts every identifying tag but TagManaged.
	reservedTagPrefix = "hfdo-"
	maxTagLength      = 255
	maxHostnameLabel  = 63
)

// VMTag identifies the one droplet of a VM by the VM's UID, which is unique
// forever, so a lookup by it can never adopt another VM's droplet.
func VMTag(vmUID string) string { return tagVMPrefix + vmUID }

// IsVMTag reports a VMTag.
func IsVMTag(tag string) bool { return strings.HasPrefix(tag, tagVMPrefix) }

// PlaceTags are the installation and namespace tags among tags: a droplet
// found by its name is this installation's, in that namespace, only if it
// carries both.
func PlaceTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		if strings.HasPrefix(t, tagInstallationPrefix) || strings.HasPrefix(t, tagNamespacePrefix) {
			out = append(out, t)
		}
	}
	return out
}

// IsPoolTag reports a PoolTag.
func IsPoolTag(tag string) bool { return strings.HasPrefix(tag, tagPoolPrefix) }

// PoolTag marks a warm-pool droplet with its WarmPool's UID, so the orphan
// sweep can tell a droplet of a live pool from one whose pool is gone.
func PoolTag(poolUID string) string { return tagPoolPrefix + poolUID }

// PoolUIDOfTag is the WarmPool UID a PoolTag names, if tag is one.
func PoolUIDOfTag(tag string) (string, bool) { return strings.CutPrefix(tag, tagPoolPrefix) }

// InstallationTag marks everything one installation of the controller makes.
func InstallationTag(installationID string) string {
	return truncateTag(tagInstallationPrefix + sanitizeTag(installationID))
}

// NamespaceTag marks what an installation makes for one namespace's VMs.
func NamespaceTag(namespace string) string {
	return truncateTag(tagNamespacePrefix + sanitizeTag(namespace))
}

// DropletTags are the tags that identify a VM's droplet to this controller
// (a Droplet's spec.tags), followed by extra ones; its create sends
// SharedTags of them. Extra tags in the identifying namespace (see
// IsReservedTag) are dropped: a droplet carrying another VM's hfdo-vm tag
// would be adopted by that VM or deleted with it, and another
// installation's tag would make its orphan sweep claim the droplet.
func DropletTags(installationID, namespace, vmName, vmUID string, extra []string) []string {
	tags := []string{
		TagManaged,
		InstallationTag(installationID),
		NamespaceTag(namespace),
		VMNameTag(vmName),
		VMTag(vmUID),
	}
	return appendUnreserved(tags, extra)
}

// PoolDropletTags are a warm pool member's tags: those of a VM's droplet
// but the VM name, with identity (a fresh UUID, so adopt-by-tag recovery
// works as for a VM) in the VM tag, and the pool's tag.
func PoolDropletTags(installationID, namespace, identity, poolUID string, extra []string) []string {
	tags := []string{
		TagManaged,
		InstallationTag(installationID),
		NamespaceTag(namespace),
		VMTag(identity),
		PoolTag(poolUID),
	}
	return appendUnreserved(tags, extra)
}

func appendUnreserved(tags, extra []string) []string {
	for _, t := range extra {
		if !IsReservedTag(t) {
			tags = append(tags, t)
		}
	}
	return tags
}

// BatchTag marks the droplets of one multi-create request. DigitalOcean
// gives every droplet of such a request the same tags, so they cannot carry
// their VMs' tags; this one, recorded on each Droplet before the request is
// sent, finds them again by name when the answer is lost.
func BatchTag(batchID string) string { return tagBatchPrefix + sanitizeTag(batchID) }

// IsBatchTag reports a BatchTag.
func IsBatchTag(tag string) bool { return strings.HasPrefix(tag, tagBatchPrefix) }

// SharedTags are tags without the ones naming a single VM: those a VM's
// droplet is created with, alone or ten at a time.
func SharedTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		if !strings.HasPrefix(t, tagVMPrefix) && !strings.HasPrefix(t, tagVMNamePrefix) {
			out = append(out, t)
		}
	}
	return out
}

// IsReservedTag reports a tag that only the provisioner may set. Case is
// ignored, in case DigitalOcean matches tags that way.
func IsReservedTag(tag string) bool {
	lower := strings.ToLower(tag)
	return lower == TagManaged || strings.HasPrefix(lower, reservedTagPrefix)
}

// DropletName is a valid hostname derived from the VM name. Names longer than
// a hostname label are shortened deterministically with a hash suffix.
func DropletName(vmName string) string {
	name := strings.ToLower(vmName)
	name = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			return r
		}
		return '-'
	}, name)
	name = strings.Trim(name, "-")
	if name == "" {
		name = "vm"
	}
	if name == strings.ToLower(vmName) && len(name) <= maxHostnameLabel {
		return name
	}
	sum := sha256.Sum256([]byte(vmName))
	suffix := "-" + hex.EncodeToString(sum[:])[:8]
	if len(name) > maxHostnameLabel-len(suffix) {
		name = strings.TrimRight(name[:maxHostnameLabel-len(suffix)], "-")
	}
	return name + suffix
}

// KeyName is the SSH key's name in DigitalOcean.
func KeyName(namespace, vmName string) string {
	return "hobbyfarm-" + namespace + "-" + vmName
}

func sanitizeTag(s string) string {
	return strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' || r == '_' || r == ':' {
			return r
		}
		return '_'
	}, s)
}

func truncateTag(tag string) string {
	if len(tag) > maxTagLength {
		return tag[:maxTagLength]
	}
	return tag
}
