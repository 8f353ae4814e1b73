// Package e2e runs the controller against a real kube-apiserver and the fake
// DigitalOcean API, doing what Gargantua does; it has tests only.
package e2e
