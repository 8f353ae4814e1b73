// Package image builds the controller's container image as OCI content, for
// several platforms, with no container engine and no registry: the image is
// assembled in Go from files this package makes, with no base image.
//
// It uses go-containerregistry rather than ko. ko builds Go images well but
// starts from a base image it pulls from a registry unless told otherwise,
// while mutate on go-containerregistry's empty image needs nothing from the
// network; the files a base image would bring (users, CA certificates) are
// small enough to make here, and so to pin with go.sum.
//
// The image holds:
//
//	/hf-provisioner-digitalocean        the static controller binary, the entrypoint
//	/etc/passwd, /etc/group             root and nonroot (65532), the user it runs as
//	/etc/ssl/certs/ca-certificates.crt  Mozilla's roots, for DigitalOcean's TLS
//	/tmp                                mode 1777; the chart mounts an emptyDir here
//
// and no shell. The same commit, with the same Go toolchain, gives the same
// image digest on any machine: timestamps come from the commit (or
// SOURCE_DATE_EPOCH), tar entries are sorted, owners and modes are fixed.
//
// cmd/ is the program scripts/image, the release workflow and the Dockerfile run.
package image
