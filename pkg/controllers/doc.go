// Package controllers holds Set, what every controller's Register is given;
// its subpackages are the controllers, wired together by pkg/app. How the
// code is laid out, to find where a change goes:
//
// A HobbyFarm VirtualMachine becomes objects of ours, each becomes a
// DigitalOcean resource, and the droplet's state flows back to the VM:
//
//	VirtualMachine → key-pair Secret + Key + Droplet → SSH key + droplet
//
// The controllers, each owning its objects and their status:
//   - virtualmachine owns the VM's side. generate.go and objects.go apply
//     the Secrets (key pair, copy of a plain-text token), the Key and the
//     Droplet; claim.go takes a warm pool's droplet instead; dropletview.go,
//     failure.go and patch.go mirror the Droplet's state into the VM's
//     status; cleanup.go and cleanupqueue.go hold the VM's finalizer until
//     its Droplet and Key are gone; tainted.go deletes tainted VMs;
//     gargantuafinalizer.go handles Gargantua's own finalizer; takeover.go
//     adopts what the alpha provisioner made for a VM; cost.go labels the
//     Droplet for Gargantua's cost service.
//   - droplet owns Droplet objects and their droplets: create (batched),
//     resync, the reachability check (pkg/sshprobe), delete, cost. Its
//     package doc maps its files by concern.
//   - key registers a Key's public key with DigitalOcean (controller.go;
//     kind.go says what its passes' plumbing does differently),
//     retires a droplet's own key once the droplet exists (retire.go), and
//     deletes a deleted VM's key only once droplet deletes pause
//     (afterdroplets.go).
//   - warmpool owns WarmPool objects and their members (Droplets and Keys
//     owned by the pool): pools.go makes a pool per template of an active
//     scheduled event; sizing.go and auto.go size it, from the refill time
//     refill.go learns; members.go makes members, and expect.go and
//     partial.go keep a member from being made twice or left half-made;
//     drain.go empties a pool; handover.go gives a member to a VM;
//     status.go records the counts.
//   - environment checks an Environment's config, token and catalog entries
//     when it is saved (validate.go, preflight.go, catalog.go), and the
//     token's droplet limit against the seats its events still need
//     (headroom.go); it reports
//     with Events and a metric (report.go), never writes the Environment,
//     and tells the VM controller which configs are invalid (verdicts.go).
//   - sweeper runs two background rounds: the orphan sweep (sweeper.go,
//     pool.go) deletes droplets and keys of this installation whose VM or
//     pool is gone, the last line of defence against a droplet that bills
//     forever; the tag tidy (tagtidy.go, taground.go, tagneeds.go) deletes
//     our tags once nothing carries or needs them.
//   - takeover cleans up the original alpha provisioner's Droplets and Keys
//     as their VMs go, by the IDs they record.
//   - tokensecret keeps a token Secret until no Droplet or Key needs it.
//
// What they share:
//   - pass is the plumbing of a Droplet's or Key's pass: condition changes
//     whose Events wait for the status write, DigitalOcean failures told
//     with where to fix them and retried with backoff, the write and the
//     next look, forgetting an object that goes.
//   - finalizer names the cleanup handlers, whose finalizers objects carry
//     (handler names are API), and Keep ends a pass holding one.
//   - statecolumn computes the STATE and MESSAGE columns of Droplets and
//     Keys from their conditions.
//   - keyqueue is the worker of queues off a controller's own (VM cleanups,
//     early droplet deletes).
//   - deletepause tells when Droplet deletes last ran, so that key deletes
//     and the tag tidy wait for an event's droplets to go first.
//   - related re-queues dependents on a write; owner finds an object's VM.
//
// pkg/drain, the binary's `drain` subcommand (the chart's uninstall hook),
// empties an installation with the controller stopped: its droplets and
// keys in DigitalOcean, then finalizer.Ours on every object.
//
// DigitalOcean is reached through pkg/digitalocean: one client and one
// rate limiter per token for all controllers, and a service per resource
// (Droplets, Keys, Tags in services.go, their lists included; the
// catalog), which says what DigitalOcean's answers mean (a 404: gone) and
// marks each call's Priority (delete before create, pool, resync, catalog,
// tidy): fixed where the call decides it, named by the caller where one
// call serves several uses. Each priority may use only its share of the
// token's window; CallContext bounds a pass's calls in time.
// The VM's config comes from pkg/config; Events and conditions from
// pkg/events; the API types and the names several controllers share are in
// pkg/apis (generated code: pkg/generated).
//
// Everything that does not ship in the binary is under pkg/harness: the
// fake DigitalOcean (fakedo), the simulated Gargantua (gargantuasim), the
// local control plane (testenv), the suites that drive the controllers with
// them (e2e, reliability, chart), the playground and the benchmark.
package controllers
