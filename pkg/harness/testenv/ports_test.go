package testenv

import (
	"errors"
	"testing"
)

// A process that lost a port to another between freePorts and its bind
// starts again on fresh ports; any other failure is not retried, and a
// port lost every time ends after portTries starts.
func TestStartsAgainOnFreshPortsWhenAPortWasTaken(t *testing.T) {
	taken := errors.New("etcd: exited before ready\n--- last lines ---\nlisten tcp 127.0.0.1:4001: bind: address already in use")
	other := errors.New("etcd: exited before ready\n--- last lines ---\npermission denied")
	for _, c := range []struct {
		name      string
		failures  []error
		wantCalls int
		wantErr   error
	}{
		{"port taken once", []error{taken}, 2, nil},
		{"another failure", []error{other}, 1, other},
		{"port taken every time", []error{taken, taken, taken, taken}, portTries, taken},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			err := onFreePorts(2, func(ports []int) error {
				calls++
				if len(ports) != 2 || ports[0] == ports[1] {
					t.Fatalf("ports %v, want two distinct ones", ports)
				}
				if calls <= len(c.failures) {
					return c.failures[calls-1]
				}
				return nil
			})
			if calls != c.wantCalls || !errors.Is(err, c.wantErr) {
				t.Errorf("%d starts, error %v; want %d, %v", calls, err, c.wantCalls, c.wantErr)
			}
		})
	}
}
