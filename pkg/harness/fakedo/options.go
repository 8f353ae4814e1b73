package fakedo

import (
	"time"

	"github.com/digitalocean/godo"
)

// NoDelay, given as a duration option whose zero value means "use the
// default", asks for no delay at all.
const NoDelay time.Duration = -1

// Defaults applied by New to zero-valued options.
const (
	DefaultBootDelay         = 2 * time.Second
	DefaultDropletLimit      = 25
	DefaultRatePerMinute     = 250
	DefaultRatePerHour       = 5000
	DefaultKeyListPerWindow  = 10
	DefaultKeyListWindow     = 60 * time.Second
	DefaultMaxRequestRecords = 100000
)

// Options configure a Server. The zero value is a usable, DigitalOcean-like
// configuration.
type Options struct {
	// Addr is the listen address; default "127.0.0.1:0" (a random port).
	Addr string
	// Now is the clock for created_at, rate-limit windows, boot and delete
	// timing; default time.Now.
	Now func() time.Time
	// BootDelay is how long a droplet stays "new" before it is "active".
	// Zero means DefaultBootDelay; NoDelay makes it active on the first read
	// after the create response.
	BootDelay time.Duration
	// DeleteLag is how long a deleted droplet keeps appearing in list
	// answers (GET by id is 404 at once), as DigitalOcean's deletes are
	// eventually consistent. Zero means no lag.
	DeleteLag time.Duration
	// RateLimits apply per token.
	RateLimits RateLimits
	// AutoAccountPrefix, when not empty, makes any bearer token starting
	// with it a valid account, created on first use with AutoAccount.
	AutoAccountPrefix string
	AutoAccount       AccountOptions
	// Seed seeds the random source used by fault injection, so a run with
	// the same seed and request order injects the same faults.
	Seed int64
	// SSH starts an SSH server for every active droplet, on its public and
	// its private IPv4 (see SSHAddr, SSHPort, and ssh.go for the commands
	// it answers).
	SSH bool
	// SSHPublicOnly listens on the public IPv4 only: one socket per droplet
	// instead of two, for fleets of thousands within a process's open files.
	SSHPublicOnly bool
	// SSHPort is the one port every droplet's SSH server listens on; 0
	// picks a free port at New (see Server.SSHPort). New panics on a port
	// outside 0..65535.
	SSHPort int
	// Guest is how the operating system of each new droplet behaves (sshd
	// delays, refused keys, cloud-init); the zero value is a healthy image.
	// New panics on an unknown Guest.CloudInit.
	Guest Guest
	// Extra catalog entries, added to (or replacing, by slug) the built-in
	// regions, sizes and images.
	ExtraRegions []godo.Region
	ExtraSizes   []godo.Size
	ExtraImages  []godo.Image
	// MaxRequestRecords bounds the request log kept for Requests (the oldest
	// are dropped); RequestCounts is never truncated. Default
	// DefaultMaxRequestRecords.
	MaxRequestRecords int
}

// RateLimits are per-token sliding-window limits. Zero fields take the
// DigitalOcean defaults; shorten Minute/Hour to make tests fast.
type RateLimits struct {
	// Disabled turns limiting off; the ratelimit headers still report a
	// full budget so clients that pace themselves on them keep going.
	Disabled  bool
	PerMinute int           // default 250
	PerHour   int           // default 5000, reported as ratelimit-limit
	Minute    time.Duration // length of the "minute" window, default 1m
	Hour      time.Duration // length of the "hour" window, default 1h
	// KeyListPerWindow requests to GET /v2/account/keys per KeyListWindow,
	// on top of the general limits (default 10 per 60s).
	KeyListPerWindow int
	KeyListWindow    time.Duration
}

// AccountOptions describe one account (one bearer token).
type AccountOptions struct {
	// DropletLimit is the account's droplet limit; default
	// DefaultDropletLimit.
	DropletLimit int
	// Email is reported by GET /v2/account; default derived from the token
	// hash (never the token).
	Email string
}

func (o Options) withDefaults() Options {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.BootDelay = orDefault(o.BootDelay, DefaultBootDelay)
	if o.DeleteLag < 0 {
		o.DeleteLag = 0
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.MaxRequestRecords <= 0 {
		o.MaxRequestRecords = DefaultMaxRequestRecords
	}
	o.RateLimits = o.RateLimits.withDefaults()
	return o
}

func (r RateLimits) withDefaults() RateLimits {
	if r.PerMinute <= 0 {
		r.PerMinute = DefaultRatePerMinute
	}
	if r.PerHour <= 0 {
		r.PerHour = DefaultRatePerHour
	}
	if r.Minute <= 0 {
		r.Minute = time.Minute
	}
	if r.Hour <= 0 {
		r.Hour = time.Hour
	}
	if r.KeyListPerWindow <= 0 {
		r.KeyListPerWindow = DefaultKeyListPerWindow
	}
	if r.KeyListWindow <= 0 {
		r.KeyListWindow = DefaultKeyListWindow
	}
	return r
}

func (a AccountOptions) withDefaults(tokenHash string) AccountOptions {
	if a.DropletLimit <= 0 {
		a.DropletLimit = DefaultDropletLimit
	}
	if a.Email == "" {
		a.Email = "user-" + tokenHash + "@example.com"
	}
	return a
}

// orDefault maps 0 to def and NoDelay (any negative) to 0.
func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}
