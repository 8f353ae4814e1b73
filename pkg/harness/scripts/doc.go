// Package scripts holds the tests of the shell scripts in scripts/ that a first run
// depends on: scripts/kube-binaries and scripts/prereqs, and the progress lines they
// print while a slow step runs (scripts/lib/progress.sh). It has no non-test code.
//
// The tests run the real scripts with a fake go (and fake etcd and kubectl) first on
// PATH and a throwaway cache, so they take seconds and never build Kubernetes.
package scripts
