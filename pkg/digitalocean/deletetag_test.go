package digitalocean

import "testing"

func TestDeleteTagsAreOneOffAndValid(t *testing.T) {
	a, b := NewDeleteTag(), NewDeleteTag()
	if a == b {
		t.Fatalf("two delete tags are both %q", a)
	}
	for _, tag := range []string{a, b} {
		if !IsDeleteTag(tag) || !IsReservedTag(tag) || sanitizeTag(tag) != tag || len(tag) > maxTagLength {
			t.Errorf("%q: not a valid reserved delete tag", tag)
		}
	}
	if IsDeleteTag(BatchTag("x")) || IsDeleteTag(VMTag("x")) {
		t.Error("other tags taken for delete tags")
	}
}
