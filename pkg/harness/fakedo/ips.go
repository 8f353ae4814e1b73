package fakedo

import (
	"net/netip"
	"sync"
)

// ipAllocator hands out addresses that are safe to hand to a client:
// public IPv4s are loopback from 127.100.0.1 upward and private IPv4s are
// loopback from 127.10.0.1 upward, so a client that dials either reaches
// this machine (Linux routes all of 127.0.0.0/8 to lo) and nothing dials
// out; IPv6 comes from the documentation prefix 2001:db8::/32. Addresses
// are never reused until a range is exhausted.
type ipAllocator struct {
	mu                     sync.Mutex
	public, private, inet6 netip.Addr
}

// IPv4 ranges; the private one ends where the public one starts.
var (
	firstPublic  = netip.MustParseAddr("127.100.0.0")
	lastPublic   = netip.MustParseAddr("127.254.255.254")
	firstPrivate = netip.MustParseAddr("127.10.0.0")
	lastPrivate  = netip.MustParseAddr("127.99.255.254")
	firstInet6   = netip.MustParseAddr("2001:db8::")
)

func newIPAllocator() ipAllocator {
	return ipAllocator{public: firstPublic, private: firstPrivate, inet6: firstInet6}
}

// next4 advances past network/broadcast-looking addresses (.0, .255) and
// wraps to the start of [first, last] rather than leave the range.
func next4(a, first, last netip.Addr) netip.Addr {
	for {
		a = a.Next()
		if last.Less(a) {
			a = first
			continue
		}
		if b := a.As4(); b[3] != 0 && b[3] != 255 {
			return a
		}
	}
}

func (a *ipAllocator) allocate(withIPv6 bool) (public, private, inet6 string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.public = next4(a.public, firstPublic, lastPublic)
	a.private = next4(a.private, firstPrivate, lastPrivate)
	public, private = a.public.String(), a.private.String()
	if withIPv6 {
		a.inet6 = a.inet6.Next()
		inet6 = a.inet6.String()
	}
	return public, private, inet6
}
