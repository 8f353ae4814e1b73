package digitalocean

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// tagDeletePrefix starts the one-off tags of batched deletes.
const tagDeletePrefix = "hfdo-delete:"

// NewDeleteTag is a tag for batched deletes: the droplets of deleted VMs
// are put under it and deleted by it. It is random, and one process reuses
// it only after a delete by it succeeded (which left no droplet under it),
// so a tag a failed batch or a crashed process left on droplets can never
// reach a droplet tagged later; the droplets left under it go in a later
// batch under another tag.
func NewDeleteTag() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return tagDeletePrefix + hex.EncodeToString(b)
}

// IsDeleteTag reports a NewDeleteTag tag.
func IsDeleteTag(tag string) bool { return strings.HasPrefix(tag, tagDeletePrefix) }
