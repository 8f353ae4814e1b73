package droplet

import (
	"sync"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// bootBucketSize is a list page: a bucket's list is one request.
const bootBucketSize = 200

// bootBucketPeriods is a bucket's longest life in boot resync periods, so
// that a quiet installation's bucket does not gather droplets for hours
// and a bucket's droplets boot at about the same time.
const bootBucketPeriods = 20

// bootBuckets hands out boot tags (digitalocean.BootTag): a new bucket
// once the current one holds a page of droplets or has been open for its
// period, whichever comes first. A multi-create's droplets share one.
type bootBuckets struct {
	installationTag string
	period          time.Duration

	mu     sync.Mutex
	tag    string
	opened time.Time
	count  int
	seq    int
}

// BootBucketLife is how long a bucket may be handed out, at bootResync.
func BootBucketLife(bootResync time.Duration) time.Duration { return bootBucketPeriods * bootResync }

func newBootBuckets(installationTag string, bootResync time.Duration) *bootBuckets {
	return &bootBuckets{installationTag: installationTag, period: BootBucketLife(bootResync)}
}

// take returns the tag for n droplets about to be created; "" from a nil
// bootBuckets (a handler made without one, in tests).
func (b *bootBuckets) take(n int) string {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if b.tag == "" || now.Sub(b.opened) >= b.period || b.count+n > bootBucketSize {
		b.seq++
		b.tag = digitalocean.BootTag(b.installationTag, now, b.seq)
		b.opened, b.count = now, 0
	}
	b.count += n
	return b.tag
}

// nonEmpty is tag as a list, empty for "".
func nonEmpty(tag string) []string {
	if tag == "" {
		return nil
	}
	return []string{tag}
}
