package testenv

import "syscall"

// childSysProcAttr makes the kernel kill a child when the test binary dies, however it dies.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
