// Package fakedo is an in-process fake of the DigitalOcean API v2 served on a
// real loopback HTTP listener, for integration tests, playgrounds and
// benchmarks that drive the real godo client.
//
// It mirrors the parts of DigitalOcean a droplet-per-VM controller touches:
// droplets (create, multi-create, get, list by tag, delete, delete by tag),
// tags (create, list, get, delete, tag droplets),
// SSH keys, the account, regions, sizes and images, with DigitalOcean's JSON
// shapes, pagination links, error bodies, per-token rate limits and
// eventual consistency. Faults (errors, latency, lost responses, 429 storms,
// read-after-create 404s) can be injected at runtime, and a region can sell
// out of a size (SellOut: 422 "Size is not available in this region.").
//
// Every address it hands out that a client could dial is a loopback address:
// public IPv4s count up from 127.100.0.1 and private ones from 127.10.0.1.
// With Options.SSH each active droplet runs a small SSH server on both, at
// one shared port, whose behaviour (sshd delays, refused keys, cloud-init)
// is set per droplet with a Guest; see the SSH section below.
//
// Rate limits are sliding-log windows per token: a request is admitted when
// fewer than the limit were admitted in the trailing window (per "minute",
// per "hour", and for GET /v2/account/keys its own window), so a slot frees
// exactly when the oldest admitted request ages out; ratelimit-reset and
// Retry-After report that moment. Every authenticated request counts
// (4xx included); requests rejected with 429 by the limiter do not.
//
// A dropped response (FaultRule.DropResponseAfterApply) on a GET can be
// retried transparently by net/http when the connection was reused, since
// GET is replayable; POST and DELETE are not retried by the transport.
package fakedo
