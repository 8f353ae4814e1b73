package fakedo

import (
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"
)

const (
	msgKeyInvalid = "Key invalid, key should be of the format `type key [comment]`"
	msgKeyInUse   = "SSH Key is already in use on your account"
)

// sshKey is an account's SSH key. It is guarded by the account's mutex.
type sshKey struct {
	id          int
	name        string
	fingerprint string // MD5, aa:bb:.. as DigitalOcean reports it
	publicKey   string // as submitted (trimmed)
	wireKey     string // ssh wire-format blob, for SSH auth
}

type wireKey struct {
	ID          int    `json:"id"`
	Fingerprint string `json:"fingerprint"`
	PublicKey   string `json:"public_key"`
	Name        string `json:"name"`
}

func (k *sshKey) wire() wireKey {
	return wireKey{ID: k.id, Fingerprint: k.fingerprint, PublicKey: k.publicKey, Name: k.name}
}

type keyRequest struct {
	Name      string `json:"name"`
	PublicKey string `json:"public_key"`
}

func keyReply(status int, k *sshKey) reply {
	return reply{status: status, body: struct {
		SSHKey wireKey `json:"ssh_key"`
	}{k.wire()}}
}

func (s *Server) createKey(c *call) reply {
	var req keyRequest
	if rep, ok := decodeBody(c.r, &req); !ok {
		return rep
	}
	if strings.TrimSpace(req.Name) == "" {
		return unprocessable("Name can't be blank")
	}
	pub := strings.TrimSpace(req.PublicKey)
	parsed, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(pub))
	if err != nil || len(strings.TrimSpace(string(rest))) > 0 {
		return unprocessable(msgKeyInvalid)
	}
	fp := ssh.FingerprintLegacyMD5(parsed)
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	for _, k := range acc.keys {
		if k.fingerprint == fp {
			return unprocessable(msgKeyInUse)
		}
	}
	k := &sshKey{
		id:          int(s.keyIDs.Add(1)),
		name:        req.Name,
		fingerprint: fp,
		publicKey:   pub,
		wireKey:     string(parsed.Marshal()),
	}
	acc.keys[k.id] = k
	acc.keyOrder = append(acc.keyOrder, k.id)
	return keyReply(http.StatusCreated, k)
}

func (s *Server) listKeys(c *call) reply {
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	all := make([]wireKey, 0, len(acc.keyOrder))
	for _, id := range acc.keyOrder {
		all = append(all, acc.keys[id].wire())
	}
	items, links, meta := paginate(s, c.r, all)
	return reply{status: http.StatusOK, body: struct {
		SSHKeys []wireKey `json:"ssh_keys"`
		Links   wireLinks `json:"links"`
		Meta    wireMeta  `json:"meta"`
	}{items, links, meta}}
}

func (s *Server) getKey(c *call) reply {
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	k := acc.findKey(c.r.PathValue("key"))
	if k == nil {
		return notFound()
	}
	return keyReply(http.StatusOK, k)
}

func (s *Server) updateKey(c *call) reply {
	var req keyRequest
	if rep, ok := decodeBody(c.r, &req); !ok {
		return rep
	}
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	k := acc.findKey(c.r.PathValue("key"))
	if k == nil {
		return notFound()
	}
	if req.Name != "" {
		k.name = req.Name
	}
	return keyReply(http.StatusOK, k)
}

// deleteKey removes the key from the account; droplets created with it keep
// it in authorized_keys, as on DigitalOcean.
func (s *Server) deleteKey(c *call) reply {
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	k := acc.findKey(c.r.PathValue("key"))
	if k == nil {
		return notFound()
	}
	delete(acc.keys, k.id)
	for i, id := range acc.keyOrder {
		if id == k.id {
			acc.keyOrder = append(acc.keyOrder[:i], acc.keyOrder[i+1:]...)
			break
		}
	}
	return reply{status: http.StatusNoContent}
}

// findKey resolves a key by numeric id or by fingerprint. Caller holds acc.mu.
func (acc *account) findKey(ref string) *sshKey {
	if id, err := strconv.Atoi(ref); err == nil {
		return acc.keys[id]
	}
	for _, k := range acc.keys {
		if k.fingerprint == ref {
			return k
		}
	}
	return nil
}

// resolveKeys maps a create's ssh_keys references to key ids and the set of
// public keys allowed to log in; unknown references are returned in bad.
// Caller holds acc.mu.
func (acc *account) resolveKeys(refs []string) (ids []int, authorized map[string]bool, bad []string) {
	authorized = make(map[string]bool, len(refs))
	for _, ref := range refs {
		k := acc.findKey(ref)
		if k == nil {
			bad = append(bad, ref)
			continue
		}
		if !authorized[k.wireKey] {
			ids = append(ids, k.id)
			authorized[k.wireKey] = true
		}
	}
	return ids, authorized, bad
}
