package droplet

import (
	"testing"
	"time"
)

// A bucket never holds more than a page, so its list is one request.
func TestBootBucketHoldsOnePage(t *testing.T) {
	b := newBootBuckets("hfdo-install:test", time.Hour)
	counts := map[string]int{}
	for range 95 {
		counts[b.take(7)] += 7
	}
	for tag, n := range counts {
		if n > bootBucketSize {
			t.Errorf("bucket %s holds %d droplets, more than a page (%d)", tag, n, bootBucketSize)
		}
	}
	if len(counts) < 665/bootBucketSize+1 {
		t.Errorf("665 droplets in %d buckets", len(counts))
	}
}

// A bucket is closed after its period even when it holds few droplets.
func TestBootBucketEndsWithItsPeriod(t *testing.T) {
	b := newBootBuckets("hfdo-install:test", time.Millisecond)
	first := b.take(1)
	time.Sleep(bootBucketPeriods*time.Millisecond + time.Millisecond)
	if b.take(1) == first {
		t.Error("a bucket outlived its period")
	}
}
