#!/usr/bin/env bash
# record-fixtures.sh — re-record test/fixtures/inspect/*.json from a REAL
# private Docker Engine (see engine-harness.sh). Run as root.
#
#   test/docker/record-fixtures.sh            # start engine, record, remove containers
#   MA_KEEP_ENGINE=1 test/docker/record-fixtures.sh   # leave the engine running
#
# The engine is left as it was found: if this script started it, it stops it.
# Containers it creates (ma-fixture-*) are removed at the end.
# All values are fake: the env/bind files come from test/fixtures/inspect/sources/.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
OUT="$REPO/test/fixtures/inspect"
H="$HERE/engine-harness.sh"
SRC="${MA_FIXTURE_SRC:-/tmp/mesh-audit-fixtures}"   # host dir for --env-file / bind source
DOCKER_BIN="${MA_DOCKER_CLI:-/usr/bin/docker}"
[[ -x "$DOCKER_BIN" ]] || DOCKER_BIN="$(command -v docker)"

log() { printf 'record-fixtures: %s\n' "$*" >&2; }

started=0
if ! "$H" status >/dev/null 2>&1; then started=1; fi
SOCK="$("$H" start)"
IMAGE="$("$H" image)"
export DOCKER_HOST="unix://$SOCK"
export DOCKER_CONFIG="${MA_DOCKER_DIR:-/tmp/mesh-audit-docker}/cli"
dk() { "$DOCKER_BIN" "$@"; }
api() { curl -sf --unix-socket "$SOCK" "http://localhost$1"; }

NAMES=(ma-fixture-env-file ma-fixture-host-httpd ma-fixture-stopped ma-fixture-published-ports)
cleanup() {
  dk rm -f "${NAMES[@]}" >/dev/null 2>&1 || true
  if (( started )) && [[ -z "${MA_KEEP_ENGINE:-}" ]]; then "$H" stop || true; fi
}
trap cleanup EXIT

# a fresh engine view: no other containers may exist, containers-list.json must list exactly ours
dk rm -f "${NAMES[@]}" >/dev/null 2>&1 || true
others="$(dk ps -aq)"
[[ -z "$others" ]] || { log "engine has other containers ($others); use a private MA_DOCKER_DIR"; exit 1; }

mkdir -p "$SRC/gitea" "$OUT"
cp "$OUT/sources/gitea.env" "$SRC/gitea/gitea.env"
cp "$OUT/sources/app.env" "$SRC/gitea/app.env"
DIG="sha256:$(sha256sum "$SRC/gitea/gitea.env" | cut -d' ' -f1)"

# 127.0.0.1:29999 must be free for the host-network httpd
if (exec 3<>/dev/tcp/127.0.0.1/29999) 2>/dev/null; then log "127.0.0.1:29999 already in use"; exit 1; fi

gitea_args=(
  --env-file "$SRC/gitea/gitea.env"
  --label mesh.module=gitea --label mesh.resource=gitea.server
  --label "mesh.sources=$SRC/gitea/gitea.env" --label "mesh.source-digests=$DIG"
  -v "$SRC/gitea/app.env:/etc/app/app.env:ro"
)

log "a) env-file container (--network none)"
dk run -d --name ma-fixture-env-file --network none "${gitea_args[@]}" "$IMAGE" sleep 3600 >/dev/null

log "b) host-network httpd on 127.0.0.1:29999"
dk run -d --name ma-fixture-host-httpd --network host \
  --label mesh.module=web --label mesh.resource=web.httpd \
  "$IMAGE" httpd -f -p 127.0.0.1:29999 -h /www >/dev/null

log "c) stopped container (exit 3)"
dk run -d --name ma-fixture-stopped --network none \
  --label mesh.module=jobs --label mesh.resource=jobs.migrate \
  "$IMAGE" sh -c 'echo migrated; exit 3' >/dev/null
dk wait ma-fixture-stopped >/dev/null

# wait for the httpd to listen (proves the container really runs)
for _ in $(seq 1 40); do curl -sf -m 1 http://127.0.0.1:29999/index.html >/dev/null && break; sleep 0.25; done
curl -sf -m 1 http://127.0.0.1:29999/index.html >/dev/null || { log "httpd not answering on 127.0.0.1:29999"; exit 1; }

dk inspect ma-fixture-env-file   > "$OUT/env-file-container.json"
dk inspect ma-fixture-host-httpd > "$OUT/host-network-httpd.json"
dk inspect ma-fixture-stopped    > "$OUT/stopped-container.json"
api '/containers/json?all=1' | jq . > "$OUT/containers-list.json"
api '/version'               | jq . > "$OUT/version.json"
api '/info'                  | jq . > "$OUT/info.json"

# e) published ports: no bridge here, so the container is only CREATED (never
# started) with the real -p flags and default network; Config.ExposedPorts and
# HostConfig.PortBindings below are the engine's own. The runtime parts (State,
# paths, NetworkSettings incl. .Ports and the bridge endpoint) are hand-written
# from (a) as a 20.10+ engine shows them for a running bridged container.
log "e) published-ports (created only, then hand-edited)"
dk create --name ma-fixture-published-ports "${gitea_args[@]}" \
  -p 0.0.0.0:8080:80/tcp -p 127.0.0.1:8443:443/tcp -p 5353:53/udp \
  "$IMAGE" sleep 3600 >/dev/null 2>&1
created="$(dk inspect ma-fixture-published-ports)"
NET="$(printf mesh-audit-fake-bridge-network | sha256sum | cut -c1-64)"
EP="$(printf mesh-audit-fake-bridge-endpoint | sha256sum | cut -c1-64)"
jq --indent 4 --slurpfile a "$OUT/env-file-container.json" --arg net "$NET" --arg ep "$EP" '
  ($a[0][0]) as $A | .[0].Id as $id | $A.Id as $aid |
  .[0] |= (
    .Config.AttachStdout = false | .Config.AttachStderr = false
    | .State = $A.State
    | .ResolvConfPath = ($A.ResolvConfPath | gsub($aid; $id))
    | .HostnamePath  = ($A.HostnamePath  | gsub($aid; $id))
    | .HostsPath     = ($A.HostsPath     | gsub($aid; $id))
    | .LogPath       = ($A.LogPath       | gsub($aid; $id))
    | .NetworkSettings = ($A.NetworkSettings
        | .Ports = {
            "443/tcp": [{"HostIp": "127.0.0.1", "HostPort": "8443"}],
            "53/udp":  [{"HostIp": "0.0.0.0", "HostPort": "5353"}, {"HostIp": "::", "HostPort": "5353"}],
            "80/tcp":  [{"HostIp": "0.0.0.0", "HostPort": "8080"}]
          }
        | .EndpointID = $ep | .Gateway = "172.17.0.1" | .IPAddress = "172.17.0.2" | .IPPrefixLen = 16
        | .MacAddress = "02:42:ac:11:00:02"
        | .Networks = { "bridge": (.Networks.none
            | .NetworkID = $net | .EndpointID = $ep | .Gateway = "172.17.0.1"
            | .IPAddress = "172.17.0.2" | .IPPrefixLen = 16 | .MacAddress = "02:42:ac:11:00:02") })
  )' <<<"$created" > "$OUT/published-ports.json"

# sanity: every env value recorded is one of our fake ones
if grep -hoE '"(DATABASE_URL|GITEA__[A-Za-z_]+|APP_[A-Z_]+)=[^"]*"' "$OUT"/*.json | grep -viE 'fake|example\.invalid' ; then
  log "unexpected non-fake env value above"; exit 1
fi
log "recorded into $OUT"
