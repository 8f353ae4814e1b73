package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

// tidyBound is how long, simulated, the benchmark waits after an event's
// end for the controller to delete the tags of ours that the event left
// empty: the tidy waits a minute for the deletes to pause and a minute for
// each tag to stay empty. maxTidyPerVM is what the tidy may cost per
// deleted VM: an event leaves its multi-creates', boot buckets' and
// batched deletes' tags, none per VM.
const (
	tidyBound    = 30 * time.Minute
	maxTidyPerVM = 0.3
)

// tagRoutes are the tag tidy's requests.
var tagRoutes = []string{fakedo.RouteListTags, fakedo.RouteGetTag, fakedo.RouteDeleteTag}

// emptyTagsOfOurs counts the fake's tags of this installation's kinds that
// no droplet carries (the installation ID is the namespace).
func (s *scenario) emptyTagsOfOurs() int {
	n := 0
	for _, tag := range s.do.Tags(s.token) {
		if tag.Droplets == 0 && digitalocean.IsTidyTag(tag.Name, digitalocean.InstallationTag(s.ns)) {
			n++
		}
	}
	return n
}

// waitTidy waits, after the event end's window, until no tag of ours is
// left empty, and records how long that took and what it cost. The
// baseline does not wait: it stands for controllers that leave tags.
func (s *scenario) waitTidy(ctx context.Context) error {
	e := &s.res.EventEnd
	e.TagsAtEnd, e.TidySeconds = s.emptyTagsOfOurs(), Num(nan)
	if s.mode != ModeOurs {
		e.TagsLeft = e.TagsAtEnd
		return nil
	}
	e.TagsLeft = e.TagsAtEnd
	var err error
	e.TidySeconds, e.TidyRequests, err = s.countDownAfterEnd(ctx, afterEnd{what: "empty tags of ours", bound: tidyBound,
		routes: tagRoutes, left: &e.TagsLeft, count: s.emptyTagsOfOurs})
	if err != nil {
		return err
	}
	s.logf("tag tidy: %d empty tags of ours at the event end, %d left after %s s (simulated), %d tag requests",
		e.TagsAtEnd, e.TagsLeft, formatValue("%.0f", float64(e.TidySeconds)), e.TidyRequests)
	return nil
}

// tidyTarget: an event leaves no empty tag of ours in the account.
func tidyTarget(ours *Result) Target {
	return check(fmt.Sprintf("after the event end at N=1000 (ours): no empty tag of ours left at DO within %v simulated, ≤ %g tag requests per deleted VM", tidyBound, maxTidyPerVM),
		[]*Result{ours}, fmt.Sprintf("needs ours at N=%d", targetN), func() (bool, string) {
			e := &ours.EventEnd
			ok := e.VMs > 0 && e.TagsLeft == 0 && float64(e.TidyRequests) <= maxTidyPerVM*float64(e.VMs)
			return ok, fmt.Sprintf("%d empty at the end of the deletes, %d left after %s s, %d tag requests",
				e.TagsAtEnd, e.TagsLeft, formatValue("%.0f", float64(e.TidySeconds)), e.TidyRequests)
		})
}
