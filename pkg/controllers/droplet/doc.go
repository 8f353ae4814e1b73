// Package droplet makes, watches and deletes the DigitalOcean droplet of
// each Droplet object, and keeps the Droplet's status (conditions, state,
// addresses, price) in step with it. Files by concern:
//
// The handler:
//   - controller.go: Register, the handler, its watches; logFor names a
//     Droplet's VM (or warm pool) in every log line.
//   - sync.go: a Droplet's pass (sync), where it ends in the status write
//     (package pass), and the first look's skipped writes.
//   - kind.go: what package pass's plumbing (status write, held Events,
//     failures, backoff) does differently for Droplets.
//   - failure.go: the setting a refusal names, with its value as sent.
//   - processnotes.go: what this process knows of Droplets beyond their
//     objects (creates sent, multi-create claims, refusals, droplets
//     confirmed gone, Events held back).
//   - knowndroplet.go: the VM annotation that keeps a droplet's ID when its
//     Droplet goes while the VM stays, for the next Droplet to adopt.
//
// Create:
//   - create.go: create or adopt; the intent written before any create.
//   - create_batch.go: up to ten VMs sharing a key in one multi-create.
//   - create_request.go: the create requests from the Droplet's spec.
//   - create_find.go: finding by name what a create whose answer was lost
//     made, never another installation's.
//   - create_adoptalpha.go: adopting the original provisioner's droplet.
//
// Observe and resync:
//   - observe.go: re-reading a droplet and recording what it shows.
//   - observe_lists.go: the batched resync, one paginated list per token
//     and tag shared by every Droplet (listCache).
//   - observe_listed.go: what a list keeps of each droplet.
//   - observe_bootbucket.go, observe_boottime.go: the tags that group
//     droplets created together, and the boot times that say when to list
//     them.
//
// Reachability:
//   - reachable.go: logging in as the VM's user will (Reachable).
//   - reachable_prober.go: the login attempts, off the handler's workers.
//
// Delete:
//   - delete_cleanup.go: the remove handler; the finalizer goes only once
//     DigitalOcean confirms every droplet of the Droplet deleted.
//   - delete_targets.go: which droplets a Droplet's deletion must delete.
//   - delete_batch.go: deletes that share a tag, many per request.
//   - delete_reaper.go: a deleted VM's droplet deleted at once, before its
//     Droplet's turn in the queue.
//   - delete_forcerelease.go: the force-release annotation.
//
// Warm pools:
//   - pool_claimed.go: a VM's Droplet that took a pool member's droplet.
//   - pool_handover.go: when the member's Droplet lets go of that droplet.
//
// Cost:
//   - cost.go: the droplet's price, and the hourly cost metric.
//
// The orphan sweep and the tag tidy, which look for what no Droplet
// records, are in package sweeper.
package droplet
