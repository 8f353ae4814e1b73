package drain

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// stopController scales the controller's Deployment to 0 and waits until none
// of its pods is left: a pod still terminating may still create droplets. The
// returned restore scales it back to what it was.
func stopController(ctx context.Context, k kube, opts Options) (restore func(), err error) {
	restore = func() {}
	if opts.Deployment == "" {
		return restore, nil
	}
	deployments := k.client.AppsV1().Deployments(opts.Namespace)
	scale, err := deployments.GetScale(ctx, opts.Deployment, metav1.GetOptions{})
	if err != nil {
		return restore, fmt.Errorf("Deployment %s: %w", opts.Deployment, err)
	}
	replicas := scale.Spec.Replicas
	if replicas > 0 {
		scale.Spec.Replicas = 0
		if _, err := deployments.UpdateScale(ctx, opts.Deployment, scale, metav1.UpdateOptions{}); err != nil {
			return restore, fmt.Errorf("scaling Deployment %s to 0: %w", opts.Deployment, err)
		}
		logrus.WithField("deployment", opts.Deployment).WithField("replicas", replicas).Info("controller scaled to 0")
		restore = func() { scaleBack(k, opts, replicas) }
	}
	d, err := deployments.Get(ctx, opts.Deployment, metav1.GetOptions{})
	if err != nil {
		restore()
		return restore, fmt.Errorf("Deployment %s: %w", opts.Deployment, err)
	}
	selector := metav1.FormatLabelSelector(d.Spec.Selector)
	var left []string
	err = wait.PollUntilContextCancel(ctx, opts.Poll, true, func(ctx context.Context) (bool, error) {
		pods, err := k.client.CoreV1().Pods(opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		left = left[:0]
		for _, p := range pods.Items {
			left = append(left, p.Name)
		}
		return len(left) == 0, nil
	})
	if err != nil {
		restore()
		return restore, fmt.Errorf("the controller's pods %s are still there (%v): nothing was deleted", strings.Join(left, ", "), err)
	}
	return restore, nil
}

// scaleBack gives the controller its replicas back after a failed drain, with
// a context of its own: the drain's may be what ran out.
func scaleBack(k kube, opts Options, replicas int32) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	deployments := k.client.AppsV1().Deployments(opts.Namespace)
	scale, err := deployments.GetScale(ctx, opts.Deployment, metav1.GetOptions{})
	if err == nil {
		scale.Spec.Replicas = replicas
		_, err = deployments.UpdateScale(ctx, opts.Deployment, scale, metav1.UpdateOptions{})
	}
	if err != nil {
		logrus.WithError(err).Errorf("the drain failed and Deployment %s stays at 0 replicas: scale it to %d", opts.Deployment, replicas)
		return
	}
	logrus.WithField("replicas", replicas).Info("the drain failed: controller scaled back")
}

// Lease timings of the drain's hold: it only has to outlast the drain, and a
// released Lease lets a controller scaled back up lead at once.
const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = time.Second
)

// whileLeading runs work while holding the controller's Lease, once no replica
// holds it (a controller that lost its pod without releasing it holds it until
// it expires), and deletes the Lease once work succeeded. Without leader
// election it runs work at once.
func whileLeading(ctx context.Context, k kube, opts Options, work func(context.Context) (Report, error)) (Report, error) {
	if !opts.LeaderElect {
		return work(ctx)
	}
	host, err := os.Hostname()
	if err != nil {
		return Report{}, err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta: metav1.ObjectMeta{Namespace: opts.Namespace, Name: opts.LeaseName},
		Client:    k.client.CoordinationV1(),
		// Never a controller replica's identity, which is its hostname.
		LockConfig: resourcelock.ResourceLockConfig{Identity: host + "-drain"},
	}
	type result struct {
		report Report
		err    error
	}
	done := make(chan result, 1)
	var led atomic.Bool
	leadCtx, stopLeading := context.WithCancel(ctx)
	defer stopLeading()
	logrus.WithField("lease", opts.LeaseName).Info("waiting for the controller's Lease")
	leaderelection.RunOrDie(leadCtx, leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: true, Name: "drain",
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				led.Store(true)
				logrus.WithField("lease", opts.LeaseName).Info("holding the controller's Lease")
				report, err := work(ctx)
				done <- result{report, err}
				stopLeading()
			},
			OnStoppedLeading: func() {},
		},
	})
	if !led.Load() {
		return Report{}, fmt.Errorf("a controller replica still holds Lease %s (%s): nothing was deleted", opts.LeaseName, leaseHolder(k, opts))
	}
	r := <-done
	if r.err == nil {
		r.err = deleteLease(k, opts)
	}
	return r.report, r.err
}

// leaseHolder names who holds the Lease, for the error.
func leaseHolder(k kube, opts Options) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lease, err := k.client.CoordinationV1().Leases(opts.Namespace).Get(ctx, opts.LeaseName, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	if lease.Spec.HolderIdentity == nil {
		return "no holder"
	}
	return "holder " + *lease.Spec.HolderIdentity
}

// deleteLease removes the controller's Lease, released when the hold ended:
// nothing of the installation is left behind.
func deleteLease(k kube, opts Options) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := k.client.CoordinationV1().Leases(opts.Namespace).Delete(ctx, opts.LeaseName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Lease %s: %w", opts.LeaseName, err)
	}
	return nil
}
