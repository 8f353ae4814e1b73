// Package alphatest recreates, for tests, what a running installation of
// the original alpha provisioner leaves in a cluster and at DigitalOcean,
// so that an upgrade test can install this project over it and check the
// takeover.
//
// Everything here is the alpha's behaviour as read from its source
// (module github.com/ebauman/hf-provisioner-digitalocean, built on baaah,
// crder and godo 1.99), written with plain clients:
//
//   - CRDs and InstallCRDs: its Droplet and Key CRDs, created and updated
//     the way its controller does at start.
//   - Provision: one VM's Secret, Key and Droplet objects, its DigitalOcean
//     key and droplet, and what it writes to the VM; VMOptions add the
//     alpha's own defects (a rewritten key-pair Secret, an unrecorded
//     duplicate DigitalOcean key).
//   - Orphan: the VM gone while the alpha was stopped, leaving its Droplet
//     and Key deleting, held by its finalizers, and the droplet and key
//     still at DigitalOcean.
//
// The VM itself, its Environment and template are the test's to make (see
// pkg/harness/gargantuasim); this package adds only what the alpha adds.
package alphatest
