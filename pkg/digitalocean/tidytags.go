package digitalocean

import (
	"strconv"
	"strings"
	"time"
)

// IsTidyTag reports a tag of ours that names one VM, multi-create, boot
// bucket, warm pool or batched delete: it outlives its last droplet in
// DigitalOcean (a tag stays in the account when nothing carries it), so it
// is deleted once nothing carries or needs it. Boot buckets name their
// installation and only installationTag's count; the others hold a UID or a
// random part, so an empty one that nothing of this installation needs is
// no other installation's either once it has stayed empty (see the
// sweeper's tag tidy). The installation, namespace and managed tags stay.
func IsTidyTag(tag, installationTag string) bool {
	for _, prefix := range []string{tagVMPrefix, tagVMNamePrefix, tagBatchPrefix, tagPoolPrefix, tagDeletePrefix} {
		if strings.HasPrefix(tag, prefix) {
			return true
		}
	}
	opened, seq, ok := parseBootTag(tag)
	return ok && BootTag(installationTag, opened, seq) == tag
}

// BootTagOpened is when the boot bucket tag names was opened.
func BootTagOpened(tag string) (time.Time, bool) {
	opened, _, ok := parseBootTag(tag)
	return opened, ok
}

// parseBootTag reads a BootTag's opening time and sequence number.
func parseBootTag(tag string) (time.Time, int, bool) {
	rest, ok := strings.CutPrefix(tag, tagBootPrefix)
	if !ok {
		return time.Time{}, 0, false
	}
	stamp, _, _ := strings.Cut(rest, ":")
	ms, seq, ok := strings.Cut(stamp, "-")
	millis, err := strconv.ParseInt(ms, 10, 64)
	n, serr := strconv.Atoi(seq)
	if !ok || err != nil || serr != nil {
		return time.Time{}, 0, false
	}
	return time.UnixMilli(millis), n, true
}

// VMNameTag is the tag that names a VM's droplet by the VM's name.
func VMNameTag(vmName string) string { return truncateTag(tagVMNamePrefix + sanitizeTag(vmName)) }
