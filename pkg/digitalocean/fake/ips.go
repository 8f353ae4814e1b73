package fake

import (
	"net/netip"
	"sync"
)

// ipAllocator hands out addresses that are safe to hand to a client:
// public IPv4s are loopback (127.100.0.1 upward) so nothing dials out,
// private IPv4s come from 10.0.0.0/8 and IPv6 from the documentation
// prefix 2001:db8::/32. Addresses are never reused.
type ipAllocator struct {
	mu                     sync.Mutex
	public, private, inet6 netip.Addr
}

var (
	firstPublic  = netip.MustParseAddr("127.100.0.0")
	lastPublic   = netip.MustParseAddr("127.254.255.254")
	firstPrivate = netip.MustParseAddr("10.116.0.1")
	firstInet6   = netip.MustParseAddr("2001:db8::")
)

func newIPAllocator() ipAllocator {
	return ipAllocator{public: firstPublic, private: firstPrivate, inet6: firstInet6}
}

// next4 advances past network/broadcast-looking addresses (.0, .255).
func next4(a netip.Addr) netip.Addr {
	for {
		a = a.Next()
		if b := a.As4(); b[3] != 0 && b[3] != 255 {
			return a
		}
	}
}

func (a *ipAllocator) allocate(withIPv6 bool) (public, private, inet6 string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.public = next4(a.public)
	if lastPublic.Less(a.public) {
		a.public = next4(firstPublic) // exhausted: wrap rather than leave loopback
	}
	a.private = next4(a.private)
	public, private = a.public.String(), a.private.String()
	if withIPv6 {
		a.inet6 = a.inet6.Next()
		inet6 = a.inet6.String()
	}
	return public, private, inet6
}
