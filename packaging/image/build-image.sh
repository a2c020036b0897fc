#!/bin/sh
# Builds the image mesh-audit:<version> (and :latest) from the root file system `npm run package`
# writes (dist/package/mesh-audit-image-rootfs.tar: the single executable and its shared libraries).
# No base image and no registry: `docker import` of that tar. Uses the engine docker is pointed at
# (DOCKER_HOST or the default socket).
#   usage: packaging/image/build-image.sh [rootfs.tar] [version]
set -eu
here=$(dirname "$0")
rootfs=${1:-$here/../../dist/package/mesh-audit-image-rootfs.tar}
version=${2:-$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$here/../../package.json" | head -n 1)}
docker import \
  --change 'ENTRYPOINT ["/usr/bin/mesh-audit"]' \
  --change 'CMD ["--help"]' \
  --change 'ENV HOME=/root' \
  --change 'WORKDIR /var/lib/mesh-audit' \
  --change "LABEL org.opencontainers.image.title=mesh-audit org.opencontainers.image.version=$version" \
  "$rootfs" "mesh-audit:$version" >/dev/null
docker tag "mesh-audit:$version" mesh-audit:latest
echo "mesh-audit:$version mesh-audit:latest"
