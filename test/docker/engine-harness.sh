#!/usr/bin/env bash
# engine-harness.sh — run a PRIVATE Docker Engine for mesh-audit tests.
#
# Everything lives under $MA_DOCKER_DIR (default /tmp/mesh-audit-docker):
#   docker.sock            the Docker API socket (what `start` prints)
#   containerd/            our own containerd (socket, root, state)
#   data/ exec/            dockerd --data-root / --exec-root
#   daemon.json            private dockerd config (so /etc/docker/daemon.json is ignored)
#   cli/                   DOCKER_CONFIG for the client calls made here
#   *.log *.pid            logs and pid files
#
# The engine never creates a bridge network (--bridge none, no iptables,
# no NAT): containers can only use `--network none` or `--network host`.
#
# Usage: engine-harness.sh start|image|stop|status|env|purge|rootfs TAR
#   start   start containerd + dockerd (idempotent), wait until the API
#           answers (max $MA_DOCKER_START_TIMEOUT s, default 60), print the
#           socket path on stdout.
#   image   build $MA_DOCKER_IMAGE (default mesh-audit-fixture:1) with
#           `docker import` from a busybox-static rootfs, if it is missing.
#           Prints the image name on stdout.
#   rootfs TAR  write the fixture's rootfs tar to TAR (no engine needed).
#   stop    `docker stop -t 1` the running containers, stop dockerd and
#           containerd, kill any leftover shim/container of THIS engine,
#           unmount leftovers under $MA_DOCKER_DIR. Keeps the data (image and
#           stopped containers survive a restart). Idempotent.
#   status  exit 0 and print the socket if the engine answers, else exit 1.
#   env     print `export DOCKER_HOST=unix://...` (for eval).
#   purge   stop, then delete $MA_DOCKER_DIR (only that directory).
#
# Environment:
#   MA_DOCKER_DIR            state dir (default /tmp/mesh-audit-docker, <= 70 chars)
#   MA_DOCKER_IMAGE          fixture image name (default mesh-audit-fixture:1)
#   MA_DOCKER_START_TIMEOUT  seconds to wait for the API (default 60)
#   MA_DOCKER_STOP_TIMEOUT   `docker stop -t` used by `stop` (default 1)
#   MA_DOCKER_STORAGE_DRIVER force a driver, e.g. vfs (default: dockerd picks; overlay2 here)
#   MA_DOCKER_CGROUP_PARENT  cgroup parent (default /mesh-audit-docker)
#   MA_DOCKER_CLI            docker client (default /usr/bin/docker, else PATH)
#   MA_BUSYBOX               static busybox (default /bin/busybox from busybox-static)
#
# Needs root and the Debian packages docker.io (dockerd, containerd, runc)
# and busybox-static. It installs nothing.
#   eval "$(test/docker/engine-harness.sh env)"; docker run --rm --network none mesh-audit-fixture:1 echo hi
set -euo pipefail

DIR="${MA_DOCKER_DIR:-/tmp/mesh-audit-docker}"
IMAGE="${MA_DOCKER_IMAGE:-mesh-audit-fixture:1}"
START_TIMEOUT="${MA_DOCKER_START_TIMEOUT:-60}"
BUSYBOX="${MA_BUSYBOX:-/bin/busybox}"
STORAGE_DRIVER="${MA_DOCKER_STORAGE_DRIVER:-}"   # empty: let dockerd choose (overlay2 here)
CGROUP_PARENT="${MA_DOCKER_CGROUP_PARENT:-/mesh-audit-docker}"

