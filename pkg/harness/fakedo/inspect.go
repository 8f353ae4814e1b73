package fakedo

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/digitalocean/godo"
)

// Errors returned by the inspection and control API.
var (
	ErrUnknownAccount = errors.New("fake: unknown account")
	ErrUnknownDroplet = errors.New("fake: unknown droplet")
)

// withAccount runs f under the account lock of a registered token (the
// auto-account prefix does not create accounts from here).
func (s *Server) withAccount(token string, f func(acc *account)) bool {
	s.accountsMu.RLock()
	acc := s.accounts[token]
	s.accountsMu.RUnlock()
	if acc == nil {
		return false
	}
	acc.mu.Lock()
	defer acc.mu.Unlock()
	f(acc)
	return true
}

// Droplets returns the account's live droplets (not deleted ones still in
// their delete lag), ordered by id, as godo would decode them.
func (s *Server) Droplets(token string) []godo.Droplet {
	var out []godo.Droplet
	s.withAccount(token, func(acc *account) {
		now := s.now()
		for _, id := range acc.order {
			d := acc.droplets[id]
			if d.deleted() {
				continue
			}
			s.refresh(d, now)
			out = append(out, d.wire().toGodo())
		}
	})
	return out
}

// Keys returns the account's SSH keys in creation order.
func (s *Server) Keys(token string) []godo.Key {
	var out []godo.Key
	s.withAccount(token, func(acc *account) {
		for _, id := range acc.keyOrder {
			w := acc.keys[id].wire()
			out = append(out, godo.Key{ID: w.ID, Name: w.Name, Fingerprint: w.Fingerprint, PublicKey: w.PublicKey})
		}
	})
	return out
}

// liveDroplet runs f on a live droplet of the account.
func (s *Server) liveDroplet(token string, id int, f func(d *droplet)) error {
	found := false
	if !s.withAccount(token, func(acc *account) {
		if d := acc.droplets[id]; d != nil && !d.deleted() {
			found = true
			f(d)
		}
	}) {
		return ErrUnknownAccount
	}
	if !found {
		return ErrUnknownDroplet
	}
	return nil
}

// SetDropletPublicIP changes a droplet's public IPv4 (shown once it is not
// "new"). With SSH on, the droplet's SSH server moves to the new address if
// it is loopback and otherwise serves only the private one.
func (s *Server) SetDropletPublicIP(token string, id int, ip string) error {
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is4() {
		return fmt.Errorf("fake: %q is not an IPv4 address", ip)
	}
	return s.liveDroplet(token, id, func(d *droplet) {
		now := s.now()
		s.refresh(d, now)
		d.publicV4 = a.String()
		s.syncSSH(d, now)
	})
}

// SetDropletStatus pins a droplet's status (e.g. "off", "archive", "new",
// "active"); the automatic new→active transition no longer applies to it.
// Turning it active again is a boot for its Guest: SSHDelay and
// CloudInitDelay count again from now.
func (s *Server) SetDropletStatus(token string, id int, status string) error {
	return s.liveDroplet(token, id, func(d *droplet) {
		now := s.now()
		d.setStatus(status, now)
		d.autoBoot = false
		s.syncSSH(d, now)
	})
}

// CreateDropletOutOfBand creates a droplet as if through the DigitalOcean
// console: no rate limit, no droplet limit and no request record. Unknown
// region/size/image slugs get placeholder objects; unknown SSH key
// references are ignored. It returns the zero Droplet for an unknown token.
func (s *Server) CreateDropletOutOfBand(token string, req godo.DropletCreateRequest) godo.Droplet {
	var out godo.Droplet
	s.withAccount(token, func(acc *account) {
		now := s.now()
		spec := s.outOfBandSpec(req)
		ids, authorized, _ := acc.resolveKeys(spec.keyRefs)
		d := s.addDroplets(acc, spec, ids, authorized, now)[0]
		out = d.wire().toGodo()
		s.refresh(d, now)
	})
	return out
}

func (s *Server) outOfBandSpec(req godo.DropletCreateRequest) dropletSpec {
	region, ok := s.catalog.regionBySlug[req.Region]
	if !ok {
		region = godo.Region{Slug: req.Region, Name: req.Region, Available: true}
	}
	size, ok := s.catalog.sizeBySlug[req.Size]
	if !ok {
		size = godo.Size{Slug: req.Size, Available: true}
	}
	imageRef := req.Image.Slug
	if imageRef == "" {
		imageRef = fmt.Sprint(req.Image.ID)
	}
	image, ok := s.catalog.image(imageRef)
	if !ok {
		image = godo.Image{Slug: req.Image.Slug, ID: req.Image.ID, Name: imageRef}
	}
	refs := make([]string, 0, len(req.SSHKeys))
	for _, k := range req.SSHKeys {
		if k.Fingerprint != "" {
			refs = append(refs, k.Fingerprint)
		} else {
			refs = append(refs, fmt.Sprint(k.ID))
		}
	}
	tags, msg := cleanTags(req.Tags)
	if msg != "" {
		tags = req.Tags // the console path does not validate
	}
	return dropletSpec{
		names: []string{req.Name}, region: region, size: size, image: image, keyRefs: refs,
		tags: tags, features: features(createRequest{Backups: req.Backups, IPv6: req.IPv6,
			Monitoring: req.Monitoring, PrivateNetworking: req.PrivateNetworking}),
		ipv6: req.IPv6, userData: req.UserData, vpcUUID: req.VPCUUID,
	}
}

// SSHAddr is publicIP:SSHPort() while the droplet's SSH server is up
// (Options.SSH on, droplet active with a loopback public IP, its Guest has
// brought sshd up). The same server answers at privateIP:SSHPort(). Where
// the droplet's address cannot be bound (see sshPorts.listen) it is
// 127.0.0.1 at a port of the droplet's own.
func (s *Server) SSHAddr(token string, dropletID int) (string, bool) {
	addr := ""
	_ = s.liveDroplet(token, dropletID, func(d *droplet) {
		s.refresh(d, s.now())
		if d.ssh != nil {
			addr = d.ssh.addr(d.publicV4)
		}
	})
	return addr, addr != ""
}

// DropletDetails is what the API does not echo back but tests need to see:
// the keys and user data a droplet was created with.
type DropletDetails struct {
	SSHKeyIDs []int
	UserData  string
}

// Details returns the create-time details of a live droplet.
func (s *Server) Details(token string, dropletID int) (DropletDetails, bool) {
	var out DropletDetails
	found := s.liveDroplet(token, dropletID, func(d *droplet) {
		out = DropletDetails{SSHKeyIDs: append([]int(nil), d.sshKeyIDs...), UserData: d.userData}
	}) == nil
	return out, found
}
