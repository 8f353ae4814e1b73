package image

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// The user the image runs as: distroless' nonroot, which the chart's
// securityContext names too.
const (
	NonRootID = 65532
	User      = "65532:65532"
)

// CABundlePath is where Go's crypto/x509 looks first for roots on Linux.
const CABundlePath = "/etc/ssl/certs/ca-certificates.crt"

// file is one entry of the image's filesystem. Every entry is owned by root:
// the controller writes nowhere but /tmp.
type file struct {
	path string // absolute
	mode fs.FileMode
	data []byte
}

// systemFiles are everything but the binary: one layer, the same on every platform.
func systemFiles() ([]file, error) {
	certs, err := caBundle()
	if err != nil {
		return nil, err
	}
	return []file{
		{path: "/etc", mode: fs.ModeDir | 0o755},
		{path: "/etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		// No login shell exists, nor a home: the controller needs neither.
		{path: "/etc/passwd", mode: 0o644, data: []byte(
			"root:x:0:0:root:/root:/sbin/nologin\n" +
				"nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n")},
		{path: "/etc/ssl", mode: fs.ModeDir | 0o755},
		{path: "/etc/ssl/certs", mode: fs.ModeDir | 0o755},
		{path: CABundlePath, mode: 0o644, data: certs},
		{path: "/tmp", mode: fs.ModeDir | fs.ModeSticky | 0o777},
	}, nil
}

func binaryFiles(binary []byte) []file {
	return []file{{path: "/" + BinaryName, mode: 0o755, data: binary}}
}

// layerTar is a tar of files sorted by path, each owned by 0:0 with its
// mode and mtime, and nothing else that differs between machines.
func layerTar(files []file, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range sortedByPath(files) {
		hdr := &tar.Header{
			Name:    strings.TrimPrefix(f.path, "/"),
			Mode:    tarMode(f.mode),
			ModTime: mtime.Truncate(time.Second),
		}
		if f.mode.IsDir() {
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sortedByPath puts parents before children, in the same order everywhere.
func sortedByPath(files []file) []file {
	return slices.SortedFunc(slices.Values(files), func(a, b file) int { return strings.Compare(a.path, b.path) })
}

// tarMode is the permission bits of m as tar stores them, sticky bit included.
func tarMode(m fs.FileMode) int64 {
	mode := int64(m.Perm())
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}
