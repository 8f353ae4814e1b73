package config

import "time"

// The config keys an operator sets in environment_specifics or template_mapping.
const (
	KeyRegion            = "region"
	KeyImage             = "image"
	KeySize              = "size"
	KeyToken             = "token"
	KeyTokenSecret       = "token-secret"
	KeyBackups           = "backups"
	KeyIPv6              = "ipv6"
	KeyMonitoring        = "monitoring"
	KeyPrivateNetworking = "private_networking"
	KeyUserData          = "user_data"
	KeyTags              = "tags"
	KeyVPCUUID           = "vpc_uuid"
	KeySSHUsername       = "ssh_username"
	KeySSHKeyType        = "ssh_key_type"
	// KeySSHKeyScope is "vm" (a key pair per VM, the default) or
	// "environment" (one for all VMs of the Environment).
	KeySSHKeyScope = "ssh_key_scope"
	// KeyReadyCheck is what "running" waits for beyond DigitalOcean's
	// "active": ssh (the default), cloud-init or none.
	KeyReadyCheck = "ready_check"
	// KeyReadyTimeout bounds that wait, from the droplet's creation.
	KeyReadyTimeout = "ready_timeout"
	// KeySSHAddress is which droplet address the check dials: public or private.
	KeySSHAddress = "ssh_address"
	// KeyWarmPool is how many booted, unclaimed droplets of a template to
	// keep while an event that uses the Environment is active, or "auto".
	KeyWarmPool = "warm_pool"
	// KeyWarmPoolMax bounds an auto-sized pool (warm_pool: auto).
	KeyWarmPoolMax = "warm_pool_max"
)

// WarmPoolAuto is the warm_pool value that sizes the pool from its arrivals.
const WarmPoolAuto = "auto"

// DefaultWarmPoolMax bounds an auto-sized pool when warm_pool_max is not
// set: a workshop start of 20 users at once, at most 20 idle droplets.
const DefaultWarmPoolMax = 20

// MaxWarmPool keeps a typo (5000 for 50) from booting a fleet.
const MaxWarmPool = 100

// DefaultReadyTimeout covers a droplet's boot and a typical cloud-init run.
const DefaultReadyTimeout = 10 * time.Minute

// MaxReadyTimeout keeps a forgotten setting from holding a VM for days.
const MaxReadyTimeout = 24 * time.Hour

// Values of ssh_key_scope.
const (
	KeyScopeVM          = "vm"
	KeyScopeEnvironment = "environment"
)

// knownKeys also lists keys that Gargantua or other provisioners put in the
// same maps, so they are not reported as typos.
var knownKeys = map[string]bool{
	KeyRegion: true, KeyImage: true, KeySize: true, KeyToken: true, KeyTokenSecret: true,
	KeyBackups: true, KeyIPv6: true, KeyMonitoring: true, KeyPrivateNetworking: true,
	KeyUserData: true, KeyTags: true, KeyVPCUUID: true, KeySSHUsername: true,
	KeySSHKeyType: true, KeySSHKeyScope: true, KeyReadyCheck: true, KeyReadyTimeout: true, KeySSHAddress: true,
	KeyWarmPool: true, KeyWarmPoolMax: true,
	"cloud_config": true, "name": true, "ssh_key_name": true, "webinterfaces": true,
}

// MaxUserDataBytes is DigitalOcean's limit on user_data.
const MaxUserDataBytes = 64 * 1024

// DefaultSSHUsername is how DigitalOcean's images let you in.
const DefaultSSHUsername = "root"

// TokenSecretKey is the Secret key that holds the token, as the alpha defined it.
const TokenSecretKey = "token"

// Slug length bounds. DigitalOcean documents none; its region and size slugs
// are under 30 characters and its image slugs (Marketplace ones included)
// under 64, so these only keep junk out of conditions and requests.
const (
	MaxRegionSlugLen = 64
	MaxSizeSlugLen   = 64
	MaxImageSlugLen  = 128
)
