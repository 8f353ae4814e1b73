package fakedo

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
)

// account is the state behind one bearer token. mu guards everything but
// the limiter, which has its own lock so rate limiting never waits on
// droplet work.
type account struct {
	tokenHash string
	limiter   *rateLimiter

	mu       sync.Mutex
	opts     AccountOptions
	uuid     string
	droplets map[int]*droplet
	order    []int // droplet ids, ascending; may hold deleted ones until purged
	live     int   // droplets not deleted, for the droplet limit
	keys     map[int]*sshKey
	keyOrder []int
	vpcs     map[string]string // region slug -> default VPC uuid
	// tags is the account's tag set, each with the droplet last tagged with
	// it (0: none yet): a tag exists from POST /v2/tags or a droplet created
	// or tagged with it until DELETE /v2/tags/{tag}, whatever became of its
	// droplets.
	tags    map[string]int
	tagged  []TagResourcesRecord
	deletes []DeleteRecord
	// deletedTags are the tags each deleted droplet carried, kept after
	// purge so that a later delete naming it is still told apart.
	deletedTags map[int][]string
}

// TokenHash is the non-reversible token identifier used in RequestRecord,
// so request logs never carry a token.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:8])
}

// AddAccount registers token as an account. Calling it again for a known
// token updates its options and keeps its droplets and keys.
func (s *Server) AddAccount(token string, opts AccountOptions) {
	s.accountsMu.Lock()
	defer s.accountsMu.Unlock()
	if acc, ok := s.accounts[token]; ok {
		acc.mu.Lock()
		acc.opts = opts.withDefaults(acc.tokenHash)
		acc.mu.Unlock()
		return
	}
	s.accounts[token] = s.newAccount(token, opts)
}

func (s *Server) newAccount(token string, opts AccountOptions) *account {
	h := TokenHash(token)
	return &account{
		tokenHash: h,
		limiter:   newRateLimiter(s.rateLimits()),
		opts:      opts.withDefaults(h),
		uuid:      newUUID(),
		droplets:  make(map[int]*droplet),
		keys:      make(map[int]*sshKey),
		vpcs:      make(map[string]string),
		tags:      make(map[string]int),
	}
}

// lookupAccount finds token's account, creating it when it carries the
// auto-account prefix. It returns nil for unknown tokens.
func (s *Server) lookupAccount(token string) *account {
	if token == "" {
		return nil
	}
	s.accountsMu.RLock()
	acc := s.accounts[token]
	s.accountsMu.RUnlock()
	if acc != nil {
		return acc
	}
	p := s.opts.AutoAccountPrefix
	if p == "" || !strings.HasPrefix(token, p) {
		return nil
	}
	s.accountsMu.Lock()
	defer s.accountsMu.Unlock()
	if acc = s.accounts[token]; acc == nil {
		acc = s.newAccount(token, s.opts.AutoAccount)
		s.accounts[token] = acc
	}
	return acc
}

func (s *Server) authenticate(r *http.Request) *account {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return nil
	}
	return s.lookupAccount(strings.TrimSpace(h[len(prefix):]))
}

func (s *Server) allAccounts() []*account {
	s.accountsMu.RLock()
	defer s.accountsMu.RUnlock()
	out := make([]*account, 0, len(s.accounts))
	for _, a := range s.accounts {
		out = append(out, a)
	}
	return out
}

// vpcFor returns the account's default VPC in region, creating it on first
// use as DigitalOcean does. Caller holds acc.mu.
func (acc *account) vpcFor(region string) string {
	if id, ok := acc.vpcs[region]; ok {
		return id
	}
	id := newUUID()
	acc.vpcs[region] = id
	return id
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}
