package droplet

import (
	"slices"
	"testing"

	"github.com/digitalocean/godo"
)

// Room made for a token goes to its refused creates first refused first,
// one per droplet deleted; another token's line is not touched; one
// refused again keeps its place, and one created or gone leaves the line.
func TestLimitLinesLetGoFirstRefusedFirst(t *testing.T) {
	var enqueued []string
	w := newLimitWaits(func(key string) { enqueued = append(enqueued, key) })
	a, b := &godo.Client{}, &godo.Client{}
	for _, key := range []string{"ns/1", "ns/2", "ns/3"} {
		w.wait(a, key)
	}
	w.wait(b, "ns/other")

	if waiting, free, first := w.state("ns/1"); !waiting || free || !first {
		t.Fatalf("ns/1: waiting %v, free %v, first %v; want waiting first, not free", waiting, free, first)
	}
	if waiting, _, first := w.state("ns/2"); !waiting || first {
		t.Fatalf("ns/2: waiting %v, first %v; want waiting behind ns/1", waiting, first)
	}

	w.freed(a, 2)
	if !slices.Equal(enqueued, []string{"ns/1", "ns/2"}) {
		t.Fatalf("let go %v, want ns/1 and ns/2", enqueued)
	}
	w.wait(a, "ns/1") // refused again: room was taken elsewhere
	w.done("ns/2")    // created
	enqueued = nil
	w.freed(a, 1)
	if !slices.Equal(enqueued, []string{"ns/1"}) {
		t.Fatalf("let go %v, want ns/1 again, ahead of ns/3", enqueued)
	}
	if waiting, _, _ := w.state("ns/2"); waiting {
		t.Error("ns/2 still waits after its create")
	}
	if _, free, _ := w.state("ns/other"); free {
		t.Error("another token's Droplet was let go")
	}
	if waiting, free, first := w.state("ns/unknown"); waiting || free || first {
		t.Error("a Droplet never refused is in a line")
	}
}
