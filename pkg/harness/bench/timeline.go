package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// writeTimelines keeps, beside the controller's logs, every DigitalOcean
// request the fake saw from since on and the moments of vms, in seconds
// since since: where a figure's tail comes from is read off these.
func (s *scenario) writeTimelines(since time.Time, vms []string) {
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return fmt.Sprintf("%.3f", t.Sub(since).Seconds())
	}
	s.writeTSV("do-requests.tsv", "at\trequest\tstatus\tdropped", func(w *bufio.Writer) {
		for _, r := range s.do.Requests() {
			if r.Time.Before(since) {
				continue
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%t\n", at(r.Time), r.Pattern, r.Status, r.Dropped)
		}
	})
	s.writeTSV("vms.tsv", "vm\tready\tcreated\tactive\trunning\tdeleted\tgone", func(w *bufio.Writer) {
		for _, name := range vms {
			for _, v := range s.track.snapshot([]string{name}) {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, at(v.ready), at(v.created), at(v.active), at(v.running), at(v.deleted), at(v.gone))
			}
		}
	})
}

func (s *scenario) writeTSV(name, header string, rows func(*bufio.Writer)) {
	f, err := os.Create(filepath.Join(s.dir, name))
	if err != nil {
		s.note("%v", err)
		return
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, header)
	rows(w)
	if err := w.Flush(); err != nil {
		s.note("%v", err)
	}
}
