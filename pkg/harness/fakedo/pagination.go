package fakedo

import (
	"net/http"
	"net/url"
	"strconv"
)

const (
	defaultPerPage = 20
	maxPerPage     = 200
)

type wireLinks struct {
	Pages   *wirePages   `json:"pages,omitempty"`
	Actions []wireAction `json:"actions,omitempty"`
}

// wirePages holds only the links that apply: no first/prev on page 1, no
// next/last on the last page; godo derives CurrentPage and IsLastPage from
// exactly that.
type wirePages struct {
	First string `json:"first,omitempty"`
	Prev  string `json:"prev,omitempty"`
	Next  string `json:"next,omitempty"`
	Last  string `json:"last,omitempty"`
}

type wireAction struct {
	ID   int    `json:"id"`
	Rel  string `json:"rel"`
	HREF string `json:"href"`
}

type wireMeta struct {
	Total int `json:"total"`
}

// page is one requested page of a list.
type page struct {
	number, perPage int
}

// parsePage reads page/per_page like DigitalOcean: page defaults to 1,
// per_page to 20 and is capped at 200.
func parsePage(q url.Values) page {
	p := page{number: 1, perPage: defaultPerPage}
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 0 {
		p.number = n
	}
	if n, err := strconv.Atoi(q.Get("per_page")); err == nil && n > 0 {
		p.perPage = min(n, maxPerPage)
	}
	return p
}

// bounds is the [lo, hi) slice of a list of total items for this page.
func (p page) bounds(total int) (lo, hi int) {
	lo = min((p.number-1)*p.perPage, total)
	hi = min(lo+p.perPage, total)
	return lo, hi
}

func (p page) lastPage(total int) int {
	if total == 0 {
		return 1
	}
	return (total + p.perPage - 1) / p.perPage
}

// links builds absolute page links on the fake's base URL, keeping the
// request's other query parameters (e.g. tag_name).
func (p page) links(s *Server, r *http.Request, total int) wireLinks {
	last := p.lastPage(total)
	var pages wirePages
	at := func(n int) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(n))
		q.Set("per_page", strconv.Itoa(p.perPage))
		return s.URL() + trimLeadingSlash(r.URL.Path) + "?" + q.Encode()
	}
	if p.number > 1 {
		pages.First = at(1)
		pages.Prev = at(p.number - 1)
	}
	if p.number < last {
		pages.Next = at(p.number + 1)
		pages.Last = at(last)
	}
	if pages == (wirePages{}) {
		return wireLinks{}
	}
	return wireLinks{Pages: &pages}
}

func trimLeadingSlash(p string) string {
	if len(p) > 0 && p[0] == '/' {
		return p[1:]
	}
	return p
}

// paginate slices items for the request's page and returns the links and
// meta that go with it.
func paginate[T any](s *Server, r *http.Request, items []T) ([]T, wireLinks, wireMeta) {
	p := parsePage(r.URL.Query())
	lo, hi := p.bounds(len(items))
	return items[lo:hi], p.links(s, r, len(items)), wireMeta{Total: len(items)}
}
