// Package controllers holds Set, what every controller's Register is given;
// its subpackages are the controllers, wired together by pkg/app. How the
// code is laid out, to find where a change goes:
//
// A HobbyFarm VirtualMachine becomes objects of ours, each becomes a
// DigitalOcean resource, and the droplet's state flows back to the VM:
//
//	VirtualMachine → key-pair Secret + Key + Droplet → SSH key + droplet
//
// Which package owns which object and state:
//   - virtualmachine owns the VM's side: it applies the Secrets (key pair,
//     copy of a plain-text token), the Key and the Droplet (or claims a warm
//     pool's droplet), mirrors the Droplet's status into the VM's, and holds
//     the VM's finalizer until its Droplet and Key are gone.
//   - droplet owns Droplet objects and their droplets: create (batched),
//     refresh, the reachability check (pkg/sshprobe), delete; Droplet status.
//   - key registers a Key's public key with DigitalOcean and retires it once
//     its droplet exists; Key status.
//   - warmpool owns WarmPool objects and their members (Droplets and Keys
//     owned by the pool): sizing, refills, drains, hand-over to a VM.
//   - environment checks an Environment's config, token and catalog entries
//     when it is saved; it reports with Events and a metric, never writes it.
//   - sweeper deletes droplets and keys of this installation whose VM is gone.
//   - tokensecret keeps a token Secret until no Droplet or Key needs it.
//   - statecolumn computes the STATE and MESSAGE columns from conditions;
//     related re-queues dependents on a write; owner finds an object's VM;
//     finalizer names wrangler's cleanup finalizers (handler names are API).
//
// pkg/drain, the binary's `drain` subcommand (the chart's uninstall hook),
// empties an installation with the controller stopped: its droplets and
// keys in DigitalOcean, then finalizer.Ours on every object.
//
// The DigitalOcean budget is shared in pkg/digitalocean: one client and one
// rate limiter per token for all controllers; every call goes through
// CallContext with a Priority (delete before create, pool, resync, catalog,
// tidy), and each priority may use only its share of the token's window.
// The VM's config comes from pkg/config; Events and conditions from
// pkg/events; the API types are in pkg/apis (generated code: pkg/generated).
//
// For tests: pkg/harness/fakedo is the DigitalOcean API in-process,
// pkg/harness/gargantuasim does what Gargantua does to VMs, pkg/harness/testenv starts etcd
// and kube-apiserver; pkg/harness/e2e and pkg/harness/reliability drive the controllers
// with them.
package controllers
