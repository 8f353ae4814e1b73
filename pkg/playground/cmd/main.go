// Command playground runs the provisioner against a local control plane and
// the fake DigitalOcean API until Ctrl-C (see scripts/playground).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/playground"
)

func main() {
	vms := flag.Int("vms", 3, "number of VMs to create")
	bootDelay := flag.Duration("boot-delay", 3*time.Second, "how long a fake droplet stays new before it is active")
	keep := flag.Bool("keep", false, "keep the temp dir (kubeconfig, logs, key) after exit")
	flag.Parse()

	// Ctrl-C signals the terminal's whole process group; etcd and kube-apiserver
	// must survive it to let cleanup delete the droplets.
	if code, ran := runInOwnProcessGroup(); ran {
		os.Exit(code)
	}

	// Registered before the first signal can arrive, so the second one is never missed.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	abort := make(chan struct{})
	go func() {
		<-signals // the first one ends ctx
		<-signals
		fmt.Fprintln(os.Stderr, "second interrupt: aborting cleanup")
		close(abort)
	}()

	err := playground.Run(ctx, playground.Options{VMs: *vms, BootDelay: *bootDelay, Keep: *keep, Abort: abort}, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "playground:", err)
		stop()
		os.Exit(1)
	}
}
