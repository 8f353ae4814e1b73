package fakedo

import "sync"

// msgSizeUnavailable is DigitalOcean's answer (422) to a create of a size a
// region has run out of, as happens in busy periods and for large sizes.
const msgSizeUnavailable = "Size is not available in this region."

// stock holds, per region and size sold out or about to be, how many more
// droplets may be created there; every other pair is unlimited. It is
// DigitalOcean's capacity, so every account shares it.
type stock struct {
	mu   sync.Mutex
	left map[regionSize]int
}

type regionSize struct{ region, size string }

// SellOut makes region run out of size after after more droplets of it (0:
// at once): creates beyond answer 422 "Size is not available in this
// region.", a multi-create as a whole.
func (s *Server) SellOut(region, size string, after int) {
	s.stock.mu.Lock()
	defer s.stock.mu.Unlock()
	if s.stock.left == nil {
		s.stock.left = map[regionSize]int{}
	}
	s.stock.left[regionSize{region, size}] = max(0, after)
}

// Restock makes size available in region again, without limit.
func (s *Server) Restock(region, size string) {
	s.stock.mu.Lock()
	defer s.stock.mu.Unlock()
	delete(s.stock.left, regionSize{region, size})
}

// take reserves n droplets of size in region, false when fewer are left.
func (st *stock) take(region, size string, n int) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	key := regionSize{region, size}
	left, limited := st.left[key]
	if !limited {
		return true
	}
	if left < n {
		return false
	}
	st.left[key] = left - n
	return true
}
