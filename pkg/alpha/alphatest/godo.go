package alphatest

import (
	"encoding/json"
	"time"
)

// The JSON of godo 1.99's types, which the alpha sent to DigitalOcean and
// stored, raw, in its objects (spec.key, status.key, spec.droplet,
// status.droplet). Newer godo adds fields, so this package keeps its own
// copies of the ones the alpha used.

// keyCreateRequest is godo's KeyCreateRequest: the Key's spec.key, and the
// body of the key create.
type keyCreateRequest struct {
	Name      string `json:"name"`
	PublicKey string `json:"public_key"`
}

// doKey is godo's Key: the Key's status.key.
type doKey struct {
	ID          int    `json:"id,omitempty"`
	Name        string `json:"name,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	PublicKey   string `json:"public_key,omitempty"`
}

// dropletCreateRequest is godo's DropletCreateRequest as the alpha filled
// it: the Droplet's spec.droplet, and the body of the droplet create. The
// alpha never set volumes, vpc_uuid or with_droplet_agent (all omitted
// when empty) and never set tags, which godo sends as null.
type dropletCreateRequest struct {
	Name              string         `json:"name"`
	Region            string         `json:"region"`
	Size              string         `json:"size"`
	Image             createImage    `json:"image"`
	SSHKeys           []createSSHKey `json:"ssh_keys"`
	Backups           bool           `json:"backups"`
	IPv6              bool           `json:"ipv6"`
	PrivateNetworking bool           `json:"private_networking"`
	Monitoring        bool           `json:"monitoring"`
	UserData          string         `json:"user_data,omitempty"`
	Tags              []string       `json:"tags"`
}

// createImage is godo's DropletCreateImage: written as the slug, or the
// ID when there is no slug.
type createImage struct {
	ID   int
	Slug string
}

func (i createImage) MarshalJSON() ([]byte, error) {
	if i.Slug != "" {
		return json.Marshal(i.Slug)
	}
	return json.Marshal(i.ID)
}

// createSSHKey is godo's DropletCreateSSHKey: written as the fingerprint,
// or the ID when there is no fingerprint. The alpha set both, so its
// requests name keys by fingerprint.
type createSSHKey struct {
	ID          int
	Fingerprint string
}

func (k createSSHKey) MarshalJSON() ([]byte, error) {
	if k.Fingerprint != "" {
		return json.Marshal(k.Fingerprint)
	}
	return json.Marshal(k.ID)
}

// doDroplet is godo 1.99's Droplet: the Droplet's status.droplet.
type doDroplet struct {
	ID               int           `json:"id,omitempty"`
	Name             string        `json:"name,omitempty"`
	Memory           int           `json:"memory,omitempty"`
	Vcpus            int           `json:"vcpus,omitempty"`
	Disk             int           `json:"disk,omitempty"`
	Region           *doRegion     `json:"region,omitempty"`
	Image            *doImage      `json:"image,omitempty"`
	Size             *doSize       `json:"size,omitempty"`
	SizeSlug         string        `json:"size_slug,omitempty"`
	BackupIDs        []int         `json:"backup_ids,omitempty"`
	NextBackupWindow *backupWindow `json:"next_backup_window,omitempty"`
	SnapshotIDs      []int         `json:"snapshot_ids,omitempty"`
	Features         []string      `json:"features,omitempty"`
	Locked           bool          `json:"locked,omitempty"`
	Status           string        `json:"status,omitempty"`
	Networks         *networks     `json:"networks,omitempty"`
	Created          string        `json:"created_at,omitempty"`
	Kernel           *kernel       `json:"kernel,omitempty"`
	Tags             []string      `json:"tags,omitempty"`
	VolumeIDs        []string      `json:"volume_ids"`
	VPCUUID          string        `json:"vpc_uuid,omitempty"`
}

type doRegion struct {
	Slug      string   `json:"slug,omitempty"`
	Name      string   `json:"name,omitempty"`
	Sizes     []string `json:"sizes,omitempty"`
	Available bool     `json:"available,omitempty"`
	Features  []string `json:"features,omitempty"`
}

type doImage struct {
	ID            int      `json:"id,omitempty"`
	Name          string   `json:"name,omitempty"`
	Type          string   `json:"type,omitempty"`
	Distribution  string   `json:"distribution,omitempty"`
	Slug          string   `json:"slug,omitempty"`
	Public        bool     `json:"public,omitempty"`
	Regions       []string `json:"regions,omitempty"`
	MinDiskSize   int      `json:"min_disk_size,omitempty"`
	SizeGigaBytes float64  `json:"size_gigabytes,omitempty"`
	Created       string   `json:"created_at,omitempty"`
	Description   string   `json:"description,omitempty"`
	Tags          []string `json:"tags,omitempty"`
	Status        string   `json:"status,omitempty"`
	ErrorMessage  string   `json:"error_message,omitempty"`
}

// doSize is godo 1.99's Size: without the GPU and disk details newer
// versions read.
type doSize struct {
	Slug         string   `json:"slug,omitempty"`
	Memory       int      `json:"memory,omitempty"`
	Vcpus        int      `json:"vcpus,omitempty"`
	Disk         int      `json:"disk,omitempty"`
	PriceMonthly float64  `json:"price_monthly,omitempty"`
	PriceHourly  float64  `json:"price_hourly,omitempty"`
	Regions      []string `json:"regions,omitempty"`
	Available    bool     `json:"available,omitempty"`
	Transfer     float64  `json:"transfer,omitempty"`
	Description  string   `json:"description,omitempty"`
}

type backupWindow struct {
	Start *time.Time `json:"start,omitempty"`
	End   *time.Time `json:"end,omitempty"`
}

type networks struct {
	V4 []networkV4 `json:"v4,omitempty"`
	V6 []networkV6 `json:"v6,omitempty"`
}

type networkV4 struct {
	IPAddress string `json:"ip_address,omitempty"`
	Netmask   string `json:"netmask,omitempty"`
	Gateway   string `json:"gateway,omitempty"`
	Type      string `json:"type,omitempty"`
}

type networkV6 struct {
	IPAddress string `json:"ip_address,omitempty"`
	Netmask   int    `json:"netmask,omitempty"`
	Gateway   string `json:"gateway,omitempty"`
	Type      string `json:"type,omitempty"`
}

type kernel struct {
	ID      int    `json:"id,omitempty"`
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// ipv4 is the droplet's address of type t ("public" or "private"), as the
// alpha picked them for the VM's status.
func (d *doDroplet) ipv4(t string) string {
	if d.Networks == nil {
		return ""
	}
	ip := ""
	for _, n := range d.Networks.V4 {
		if n.Type == t {
			ip = n.IPAddress // the alpha kept the last one of each type
		}
	}
	return ip
}
