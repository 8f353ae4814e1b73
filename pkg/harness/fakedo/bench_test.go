package fakedo

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/digitalocean/godo"
	"golang.org/x/oauth2"
)

// benchServer holds 1,000 droplets in one account with limits off.
func benchServer(b *testing.B) (*Server, *godo.Client, []int) {
	srv := New(Options{BootDelay: NoDelay, RateLimits: RateLimits{Disabled: true}})
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	srv.AddAccount(testToken, AccountOptions{DropletLimit: 2000})
	ids := make([]int, 0, 1000)
	for i := 0; i < 1000; i++ {
		tag := "bench-" + strconv.Itoa(i%50)
		d := srv.CreateDropletOutOfBand(testToken, godo.DropletCreateRequest{Name: "b" + strconv.Itoa(i),
			Region: "nyc3", Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{tag}})
		ids = append(ids, d.ID)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	hc := &http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: testToken}), Base: tr}}
	c, err := godo.New(hc, godo.SetBaseURL(srv.URL()))
	if err != nil {
		b.Fatal(err)
	}
	return srv, c, ids
}

func BenchmarkGetDroplet(b *testing.B) {
	_, c, ids := benchServer(b)
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := ids[int(n.Add(1))%len(ids)]
			if _, _, err := c.Droplets.Get(context.Background(), id); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkListByTag(b *testing.B) {
	_, c, _ := benchServer(b)
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tag := "bench-" + strconv.Itoa(int(n.Add(1))%50)
			if _, _, err := c.Droplets.ListByTag(context.Background(), tag, &godo.ListOptions{PerPage: 200}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkCreateDelete(b *testing.B) {
	_, c, _ := benchServer(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			d, _, err := c.Droplets.Create(context.Background(), basicCreate("cd"))
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := c.Droplets.Delete(context.Background(), d.ID); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
