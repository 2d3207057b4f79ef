# syntax=docker/dockerfile:1
# The mcpspec image: the static binary and the CA certificates (for HTTPS targets and
# remote packs), nothing else. For HTTP targets, and as the source of the binary in an
# image of your own: `COPY --from=ghcr.io/mcpspec/mcpspec:0.1.0 /mcpspec /usr/local/bin/`.
#
#   docker build --build-arg MCPSPEC_COMMIT=$(git rev-parse --short=12 HEAD) -t mcpspec .
#       compiles (the `bin` stage runs scripts/build-static);
#   docker buildx build --build-context bin=dist/image --platform linux/amd64,linux/arm64 .
#       the release workflow: the `bin` stage replaced by the binaries it built and tested
#       (dist/image/amd64/mcpspec, dist/image/arm64/mcpspec); nothing is compiled.
ARG RUST_VERSION=1.89

FROM rust:${RUST_VERSION}-bookworm AS build
# `.git` is not sent (.dockerignore): the commit that `mcpspec --version` prints.
ARG MCPSPEC_COMMIT=unknown
ARG TARGETARCH
WORKDIR /src
COPY . .
RUN MCPSPEC_COMMIT="$MCPSPEC_COMMIT" scripts/build-static \
 && mkdir -p "/out/$TARGETARCH" \
 && cp target/*-linux-gnu/release/mcpspec "/out/$TARGETARCH/mcpspec"

FROM scratch AS bin
COPY --from=build /out/ /

# Certificates are the same for every architecture: taken on the build machine's.
FROM --platform=$BUILDPLATFORM debian:bookworm-slim AS certs
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*

FROM scratch
ARG TARGETARCH
COPY --from=certs /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# An empty /tmp and a cache folder: scratch has no file system of its own.
COPY --from=certs --chmod=1777 /tmp /tmp
COPY --from=certs --chmod=1777 /tmp /cache
COPY --from=bin --chmod=755 /${TARGETARCH}/mcpspec /mcpspec
ENV MCPSPEC_CACHE_DIR=/cache
WORKDIR /work
# Not root: an unprivileged user of no name (scratch has no /etc/passwd). A job that writes
# reports into a mounted folder runs it as the folder's owner: `--user "$(id -u):$(id -g)"`.
USER 65532:65532
# The repository the image comes from (Cargo.toml's `repository`; tests/packaging.rs
# checks that they agree): registries link the image to it.
LABEL org.opencontainers.image.source="https://github.com/mcpspec/mcpspec" \
      org.opencontainers.image.description="mcpspec: a declarative test engine for MCP servers (the static binary)" \
      org.opencontainers.image.licenses="Apache-2.0"
ENTRYPOINT ["/mcpspec"]
CMD ["--help"]