log() { printf 'engine-harness: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ---- sanity on DIR ---------------------------------------------------------
case "$DIR" in
  /*) ;;
  *) DIR="$(pwd)/$DIR" ;;
esac
DIR="${DIR%/}"
[[ "$DIR" =~ ^/[A-Za-z0-9._/-]+$ ]] || die "MA_DOCKER_DIR must be an absolute path of [A-Za-z0-9._/-] only: '$DIR'"
case "$DIR" in
  /|/tmp|/var|/var/lib|/home|/root|/usr|/etc|/run|/work) die "refusing MA_DOCKER_DIR=$DIR" ;;
esac
# unix socket paths are limited to 107 bytes
(( ${#DIR} <= 70 )) || die "MA_DOCKER_DIR too long (${#DIR} > 70 chars; unix socket path limit)"

SOCK="$DIR/docker.sock"
CTRD_DIR="$DIR/containerd"
CTRD_SOCK="$CTRD_DIR/containerd.sock"
CTRD_PID="$DIR/containerd.pid"
DOCKERD_PID="$DIR/docker.pid"
CTRD_LOG="$DIR/containerd.log"
DOCKERD_LOG="$DIR/dockerd.log"

# the client that ships with dockerd if present (exact API match), else PATH
if [[ -n "${MA_DOCKER_CLI:-}" ]]; then DOCKER_BIN="$MA_DOCKER_CLI"
elif [[ -x /usr/bin/docker ]]; then DOCKER_BIN=/usr/bin/docker
else DOCKER_BIN="$(command -v docker || true)"; fi

unset DOCKER_HOST DOCKER_CONTEXT DOCKER_TLS_VERIFY DOCKER_CERT_PATH
export DOCKER_CONFIG="$DIR/cli"

dk() { "$DOCKER_BIN" -H "unix://$SOCK" "$@"; }

# ---- process helpers -------------------------------------------------------
# alive PID: process exists and is not a zombie
alive() {
  local pid="$1" st
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  st="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" || return 1
  [[ -n "$st" && "$st" != Z && "$st" != X ]]
}
# ours PIDFILE: print the pid if it is alive and its cmdline mentions DIR
ours() {
  local f="$1" pid
  [[ -s "$f" ]] || return 1
  pid="$(tr -dc 0-9 < "$f")"
  alive "$pid" || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$DIR" || return 1
  echo "$pid"
}
wait_gone() { # PID SECONDS
  local pid="$1" n=$(( $2 * 4 ))
  while (( n-- > 0 )); do alive "$pid" || return 0; sleep 0.25; done
  ! alive "$pid"
}
term_then_kill() { # PID SECONDS NAME
  local pid="$1" secs="$2" name="$3"
  alive "$pid" || return 0
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_gone "$pid" "$secs"; then
    log "$name did not exit in ${secs}s; SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$pid" 5 || log "WARNING: $name (pid $pid) still alive"
  fi
}
answers() { [[ -S "$SOCK" ]] && [[ -n "$DOCKER_BIN" ]] && dk version >/dev/null 2>&1; }

need_root() { [[ "$(id -u)" == 0 ]] || die "must run as root"; }
need_bins() {
  local b miss=()
  for b in dockerd containerd runc containerd-shim-runc-v2; do
    command -v "$b" >/dev/null 2>&1 || miss+=("$b")
  done
  [[ -n "$DOCKER_BIN" ]] || miss+=(docker)
  (( ${#miss[@]} == 0 )) || die "missing ${miss[*]}; install with: apt-get update && apt-get install -y docker.io busybox-static"
}

# ---- start -----------------------------------------------------------------
write_configs() {
  mkdir -p "$DIR" "$CTRD_DIR" "$DIR/data" "$DIR/exec" "$DOCKER_CONFIG"
  chmod 0711 "$DIR"
  cat > "$CTRD_DIR/config.toml" <<EOF
version = 2
root = "$CTRD_DIR/root"
state = "$CTRD_DIR/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CTRD_SOCK"
[ttrpc]
  address = "$CTRD_SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
EOF
  # Options without a command-line flag go here; everything else is a flag.
  # A private file also keeps a host /etc/docker/daemon.json out of the way.
  cat > "$DIR/daemon.json" <<EOF
{
  "deprecated-key-path": "$DIR/key.json"
}
EOF
}

start_containerd() {
  local pid
  if pid="$(ours "$CTRD_PID")"; then
    log "containerd already running (pid $pid)"
    return 0
  fi
  rm -f "$CTRD_PID" "$CTRD_SOCK" "$CTRD_SOCK.ttrpc"
  log "starting containerd"
  ( cd "$DIR" && exec setsid containerd --config "$CTRD_DIR/config.toml" </dev/null >>"$CTRD_LOG" 2>&1 ) &
  pid=$!
  echo "$pid" > "$CTRD_PID"
  local n=$(( 20 * 4 ))
  while (( n-- > 0 )); do
    alive "$pid" || { tail -n 20 "$CTRD_LOG" >&2; die "containerd exited during start (log: $CTRD_LOG)"; }
    [[ -S "$CTRD_SOCK" ]] && return 0
    sleep 0.25
  done
  tail -n 20 "$CTRD_LOG" >&2
  die "containerd socket $CTRD_SOCK did not appear in 20s"
}

start_dockerd() {
  local pid
  if pid="$(ours "$DOCKERD_PID")"; then
    log "dockerd already running (pid $pid)"
    return 0
  fi
  rm -f "$DOCKERD_PID" "$SOCK"
  local args=(
    --config-file "$DIR/daemon.json"
    --host "unix://$SOCK"
    --data-root "$DIR/data"
    --exec-root "$DIR/exec"
    --pidfile "$DOCKERD_PID"
    --containerd "$CTRD_SOCK"
    --bridge none
    --iptables=false
    --ip6tables=false
    --ip-masq=false
    --ip-forward=false
    --userland-proxy=false
    --cgroup-parent "$CGROUP_PARENT"
    --shutdown-timeout 3
    --log-driver json-file
  )
  [[ -n "$STORAGE_DRIVER" ]] && args+=(--storage-driver "$STORAGE_DRIVER")
  log "starting dockerd"
  ( cd "$DIR" && exec setsid dockerd "${args[@]}" </dev/null >>"$DOCKERD_LOG" 2>&1 ) &
  pid=$!
  # dockerd writes its own pidfile, but only once it is initialised; record
  # the pid now so that a failed start can still be stopped.
  echo "$pid" > "$DOCKERD_PID.launch"
}

cmd_start() {
  need_root
  need_bins
  if answers && ours "$DOCKERD_PID" >/dev/null && ours "$CTRD_PID" >/dev/null; then
    log "engine already running"
    echo "$SOCK"
    return 0
  fi
  write_configs
  # containerd gone but dockerd alive: dockerd's gRPC client backs off for a
  # long time before it reconnects, so restart dockerd along with containerd.
  local dpid
  if ! ours "$CTRD_PID" >/dev/null && dpid="$(ours "$DOCKERD_PID")"; then
    log "containerd is not running; restarting dockerd too"
    term_then_kill "$dpid" 40 dockerd
  fi
  start_containerd
  # after a dockerd crash its containers keep running under their shims; a
  # new dockerd (no live-restore) would stop them with a 10 s timeout each.
  ours "$DOCKERD_PID" >/dev/null || kill_orphans || true
  start_dockerd
  local t0=$SECONDS pid
  pid="$(cat "$DOCKERD_PID.launch" 2>/dev/null || true)"
  while (( SECONDS - t0 < START_TIMEOUT )); do
    if answers; then
      rm -f "$DOCKERD_PID.launch"
      log "engine ready after $(( SECONDS - t0 ))s ($(dk info --format '{{.Driver}}' 2>/dev/null) storage, $(dk info --format '{{.CgroupDriver}} cgroup v{{.CgroupVersion}}' 2>/dev/null))"
      echo "$SOCK"
      return 0
    fi
    if [[ -n "$pid" ]] && ! alive "$pid" && ! ours "$DOCKERD_PID" >/dev/null; then
      tail -n 30 "$DOCKERD_LOG" >&2
      cmd_stop >/dev/null 2>&1 || true
      die "dockerd exited during start (log: $DOCKERD_LOG)"
    fi
    sleep 0.25
  done
  tail -n 30 "$DOCKERD_LOG" >&2
  cmd_stop >/dev/null 2>&1 || true
  die "engine did not answer within ${START_TIMEOUT}s (log: $DOCKERD_LOG)"
}

# ---- image -----------------------------------------------------------------
# rootfs TAR: the fixture's busybox-static rootfs as a tar at TAR (also what the Podman harness imports)
cmd_rootfs() {
  local tarfile="$1"
  [[ "$tarfile" == /* ]] || die "rootfs: an absolute path for the tar, please"
  [[ -x "$BUSYBOX" ]] || die "$BUSYBOX not found; apt-get install -y busybox-static"
  if ldd "$BUSYBOX" >/dev/null 2>&1; then
    die "$BUSYBOX is dynamically linked; install busybox-static (or set MA_BUSYBOX to a static busybox)"
  fi
  local build rootfs
  build="$(mktemp -d "${TMPDIR:-/tmp}/ma-rootfs-XXXXXX")"
  rootfs="$build/rootfs"
  mkdir -p "$rootfs"/{bin,etc,tmp,proc,sys,dev,www,root}
  chmod 1777 "$rootfs/tmp"
  cp "$BUSYBOX" "$rootfs/bin/busybox"
  local a
  for a in sh sleep httpd cat env ls ps id true false echo kill ln mv cp rm mkdir stat wc nc; do
    ln -s busybox "$rootfs/bin/$a"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$rootfs/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' > "$rootfs/etc/group"
  printf 'mesh-audit fixture\n' > "$rootfs/www/index.html"
  tar --numeric-owner --owner=0 --group=0 --sort=name --mtime=@0 -C "$rootfs" -cf "$tarfile" .
  rm -rf --one-file-system "$build"
}

cmd_image() {
  need_root
  answers || die "engine not running; run '$0 start' first"
  if dk image inspect "$IMAGE" >/dev/null 2>&1; then
    log "image $IMAGE already present"
    echo "$IMAGE"
    return 0
  fi
  local tarfile="$DIR/rootfs.tar"
  cmd_rootfs "$tarfile"
  log "importing $IMAGE"
  dk import \
    --change 'ENV PATH=/bin' \
    --change 'WORKDIR /' \
    --change 'CMD ["/bin/sh"]' \
    --change 'LABEL org.opencontainers.image.title=mesh-audit-fixture' \
    -m 'mesh-audit busybox fixture (docker import)' \
    "$tarfile" "$IMAGE" >&2
  rm -f "$tarfile"
  echo "$IMAGE"
}

# ---- stop ------------------------------------------------------------------
our_mounts() { # mount points under DIR, deepest first
  awk -v d="$DIR" '$5 == d || index($5, d "/") == 1 {print $5}' /proc/self/mountinfo | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-
}
our_shims() {
  local p
  for p in $(pgrep -f 'containerd-shim' 2>/dev/null || true); do
    tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -qF -- "-address $CTRD_SOCK " && echo "$p"
  done
  return 0
}
descendants() {
  local c
  for c in $(pgrep -P "$1" 2>/dev/null || true); do descendants "$c"; echo "$c"; done
}

# kill containers (and their shims) of this engine's containerd; used when no
# dockerd of ours runs (after a crash). Returns 0 if it found any.
kill_orphans() {
  local s p found=1
  for s in $(our_shims); do
    found=0
    log "killing orphaned container(s) of shim $s"
    for p in $(descendants "$s"); do kill -KILL "$p" 2>/dev/null || true; done
    sleep 0.5
    term_then_kill "$s" 5 "containerd-shim"
  done
  return $found
}

cmd_stop() {
  need_root
  local pid did=0
  # 0. stop running containers with a short timeout first: on SIGTERM dockerd
  #    would wait each container's own StopTimeout (10 s default), and
  #    `sleep` as PID 1 ignores SIGTERM.
  if answers; then
    local ids
    ids="$(dk ps -q 2>/dev/null || true)"
    if [[ -n "$ids" ]]; then
      log "stopping running containers: ${ids//$'\n'/ }"
      # shellcheck disable=SC2086
      dk stop -t "${MA_DOCKER_STOP_TIMEOUT:-1}" $ids >/dev/null 2>&1 || true
    fi
  fi
  # 1. dockerd: SIGTERM makes it stop what is left, unmount and exit.
  for f in "$DOCKERD_PID" "$DOCKERD_PID.launch"; do
    if pid="$(ours "$f")"; then did=1; term_then_kill "$pid" 40 dockerd; fi
  done
  # 2. containers left behind (only if dockerd died hard): kill them via their shims.
  kill_orphans && did=1
  # 3. containerd
  if pid="$(ours "$CTRD_PID")"; then did=1; term_then_kill "$pid" 20 containerd; fi
  # 4. leftover mounts under DIR (overlay merged dirs, netns files, data-root bind)
  local m
  for m in $(our_mounts); do
    did=1
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "WARNING: could not unmount $m"
  done
  rm -f "$DOCKERD_PID" "$DOCKERD_PID.launch" "$CTRD_PID" "$SOCK" "$CTRD_SOCK" "$CTRD_SOCK.ttrpc"
  if (( did )); then log "engine stopped"; else log "engine was not running"; fi
}

cmd_purge() {
  cmd_stop
  [[ -d "$DIR" ]] || { log "$DIR does not exist"; return 0; }
  if [[ -n "$(our_mounts)" ]]; then die "mounts remain under $DIR; not deleting"; fi
  rm -rf --one-file-system -- "$DIR"
  log "removed $DIR"
}

cmd_status() {
  if answers; then
    echo "$SOCK"
    dk version --format 'server {{.Server.Version}} API {{.Server.APIVersion}} (min {{.Server.MinAPIVersion}})' >&2 || true
    return 0
  fi
  log "engine not running ($SOCK)"
  return 1
}

case "${1:-}" in
  start)  cmd_start ;;
  image)  cmd_image ;;
  rootfs) cmd_rootfs "${2:?rootfs TAR}" ;;
  stop)   cmd_stop ;;
  purge)  cmd_purge ;;
  status) cmd_status ;;
  env)    echo "export DOCKER_HOST=unix://$SOCK" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
