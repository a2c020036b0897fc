#!/usr/bin/env bash
# podman-harness.sh — run a PRIVATE Podman service (Docker-compatible API) for mesh-audit tests.
#
# Everything lives under $MA_PODMAN_DIR (default /tmp/mesh-audit-podman):
#   podman.sock       the API socket (what `start` prints)
#   root/ runroot/    podman --root / --runroot (images, containers, their state)
#   tmp/              podman --tmpdir
#   containers.conf   this service's engine settings (the host's are not read)
#   service.log/.pid  the service's log and pid
#
# Usage: podman-harness.sh start|image|stop|purge
#   start   `podman system service --time=0 unix://$MA_PODMAN_DIR/podman.sock` (idempotent); waits
#           until the API answers; prints the socket path on stdout.
#   image   import the fixture image (the same busybox rootfs as engine-harness.sh) with
#           `podman import`, if it is missing. Prints the image name.
#   stop    remove every container of this instance, stop the service. Keeps the image.
#   purge   stop, `podman system reset`, delete $MA_PODMAN_DIR (only that directory).
#
# Settings for this machine kind (Debian 12 podman 4.3, cgroup v1 hybrid, no systemd): cgroupfs
# cgroup manager, file events logger, runc as the runtime (crun 1.8 refuses hybrid cgroups:
# "cgroups in hybrid mode not supported"). Containers need `--ulimit nofile=1024:1024 --ulimit
# nproc=1024:1024` to start here: this service makes them its default (default_ulimits), so a plain
# `docker run` works too (examples/nightly/docker-run.sh in the package test), and engine.ts still
# passes them for an engine it did not start. Networks: only `none` and `host` are used; no bridge,
# no CNI network is ever created.
set -euo pipefail

DIR="${MA_PODMAN_DIR:-/tmp/mesh-audit-podman}"
IMAGE="${MA_DOCKER_IMAGE:-mesh-audit-fixture:1}"
START_TIMEOUT="${MA_PODMAN_START_TIMEOUT:-60}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() { printf 'podman-harness: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

case "$DIR" in
  /*) ;;
  *) DIR="$(pwd)/$DIR" ;;
esac
DIR="${DIR%/}"
[[ "$DIR" =~ ^/[A-Za-z0-9._/-]+$ ]] || die "MA_PODMAN_DIR must be an absolute path of [A-Za-z0-9._/-] only: '$DIR'"
case "$DIR" in
  /|/tmp|/var|/var/lib|/home|/root|/usr|/etc|/run|/work) die "refusing MA_PODMAN_DIR=$DIR" ;;
esac
(( ${#DIR} <= 70 )) || die "MA_PODMAN_DIR too long (${#DIR} > 70 chars; unix socket path limit)"

SOCK="$DIR/podman.sock"
PIDFILE="$DIR/service.pid"
export CONTAINERS_CONF="$DIR/containers.conf"
unset DOCKER_HOST CONTAINER_HOST CONTAINER_CONNECTION
pm() { podman --root "$DIR/root" --runroot "$DIR/runroot" --tmpdir "$DIR/tmp" "$@"; }
pr() { podman --remote --url "unix://$SOCK" "$@"; }
answers() { [[ -S "$SOCK" ]] && pr version >/dev/null 2>&1; }
alive() {
  local pid="$1" st
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  st="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" || return 1
  [[ -n "$st" && "$st" != Z && "$st" != X ]]
}
# the service's pid, if it is alive and its command line names DIR
ours() {
  [[ -s "$PIDFILE" ]] || return 1
  local pid
  pid="$(tr -dc 0-9 < "$PIDFILE")"
  alive "$pid" || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$DIR" || return 1
  echo "$pid"
}

cmd_start() {
  [[ "$(id -u)" == 0 ]] || die "must run as root"
  command -v podman >/dev/null || die "podman missing; apt-get install -y podman uidmap fuse-overlayfs slirp4netns"
  command -v runc >/dev/null || die "runc missing; apt-get install -y runc (comes with docker.io)"
  [[ -x /usr/libexec/podman/catatonit ]] || die "catatonit missing (what --init runs on Podman); apt-get install -y catatonit"
  if answers; then echo "$SOCK"; return 0; fi
  mkdir -p "$DIR/root" "$DIR/runroot" "$DIR/tmp"
  chmod 700 "$DIR"
  cat > "$CONTAINERS_CONF" <<EOF
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$DIR/events.log"
runtime = "runc"
[containers]
netns = "none"
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
EOF
  rm -f "$SOCK"
  log "starting podman system service on $SOCK"
  setsid podman --root "$DIR/root" --runroot "$DIR/runroot" --tmpdir "$DIR/tmp" system service --time=0 "unix://$SOCK" \
    </dev/null >>"$DIR/service.log" 2>&1 &
  echo $! > "$PIDFILE"
  local n=$(( START_TIMEOUT * 4 ))
  until answers; do
    if ! alive "$(cat "$PIDFILE")"; then tail -20 "$DIR/service.log" >&2; die "podman service exited"; fi
    (( n-- > 0 )) || { tail -20 "$DIR/service.log" >&2; cmd_stop; die "podman service did not answer in ${START_TIMEOUT}s"; }
    sleep 0.25
  done
  echo "$SOCK"
}

cmd_image() {
  answers || die "service not running; run '$0 start' first"
  if pr image exists "$IMAGE"; then echo "$IMAGE"; return 0; fi
  local tarfile="$DIR/rootfs.tar"
  bash "$HERE/engine-harness.sh" rootfs "$tarfile"
  log "importing $IMAGE"
  pr import \
    --change 'ENV PATH=/bin' \
    --change 'WORKDIR /' \
    --change 'CMD ["/bin/sh"]' \
    --change 'LABEL org.opencontainers.image.title=mesh-audit-fixture' \
    --message 'mesh-audit busybox fixture (podman import)' \
    "$tarfile" "$IMAGE" >&2
  rm -f "$tarfile"
  echo "$IMAGE"
}

cmd_stop() {
  if answers; then
    local ids
    ids="$(pr ps -aq || true)"
    # shellcheck disable=SC2086
    [[ -z "$ids" ]] || pr rm -f -t 1 $ids >/dev/null 2>&1 || true
  fi
  local pid
  if pid="$(ours)"; then
    log "stopping podman service (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    local n=40
    while (( n-- > 0 )) && alive "$pid"; do sleep 0.25; done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$SOCK" "$PIDFILE"
}

cmd_purge() {
  cmd_stop
  [[ -d "$DIR" ]] || return 0
  pm system reset --force >/dev/null 2>&1 || true
  local m
  for m in $(awk -v d="$DIR" 'index($5, d "/") == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "WARNING: could not unmount $m"
  done
  rm -rf --one-file-system -- "$DIR"
  log "removed $DIR"
}

case "${1:-}" in
  start) cmd_start ;;
  image) cmd_image ;;
  stop)  cmd_stop ;;
  purge) cmd_purge ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
