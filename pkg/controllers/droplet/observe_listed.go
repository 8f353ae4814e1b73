package droplet

import "github.com/digitalocean/godo"

// listedDroplet is what the controller reads of a listed droplet
// (observeFields, changedIDs, bootTimes.noteLists). A listCache keeps every
// droplet of every token, and each boot bucket's list for minutes besides:
// 20,000 droplets at once while a large installation builds up, each about
// 250 bytes here against about 1 KiB as a godo.Droplet holding its state
// alone (and 4 KiB as godo decodes a whole droplet).
type listedDroplet struct {
	observedState
	id                        int
	created, region, size     string
	priceHourly, priceMonthly float64
	// carried: the list lacked it and holds the previous list's view (see
	// carryOver).
	carried bool
}

func listed(d *godo.Droplet) listedDroplet {
	l := listedDroplet{observedState: dropletState(d), id: d.ID, created: d.Created}
	if d.Region != nil {
		l.region = d.Region.Slug
	}
	if d.Size != nil {
		l.size, l.priceHourly, l.priceMonthly = d.Size.Slug, d.Size.PriceHourly, d.Size.PriceMonthly
	}
	return l
}

// droplet is the listed droplet as godo's type, for the status to be read
// from as from any other answer of DigitalOcean's.
func (l *listedDroplet) droplet() *godo.Droplet {
	d := &godo.Droplet{ID: l.id, Status: l.status, Created: l.created, Networks: &godo.Networks{}}
	if l.public4 != "" {
		d.Networks.V4 = append(d.Networks.V4, godo.NetworkV4{IPAddress: l.public4, Type: "public"})
	}
	if l.private4 != "" {
		d.Networks.V4 = append(d.Networks.V4, godo.NetworkV4{IPAddress: l.private4, Type: "private"})
	}
	if l.public6 != "" {
		d.Networks.V6 = append(d.Networks.V6, godo.NetworkV6{IPAddress: l.public6, Type: "public"})
	}
	if l.region != "" {
		d.Region = &godo.Region{Slug: l.region}
	}
	if l.size != "" {
		d.Size = &godo.Size{Slug: l.size, PriceHourly: l.priceHourly, PriceMonthly: l.priceMonthly}
	}
	return d
}
