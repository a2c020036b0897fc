#!/bin/sh
# The scanner in a container, with the host mounted read-only at /host.
#   --pid host        container processes' /proc entries are visible (env, sockets, bind mounts)
#   /:/host:ro        the host's files, read-only; --root /host maps them back to host paths
#   docker.sock       the Engine API; mesh-audit only sends GET requests (ping, version, info, list, inspect),
#                     but a read-only mount does not make the API read-only: trust the image you run
#   /var/lib/mesh-audit  the only writable place: reports and history
exec docker run --rm --pid host --network none \
  -v /:/host:ro \
  -v /var/run/docker.sock:/var/run/docker.sock \
  -v /var/lib/mesh-audit:/var/lib/mesh-audit \
  -v /etc/mesh-audit:/etc/mesh-audit:ro \
  mesh-audit:latest \
  scan --root /host --config /etc/mesh-audit/config.yaml --out /var/lib/mesh-audit --format sarif,json --profile nightly
