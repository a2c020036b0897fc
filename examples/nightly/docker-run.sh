#!/bin/sh
# The scanner in a container (image mesh-audit:latest, built by packaging/image/build-image.sh from
# `npm run package`), with the host mounted read-only at /host.
#   --pid host        container processes' /proc entries are visible (env, sockets, bind mounts)
#   --cap-add SYS_PTRACE  the kernel lets a process read another's /proc/PID/fd and environ only when it
#                     holds every capability the other holds, or this one: without it, the host's daemons
#                     (sshd, …) cannot be named as the holders of their sockets, and the run is incomplete.
#                     mesh-audit never traces a process; the Docker socket it is given is root already.
#   /:/host:ro        the host's files, read-only; --root /host maps them back to host paths
#   docker.sock       the Engine API; mesh-audit only sends GET requests (ping, version, info, list, inspect),
#                     but a read-only mount does not make the API read-only: trust the image you run
#   /var/lib/mesh-audit  writable: reports and history
#   /var/lib/prometheus/node-exporter  writable: node_exporter's textfile folder (Debian's default),
#                     where --prom-file writes the metrics the shipped alerting reads
# The scan runs as mesh-audit.service does (--baseline auto, --fail-on-new, --prom-file, --quiet --only-new).
# Arguments are added to the scan's (e.g. --hostname web-1). The environment may override the socket
# (DOCKER_SOCKET), the config folder (MESH_AUDIT_CONFIG_DIR), the output folder (MESH_AUDIT_OUT), the
# textfile folder (MESH_AUDIT_TEXTFILE_DIR) and the image (MESH_AUDIT_IMAGE); `docker` itself follows
# DOCKER_HOST. MESH_AUDIT_EXCLUDE and MESH_AUDIT_INCLUDE (scope selectors) are passed on when set.
set -eu
# The container has a name of its own and is removed on the way out, rather than `--rm`: with `--rm`,
# Podman's Docker-compatible API (Debian 12's podman 4.3; fixed in 4.6, containers/podman#18889)
# loses the container's exit code and `docker run` exits 0 — and the scan's exit code (1 findings,
# 3 incomplete) is what the nightly job alerts on.
name="mesh-audit-scan-$$"
trap 'docker rm -f "$name" >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
status=0
docker run --name "$name" --pid host --network none --cap-add SYS_PTRACE \
  -e MESH_AUDIT_EXCLUDE -e MESH_AUDIT_INCLUDE \
  -v /:/host:ro \
  -v "${DOCKER_SOCKET:-/var/run/docker.sock}:/var/run/docker.sock" \
  -v "${MESH_AUDIT_OUT:-/var/lib/mesh-audit}:/var/lib/mesh-audit" \
  -v "${MESH_AUDIT_TEXTFILE_DIR:-/var/lib/prometheus/node-exporter}:/var/lib/prometheus/node-exporter" \
  -v "${MESH_AUDIT_CONFIG_DIR:-/etc/mesh-audit}:/etc/mesh-audit:ro" \
  "${MESH_AUDIT_IMAGE:-mesh-audit:latest}" \
  scan --root /host --docker-host unix:///var/run/docker.sock --config /etc/mesh-audit/config.yaml \
  --out /var/lib/mesh-audit --format text,sarif,json --profile nightly --baseline auto --fail-on-new \
  --prom-file /var/lib/prometheus/node-exporter/mesh-audit.prom --quiet --only-new "$@" || status=$?
exit "$status"
