# syntax=docker/dockerfile:1
# Builds the controller as a static binary and ships it on distroless, as a non-root user.
#   docker build --build-arg VERSION=$(git describe --tags --always) -t hobbyfarm/hf-provisioner-digitalocean .

FROM golang:1.26 AS builder
ARG VERSION=dev
# Set by BuildKit for multi-platform builds (docker buildx --platform ...).
ARG TARGETOS
ARG TARGETARCH
WORKDIR /src

# Dependencies first, so they stay cached while only the code changes.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download

COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w -X main.Version=${VERSION}" \
      -o /out/hf-provisioner-digitalocean .

FROM gcr.io/distroless/static:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.title="hf-provisioner-digitalocean" \
      org.opencontainers.image.description="Provisions HobbyFarm VirtualMachines as DigitalOcean droplets" \
      org.opencontainers.image.source="https://github.com/hobbyfarm/hf-provisioner-digitalocean" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=builder /out/hf-provisioner-digitalocean /hf-provisioner-digitalocean
USER 65532:65532
ENTRYPOINT ["/hf-provisioner-digitalocean"]
