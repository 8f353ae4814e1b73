package digitalocean

// UseTag marks tag as relied on by requests under way until done is
// called: a batched delete's tag is empty between its creation and the
// tagging of its droplets, and deleting it then would make the delete by
// tag find nothing. The tag tidy leaves a tag in use alone.
func (c *Clients) UseTag(tag string) (done func()) {
	if c == nil {
		return func() {}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tagsInUse == nil {
		c.tagsInUse = map[string]int{}
	}
	c.tagsInUse[tag]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.tagsInUse[tag]--; c.tagsInUse[tag] <= 0 {
			delete(c.tagsInUse, tag)
		}
	}
}

// TagInUse reports a tag some request under way relies on (see UseTag).
func (c *Clients) TagInUse(tag string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tagsInUse[tag] > 0
}
