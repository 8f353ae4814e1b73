package digitalocean

import (
	"strconv"
	"strings"
	"time"
)

const tagBootPrefix = "hfdo-boot:"

// BootTag names the time bucket of period a droplet created at t falls in,
// for the installation of installationTag (see InstallationTag). Droplets are created with it, so that the ones
// still booting can be read with a list of a few recent buckets rather than
// of the whole fleet: at 10,000 droplets on a token that is 50 pages a
// round, while a bucket of 20 seconds holds at most a few hundred.
func BootTag(installationTag string, t time.Time, period time.Duration) string {
	bucket := t.Truncate(period).Unix()
	installation := strings.TrimPrefix(installationTag, tagInstallationPrefix)
	return truncateTag(tagBootPrefix + strconv.FormatInt(bucket, 10) + ":" + installation)
}

// IsBootTag reports a BootTag.
func IsBootTag(tag string) bool { return strings.HasPrefix(tag, tagBootPrefix) }
