package testenv

import (
	"net"
	"strings"
)

// freePorts reserves n distinct loopback ports by listening on them all at once,
// then releases them for the binaries to bind.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// portTries bounds the starts of one process on fresh ports.
const portTries = 3

// onFreePorts runs start with n fresh loopback ports, again with others when
// a port was taken (portTaken) between freePorts releasing it and the process
// binding it: with tests starting servers in parallel, that happens.
func onFreePorts(n int, start func(ports []int) error) error {
	var err error
	for range portTries {
		ports, perr := freePorts(n)
		if perr != nil {
			return perr
		}
		if err = start(ports); err == nil || !portTaken(err) {
			return err
		}
	}
	return err
}

// portTaken: the error (with the tail of the process's log) says a port
// could not be bound.
func portTaken(err error) bool {
	return strings.Contains(err.Error(), "address already in use")
}
