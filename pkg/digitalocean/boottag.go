package digitalocean

import (
	"strconv"
	"strings"
	"time"
)

const tagBootPrefix = "hfdo-boot:"

// BootTag names a boot bucket of the installation of installationTag
// (see InstallationTag): the seq-th opened at opened. Droplets are created
// with their bucket's tag, so that the ones still booting can be read with
// a one-page list of a few recent buckets rather than a list of the whole
// fleet (at 10,000 droplets on a token, 50 pages).
func BootTag(installationTag string, opened time.Time, seq int) string {
	installation := strings.TrimPrefix(installationTag, tagInstallationPrefix)
	return truncateTag(tagBootPrefix + strconv.FormatInt(opened.UnixMilli(), 10) + "-" + strconv.Itoa(seq) + ":" + installation)
}

// IsBootTag reports a BootTag.
func IsBootTag(tag string) bool { return strings.HasPrefix(tag, tagBootPrefix) }
