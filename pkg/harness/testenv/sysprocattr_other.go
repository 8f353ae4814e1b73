//go:build !linux

package testenv

import "syscall"

// childSysProcAttr: Pdeathsig is Linux-only; elsewhere Stop is the only cleanup.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{}
}
