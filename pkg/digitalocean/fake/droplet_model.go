package fake

import (
	"encoding/json"
	"net/netip"
	"time"

	"github.com/digitalocean/godo"
)

const (
	statusNew    = "new"
	statusActive = "active"
)

// droplet is the fake's record of one droplet. It is guarded by its
// account's mutex.
type droplet struct {
	id         int
	name       string
	region     godo.Region
	size       godo.Size
	image      godo.Image
	tags       []string
	features   []string
	vpcUUID    string
	userData   string
	sshKeyIDs  []int
	authorized map[string]bool // wire-format public keys allowed to log in as root
	createdAt  time.Time
	activeAt   time.Time // when a "new" droplet turns "active" on its own
	status     string
	autoBoot   bool // cleared once booted or once a test pins the status
	publicV4   string
	privateV4  string
	publicV6   string
	deletedAt  time.Time // zero while live
	ssh        *sshListener
}

func (d *droplet) deleted() bool { return !d.deletedAt.IsZero() }

func (d *droplet) hasTag(tag string) bool { return contains(d.tags, tag) }

// refresh applies the lazy new→active transition and keeps the SSH server
// in step with the droplet. Caller holds the account lock.
func (s *Server) refresh(d *droplet, now time.Time) {
	if d.deleted() {
		return
	}
	if d.autoBoot && d.status == statusNew && !now.Before(d.activeAt) {
		d.status = statusActive
		d.autoBoot = false
	}
	s.syncSSH(d)
}

// syncSSH runs an SSH server exactly while the droplet is active, live and
// has a loopback public address.
func (s *Server) syncSSH(d *droplet) {
	if s.ssh == nil {
		return
	}
	want := d.status == statusActive && !d.deleted() && isLoopback(d.publicV4) && !s.closed.Load()
	switch {
	case want && d.ssh == nil:
		if l, err := s.ssh.listen(d.publicV4, d.name, d.authorized); err == nil {
			d.ssh = l
		}
	case !want && d.ssh != nil:
		d.stopSSH()
	case want && d.ssh != nil && d.ssh.ip != d.publicV4:
		d.stopSSH()
		s.syncSSH(d)
	}
}

func (d *droplet) stopSSH() {
	if d.ssh != nil {
		d.ssh.close()
		d.ssh = nil
	}
}

func isLoopback(ip string) bool {
	a, err := netip.ParseAddr(ip)
	return err == nil && a.IsLoopback()
}

// Wire shapes. godo's own types use omitempty on the network lists, but
// DigitalOcean sends "networks":{"v4":[],"v6":[]} for a new droplet, so the
// fake encodes its own structs.
type wireDroplet struct {
	ID               int          `json:"id"`
	Name             string       `json:"name"`
	Memory           int          `json:"memory"`
	Vcpus            int          `json:"vcpus"`
	Disk             int          `json:"disk"`
	Locked           bool         `json:"locked"`
	Status           string       `json:"status"`
	Kernel           *godo.Kernel `json:"kernel"`
	CreatedAt        string       `json:"created_at"`
	Features         []string     `json:"features"`
	BackupIDs        []int        `json:"backup_ids"`
	NextBackupWindow *struct{}    `json:"next_backup_window"`
	SnapshotIDs      []int        `json:"snapshot_ids"`
	Image            godo.Image   `json:"image"`
	VolumeIDs        []string     `json:"volume_ids"`
	Size             godo.Size    `json:"size"`
	SizeSlug         string       `json:"size_slug"`
	Networks         wireNetworks `json:"networks"`
	Region           godo.Region  `json:"region"`
	Tags             []string     `json:"tags"`
	VPCUUID          string       `json:"vpc_uuid"`
}

type wireNetworks struct {
	V4 []wireNetworkV4 `json:"v4"`
	V6 []wireNetworkV6 `json:"v6"`
}

type wireNetworkV4 struct {
	IPAddress string `json:"ip_address"`
	Netmask   string `json:"netmask"`
	Gateway   string `json:"gateway"`
	Type      string `json:"type"`
}

type wireNetworkV6 struct {
	IPAddress string `json:"ip_address"`
	Netmask   int    `json:"netmask"`
	Gateway   string `json:"gateway"`
	Type      string `json:"type"`
}

// wire renders the droplet as DigitalOcean would. Networks appear once the
// droplet has left "new"; the private address is listed first, as real DO
// may do, so clients must select by type.
func (d *droplet) wire() wireDroplet {
	nets := wireNetworks{V4: []wireNetworkV4{}, V6: []wireNetworkV6{}}
	if d.status != statusNew {
		nets.V4 = append(nets.V4,
			wireNetworkV4{IPAddress: d.privateV4, Netmask: "255.255.240.0", Gateway: "", Type: "private"},
			wireNetworkV4{IPAddress: d.publicV4, Netmask: "255.255.0.0", Gateway: "127.100.0.254", Type: "public"},
		)
		if d.publicV6 != "" {
			nets.V6 = append(nets.V6, wireNetworkV6{IPAddress: d.publicV6, Netmask: 64, Gateway: "2001:db8::1", Type: "public"})
		}
	}
	return wireDroplet{
		ID: d.id, Name: d.name, Memory: d.size.Memory, Vcpus: d.size.Vcpus, Disk: d.size.Disk,
		Status:    d.status,
		CreatedAt: d.createdAt.UTC().Format(time.RFC3339),
		Features:  nonNil(d.features), BackupIDs: []int{}, SnapshotIDs: []int{},
		Image: d.image, VolumeIDs: []string{}, Size: d.size, SizeSlug: d.size.Slug,
		Networks: nets, Region: d.region, Tags: nonNil(d.tags), VPCUUID: d.vpcUUID,
	}
}

// toGodo converts through JSON so inspection returns exactly what a godo
// client would decode.
func (w wireDroplet) toGodo() godo.Droplet {
	var out godo.Droplet
	b, _ := json.Marshal(w)
	_ = json.Unmarshal(b, &out)
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
