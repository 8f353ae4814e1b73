package testutil

import "k8s.io/client-go/tools/record"

// TakeEvents empties rec, returning the Events it held in order.
func TakeEvents(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}
