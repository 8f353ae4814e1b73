# syntax=docker/dockerfile:1
# Builds the controller's image with Docker, for those who use it. Releases and
# scripts/image build the same image with no container engine (pkg/harness/image); the
# filesystem here comes from the same program, so both hold exactly:
#   /hf-provisioner-digitalocean        the static binary, the entrypoint
#   /etc/passwd, /etc/group             root, and nonroot (65532:65532), the user
#   /etc/ssl/certs/ca-certificates.crt  Mozilla's roots, for DigitalOcean's TLS
#   /tmp                                mode 1777, for the chart's emptyDir
# and no shell, all owned by root, with the same OCI labels. Only scripts/image's
# build is reproducible: Docker stamps its own times.
#   docker build --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) \
#     -t hf-provisioner-digitalocean:0.1.0 .

# The build platform's Go cross-compiles for the target (docker buildx --platform).
FROM --platform=$BUILDPLATFORM golang:1.26 AS builder
ARG VERSION=dev
# Set by BuildKit; without it the binary is for the build platform.
ARG TARGETARCH
WORKDIR /src

# Dependencies first, so they stay cached while only the code changes.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download

COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go run ./pkg/harness/image/cmd tree --out /rootfs --version "${VERSION}" ${TARGETARCH:+--arch "${TARGETARCH}"}

FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="hf-provisioner-digitalocean" \
      org.opencontainers.image.description="Provisions HobbyFarm VirtualMachines as DigitalOcean droplets" \
      org.opencontainers.image.source="https://github.com/hobbyfarm/hf-provisioner-digitalocean" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=builder /rootfs/ /
USER 65532:65532
ENTRYPOINT ["/hf-provisioner-digitalocean"]
