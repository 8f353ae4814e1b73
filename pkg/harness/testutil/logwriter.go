package testutil

import (
	"io"
	"strings"
	"testing"
)

// LogWriter shows what is written to it in `go test -v` as it happens, a
// line of the test's log a write.
func LogWriter(t testing.TB) io.Writer { return logWriter{t} }

type logWriter struct{ t testing.TB }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
