// Package reliability tests the controller under failure: injected
// DigitalOcean faults (5xx, lost responses, latency, 429 storms), a VM
// deleted mid-create, a kube-apiserver restart, secrets hygiene and
// malformed configuration. It has tests only; see docs/reliability.md.
package reliability
