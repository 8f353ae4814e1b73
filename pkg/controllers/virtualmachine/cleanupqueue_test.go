package virtualmachine

import (
	"errors"
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	"github.com/rancher/wrangler/v3/pkg/generic"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
)

// unreadableVMs fails every read of its cache.
type unreadableVMs struct {
	hfcontrollers.VirtualMachineController
}

type unreadableVMCache struct {
	hfcontrollers.VirtualMachineCache
}

func (unreadableVMs) Cache() generic.CacheInterface[*hfv1.VirtualMachine] { return unreadableVMCache{} }

func (unreadableVMCache) Get(_, _ string) (*hfv1.VirtualMachine, error) {
	return nil, errors.New("cache unavailable")
}

// A failed cleanup's log line names the VM as every other line does: by
// its name in field vm, not by the queue's namespace/name key.
func TestCleanupRetryLogNamesTheVM(t *testing.T) {
	hook := logtest.NewGlobal()
	defer logrus.StandardLogger().ReplaceHooks(logrus.LevelHooks{})
	h := &handler{vms: unreadableVMs{}}

	if _, err := h.cleanUpLogged("ns/vm1"); err == nil {
		t.Fatal("cleanup of an unreadable VM succeeded")
	}

	entry := hook.LastEntry()
	if entry == nil {
		t.Fatal("no log line for the failed cleanup")
	}
	if got := entry.Data["vm"]; got != "vm1" {
		t.Errorf("field vm = %v, want the VM's name vm1", got)
	}
}
