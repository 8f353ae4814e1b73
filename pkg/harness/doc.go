// Package harness holds no code, and nothing under it ships in the
// controller binary: everything here builds, runs, measures or tests the
// controller. Everything else under pkg/ is the product.
//
// Stand-ins for what the controller talks to:
//   - fakedo is the DigitalOcean API v2, in-process on loopback, with
//     DigitalOcean's shapes, limits, errors and injectable faults;
//   - testenv starts etcd, kube-apiserver and kube-controller-manager (whose
//     garbage collector deletes Gargantua's VMs) for a test binary;
//   - gargantuasim does to VMs what each supported Gargantua version does.
//
// Tools built on them:
//   - playground runs the controller on a throwaway local setup
//     (scripts/playground);
//   - bench is the benchmark (scripts/bench, docs/benchmarks.md);
//   - image builds the container image without a daemon (scripts/image).
//
// Suites that test the whole, with no code of their own to ship: e2e (the
// controller against simulated Gargantuas), reliability (crashes, faults and
// lost answers), chart (the Helm chart, installed as operators install it)
// and scripts (the repository's scripts). testutil has the helpers they
// share.
package harness
