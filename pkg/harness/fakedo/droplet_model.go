package fakedo

import (
	"encoding/json"
	"net/netip"
	"slices"
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
	acc        *account
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
	authorized map[string]bool // wire-format public keys allowed to log in
	createdAt  time.Time
	activeAt   time.Time // when a "new" droplet turns "active" on its own
	status     string
	autoBoot   bool // cleared once booted or once a test pins the status
	publicV4   string
	privateV4  string
	publicV6   string
	deletedAt  time.Time // zero while live

	// The guest operating system and its sshd.
	guest            Guest
	activeSince      time.Time // when status last became active
	sshDownClearedAt time.Time // when SetGuest last cleared SSHDown
	sshUpSince       time.Time // when sshd came up; zero while it is down
	changed          chan struct{}
	ssh              *sshd
	wake             *time.Timer // refreshes the droplet at wakeFor
	wakeFor          time.Time
}

func (d *droplet) deleted() bool { return !d.deletedAt.IsZero() }

func (d *droplet) hasTag(tag string) bool { return contains(d.tags, tag) }

// setStatus changes the status, noting when the droplet (re)turns active,
// which restarts its guest's clock as a boot would.
func (d *droplet) setStatus(status string, at time.Time) {
	if status == statusActive && d.status != statusActive {
		d.activeSince = at
	}
	d.status = status
}

// refresh applies the lazy new→active transition and keeps the SSH server
// in step with the droplet. Caller holds the account lock.
func (s *Server) refresh(d *droplet, now time.Time) {
	if d.deleted() {
		return
	}
	if d.autoBoot && d.status == statusNew {
		if now.Before(d.activeAt) {
			s.wakeAt(d, d.activeAt, now)
		} else {
			d.setStatus(statusActive, d.activeAt)
			d.autoBoot = false
		}
	}
	s.syncSSH(d, now)
}

// syncSSH runs an SSH server exactly while the droplet is active and live,
// has a loopback address and its guest has brought sshd up. Caller holds
// the account lock.
func (s *Server) syncSSH(d *droplet, now time.Time) {
	if s.ssh == nil {
		return
	}
	ips := d.loopbackIPs()
	if s.opts.SSHPublicOnly && len(ips) > 1 {
		ips = ips[:1] // public first
	}
	if d.status != statusActive || d.deleted() || d.guest.SSHDown || len(ips) == 0 || s.closed.Load() {
		d.sshUpSince = time.Time{}
		d.stopSSH()
		return
	}
	if d.sshUpSince.IsZero() {
		upAt := d.sshUpAt()
		if now.Before(upAt) {
			s.wakeAt(d, upAt, now)
			return
		}
		d.sshUpSince = upAt
	}
	if d.ssh != nil && !slices.Equal(d.ssh.ips, ips) {
		d.stopSSH()
	}
	if d.ssh == nil {
		// On failure sshd stays down and the next refresh tries again.
		d.ssh, _ = s.ssh.start(s.ports, ips, d.name, liveGuest{s: s, d: d})
	}
}

// loopbackIPs are the droplet's addresses its sshd may listen on, public
// first.
func (d *droplet) loopbackIPs() []string {
	var ips []string
	for _, ip := range []string{d.publicV4, d.privateV4} {
		if isLoopback(ip) {
			ips = append(ips, ip)
		}
	}
	return ips
}

// wakeAt refreshes the droplet at `at` (Options.Now time, waited for in real
// time), so that with SSH on a droplet boots and its sshd comes up without
// waiting for a read. Without SSH everything stays lazy. Caller holds the
// account lock.
func (s *Server) wakeAt(d *droplet, at, now time.Time) {
	if s.ssh == nil || s.closed.Load() || (d.wake != nil && d.wakeFor.Equal(at)) {
		return
	}
	d.stopWake()
	d.wakeFor = at
	d.wake = time.AfterFunc(at.Sub(now), func() {
		d.acc.mu.Lock()
		defer d.acc.mu.Unlock()
		s.refresh(d, s.now())
	})
}

func (d *droplet) stopWake() {
	if d.wake != nil {
		d.wake.Stop()
		d.wake = nil
	}
}

func (d *droplet) stopSSH() {
	if d.ssh != nil {
		d.ssh.close()
		d.ssh = nil
	}
}

// halt stops everything running for the droplet, for delete and Close.
func (d *droplet) halt() {
	d.stopWake()
	d.stopSSH()
	d.sshUpSince = time.Time{}
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
